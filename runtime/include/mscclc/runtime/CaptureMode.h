//===- CaptureMode.h - Set-up calls that CUDA graph capture must allow ----===//
//
// An application may be capturing a CUDA graph (PyTorch captures in
// cudaStreamCaptureModeGlobal, which forbids every thread "unsafe" calls
// such as cudaMalloc) when a collective's first call sets up its buffers,
// or when a watchdog thread polls for errors; the runtime's own set-up
// threads (a group's) start in global mode too. None of those calls touch
// the capturing stream, so, as NCCL does, the thread makes them in relaxed
// mode for the guard's lifetime.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_CAPTUREMODE_H
#define MSCCLC_RUNTIME_CAPTUREMODE_H

#include "mscclc/runtime/Cuda.h"

namespace mscclc::rt {

class RelaxedCapture {
public:
  RelaxedCapture() { (void)cudaThreadExchangeStreamCaptureMode(&previous_); }
  ~RelaxedCapture() { (void)cudaThreadExchangeStreamCaptureMode(&previous_); }
  RelaxedCapture(const RelaxedCapture &) = delete;
  RelaxedCapture &operator=(const RelaxedCapture &) = delete;

private:
  cudaStreamCaptureMode previous_ = cudaStreamCaptureModeRelaxed;
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_CAPTUREMODE_H
