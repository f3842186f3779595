//===- OutOfLine.h - When generated kernels call their loops ---*- C++ -*-===//
//
// The device library can inline every loop (data loops, packet reads, and
// the waits, FIFO pushes and flushes of synchronisation) or keep one copy
// of each and call it (MSCCLC_OUTLINE_OPS). Inlined, each costs ptxas tens
// of milliseconds: 2PA-HB with 32 instances took 16 s of NVRTC on the GPU
// host, 1.8 s outlined; an 8-rank all-gather over port channels with 8
// instances (288 port operations and waits, 8 copies) 7.9 s, 1.1 s
// outlined. A call costs latency that small kernels feel, so those keep
// every loop inline.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_BACKEND_OUTOFLINE_H
#define MSCCLC_LIB_BACKEND_OUTOFLINE_H

#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace mscclc {
namespace backend {

/// Above this many data operations in one kernel, loops go out of line.
constexpr int64_t kOutlineDataOps = 8;
/// Above this many operations with loops of any kind, too: only kernels of
/// several instances have that many (the stdlib's 1-instance kernels have
/// at most 50 at 8 ranks, whose latency was tuned inline).
constexpr int64_t kOutlineLoopOps = 64;

/// The largest counts over a translation unit's kernels.
struct OutliningCounts {
  int64_t maxDataOps = 0;
  int64_t maxLoopOps = 0;
};

/// Writes the choice for a translation unit (nothing when its loops stay
/// inline). A -DMSCCLC_OUTLINE_OPS given to NVRTC still wins.
inline void writeOutliningChoice(llvm::raw_ostream &os,
                                 const OutliningCounts &counts) {
  if (counts.maxDataOps <= kOutlineDataOps &&
      counts.maxLoopOps <= kOutlineLoopOps)
    return;
  os << "// " << counts.maxDataOps << " data operations and "
     << counts.maxLoopOps << " operations with loops in a kernel: loops out "
     << "of line, for compile time.\n"
     << "#ifndef MSCCLC_OUTLINE_OPS\n#define MSCCLC_OUTLINE_OPS 1\n#endif\n";
}

} // namespace backend
} // namespace mscclc

#endif // MSCCLC_LIB_BACKEND_OUTOFLINE_H
