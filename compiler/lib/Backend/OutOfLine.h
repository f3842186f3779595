//===- OutOfLine.h - When generated kernels call their data loops -*- C++ -*-===//
//
// The device library can inline every data loop (elementwise, packet
// reads) or keep one copy of each and call it (MSCCLC_OUTLINE_OPS).
// Inlined, each data operation costs ptxas tens of milliseconds (2PA-HB
// with 32 instances: 16 s of NVRTC on the GPU host, 1.8 s outlined), while
// a call costs about a microsecond of latency in small kernels, where
// inlining stays.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_BACKEND_OUTOFLINE_H
#define MSCCLC_LIB_BACKEND_OUTOFLINE_H

#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace mscclc {
namespace backend {

/// Above this many data operations in one kernel, data loops go out of line.
constexpr int64_t kOutlineDataOps = 8;

/// Writes the choice for a translation unit whose largest kernel has
/// `maxDataOps` data operations (nothing when they stay inline). A
/// -DMSCCLC_OUTLINE_OPS given to NVRTC still wins.
inline void writeOutliningChoice(llvm::raw_ostream &os, int64_t maxDataOps) {
  if (maxDataOps <= kOutlineDataOps)
    return;
  os << "// " << maxDataOps << " data operations in a kernel: data loops "
     << "out of line, for compile time.\n"
     << "#ifndef MSCCLC_OUTLINE_OPS\n#define MSCCLC_OUTLINE_OPS 1\n#endif\n";
}

} // namespace backend
} // namespace mscclc

#endif // MSCCLC_LIB_BACKEND_OUTOFLINE_H
