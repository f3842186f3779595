//===- UserChunks.h - A program's user buffers as its collective sees them -===//
//
// Where each rank's input chunks start out and which slots are its output
// chunks, with the collective's aliasing in place (docs/language.md): for
// allreduce, broadcast, reduce and alltoall input *is* output; allgather's
// and gather's input@r[i] is output@r[r*K + i]; reducescatter's and
// scatter's output@r[j] is input@r[r*K + j]. mscl-check-collective and
// translation validation both read the program through it.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_LIB_VERIFICATION_USERCHUNKS_H
#define MSCL_LIB_VERIFICATION_USERCHUNKS_H

#include "Evaluation.h"
#include "ProgramModel.h"

namespace mscl::verify {

struct UserChunks {
  CollectiveKind kind = CollectiveKind::custom;
  int64_t ranks = 0, inChunks = 0, outChunks = 0, root = 0;
  bool inplace = false;
  int inBuffer = -1, outBuffer = -1;

  /// Reads the program's shape; fails when its chunk counts do not fit its
  /// collective, reporting why at the program when `report`.
  static mlir::FailureOr<UserChunks> get(ProgramOp program,
                                         const ProgramModel &model,
                                         bool report = true);

  int64_t inputSlot(const ProgramModel &model, int64_t r, int64_t i) const;
  int64_t outputSlot(const ProgramModel &model, int64_t r, int64_t j) const;
  /// Every rank's input chunks, for an Evaluation.
  std::vector<InputChunk> inputs(const ProgramModel &model) const;
};

} // namespace mscl::verify

#endif // MSCL_LIB_VERIFICATION_USERCHUNKS_H
