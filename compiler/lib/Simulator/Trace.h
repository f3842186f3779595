//===- Trace.h - Chrome trace-event output --------------------*- C++ -*-===//
#ifndef MSCCLC_LIB_SIMULATOR_TRACE_H
#define MSCCLC_LIB_SIMULATOR_TRACE_H

#include "Machine.h"

namespace mscclc {
namespace sim {

/// Writes `slices` as Chrome trace-event JSON. Returns an error message or
/// an empty string.
std::string writeTrace(llvm::StringRef path, const Model &model,
                       llvm::ArrayRef<TraceSlice> slices,
                       llvm::StringRef title, double estimate,
                       bool truncated);

} // namespace sim
} // namespace mscclc

#endif // MSCCLC_LIB_SIMULATOR_TRACE_H
