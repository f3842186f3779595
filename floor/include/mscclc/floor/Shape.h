//===- Shape.h - A collective's buffer sizes and in-place offsets -------===//
//
// The one definition of a collective's shape, from the rows of
// Collectives.def: the elements of its send and receive buffers for NCCL's
// `count` (the same arithmetic gives a program's input and output chunks
// for its per-rank chunks), and where the other buffer lies inside the
// larger one when a call is in place (NCCL's layout: an allgather's input
// at rank * count of its output, a reduce-scatter's output at rank * count
// of its input).
//
// `custom` has no shape of its own (BufferSize::Program): the functions
// give `count` for it, and callers take the sizes from the program.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_FLOOR_SHAPE_H
#define MSCCLC_FLOOR_SHAPE_H

#include "mscclc/floor/Tables.h"

#include <cstdint>

namespace mscclc {

/// Elements (or chunks) of a buffer of size `size` for `count`.
constexpr uint64_t bufferElements(BufferSize size, uint64_t count,
                                  int64_t nranks) {
  return size == BufferSize::Ranks ? uint64_t(nranks) * count : count;
}

/// Elements of the send (input) buffer.
constexpr uint64_t inputElements(Collective c, uint64_t count,
                                 int64_t nranks) {
  return bufferElements(collectiveInfo(c).input, count, nranks);
}

/// Elements of the receive (output) buffer.
constexpr uint64_t outputElements(Collective c, uint64_t count,
                                  int64_t nranks) {
  return bufferElements(collectiveInfo(c).output, count, nranks);
}

/// In place: the offset, in elements, of `rank`'s input within its output
/// buffer (allgather, gather); 0 where both start together.
constexpr uint64_t inPlaceInputOffset(Collective c, uint64_t count,
                                      int64_t rank) {
  return collectiveInfo(c).inPlace == InPlace::InputInOutput
             ? uint64_t(rank) * count
             : 0;
}

/// In place: the offset, in elements, of `rank`'s output within its input
/// buffer (reducescatter, scatter); 0 where both start together.
constexpr uint64_t inPlaceOutputOffset(Collective c, uint64_t count,
                                       int64_t rank) {
  return collectiveInfo(c).inPlace == InPlace::OutputInInput
             ? uint64_t(rank) * count
             : 0;
}

/// Whether a program's `in` and `out` chunks are the collective's buffers
/// for some per-rank chunk count over `nranks` ranks (any sizes for
/// `custom`).
constexpr bool shapeFits(Collective c, int64_t nranks, int64_t in,
                         int64_t out) {
  const CollectiveInfo &i = collectiveInfo(c);
  if (i.input == BufferSize::Program)
    return true;
  // The per-rank count is the buffer of size One, or the input divided by
  // nranks when both scale.
  int64_t count = i.input == BufferSize::One    ? in
                  : i.output == BufferSize::One ? out
                  : nranks > 0 && in % nranks == 0 ? in / nranks
                                                   : -1;
  return count >= 0 &&
         uint64_t(in) == bufferElements(i.input, uint64_t(count), nranks) &&
         uint64_t(out) == bufferElements(i.output, uint64_t(count), nranks);
}

} // namespace mscclc

#endif // MSCCLC_FLOOR_SHAPE_H
