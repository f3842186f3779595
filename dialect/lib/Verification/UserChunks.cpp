//===- UserChunks.cpp - A program's user buffers as its collective sees them -===//

#include "UserChunks.h"

#include "mlir/IR/Diagnostics.h"
#include "mscclc/floor/Shape.h"

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

FailureOr<UserChunks> UserChunks::get(ProgramOp program,
                                      const ProgramModel &model,
                                      bool report) {
  UserChunks u;
  u.kind = program.getCollective();
  u.ranks = model.ranks;
  u.inChunks = static_cast<int64_t>(program.getInputChunks());
  u.outChunks = static_cast<int64_t>(program.getOutputChunks());
  u.root = program.getRootAttr() ? program.getRootAttr().getInt() : 0;
  u.inplace = program.getInplace();
  StringRef name = stringifyCollectiveKind(u.kind);
  bool shapeOk =
      mscclc::shapeFits(toFloor(u.kind), u.ranks, u.inChunks, u.outChunks);
  if (!report && (!shapeOk || (hasRoot(u.kind) &&
                               (u.root < 0 || u.root >= u.ranks))))
    return failure();
  if (!shapeOk)
    return program.emitError()
           << "cannot state the " << name
           << " postcondition: input_chunks = " << u.inChunks
           << " and output_chunks = " << u.outChunks << " do not fit "
           << (name.starts_with("a") ? "an " : "a ") << name << " over "
           << u.ranks << " ranks";
  if (hasRoot(u.kind) && (u.root < 0 || u.root >= u.ranks))
    return program.emitError()
           << name << " root " << u.root << " is outside 0.." << u.ranks - 1;
  auto find = [&](StringRef buffer) {
    auto it = model.bufferIndex.find(buffer);
    return it == model.bufferIndex.end() ? -1 : it->second;
  };
  if (!u.inplace) {
    u.inBuffer = find("input");
    u.outBuffer = find("output");
  } else {
    // The one declared user buffer is both; its size is the larger view.
    u.inBuffer = u.outBuffer =
        find("output") >= 0 ? find("output") : find("input");
    int64_t want = u.kind == CollectiveKind::allgather ||
                           u.kind == CollectiveKind::gather
                       ? u.outChunks
                       : u.inChunks;
    if (u.inBuffer >= 0 && model.buffers[u.inBuffer].chunks != want && !report)
      return failure();
    if (u.inBuffer >= 0 && model.buffers[u.inBuffer].chunks != want)
      return program.emitError()
             << "in-place " << name << ": the user buffer has "
             << model.buffers[u.inBuffer].chunks << " chunks, expected "
             << want;
  }
  // The program verifier requires @input or @output (both out of place).
  assert(u.inBuffer >= 0 && u.outBuffer >= 0 && "a verified program has them");
  return u;
}

int64_t UserChunks::inputSlot(const ProgramModel &model, int64_t r,
                              int64_t i) const {
  if (inplace &&
      (kind == CollectiveKind::allgather || kind == CollectiveKind::gather))
    return model.slot(r, inBuffer, r * inChunks + i);
  return model.slot(r, inBuffer, i);
}

int64_t UserChunks::outputSlot(const ProgramModel &model, int64_t r,
                               int64_t j) const {
  if (inplace && (kind == CollectiveKind::reducescatter ||
                  kind == CollectiveKind::scatter))
    return model.slot(r, outBuffer, r * outChunks + j);
  return model.slot(r, outBuffer, j);
}

std::vector<InputChunk> UserChunks::inputs(const ProgramModel &model) const {
  std::vector<InputChunk> out;
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < inChunks; ++i)
      out.push_back({inputSlot(model, r, i), r, i});
  return out;
}
