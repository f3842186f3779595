//===- TcpStaging.h - GPU memory behind the TCP transport -----*- C++ -*-===//
//
// The StagingBackend of TcpTransport.h for GPU memory: pinned host slots
// (cudaHostAlloc) and copiers on CUDA streams, whose tickets are events
// recorded after each copy and whose stores are stream memory writes
// (cuStreamWriteValue64), so a signal lands after the copies queued before
// it on the same stream.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_TCPSTAGING_H
#define MSCCLC_RUNTIME_TCPSTAGING_H

#include "mscclc/runtime/TcpTransport.h"

#include <memory>

namespace mscclc::rt {

/// Staging for the GPU `device`; copiers made without a stream get a
/// non-blocking one of their own.
std::shared_ptr<StagingBackend> cudaStagingBackend(int device);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_TCPSTAGING_H
