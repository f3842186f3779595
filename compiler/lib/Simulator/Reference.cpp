//===- Reference.cpp - Inputs and the expected result of a collective ----===//

#include "Reference.h"

#include "mscclc/floor/Shape.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mscl;
using namespace mscclc::sim;

int64_t mscclc::sim::inputElements(const Model &model, const Layout &layout) {
  if (model.collective == CollectiveKind::custom)
    return layout.size(model.buffers[model.input]);
  return static_cast<int64_t>(mscclc::inputElements(
      toFloor(model.collective), layout.count, model.ranks));
}

std::vector<std::vector<Word>>
mscclc::sim::makeInputs(const Model &model, const Layout &layout,
                        DataType type, ReduceKind reduce, uint64_t seed) {
  std::mt19937_64 gen(seed);
  int64_t n = inputElements(model, layout);
  std::vector<std::vector<Word>> inputs(model.ranks);
  bool isReduce = isReduction(model.collective);
  for (auto &in : inputs) {
    in.resize(n);
    for (Word &w : in) {
      if (isFloat(type)) {
        double lo = -1, hi = 1;
        if (isReduce && reduce == ReduceKind::prod)
          lo = 0.7, hi = 1.4;
        w = fromDouble(
            roundTo(type, std::uniform_real_distribution<double>(lo, hi)(gen)));
      } else if (isReduce && reduce == ReduceKind::prod) {
        w = wrapInt(type, 1 + gen() % 3);
      } else if (isReduce) {
        w = wrapInt(type, gen() % 101);
      } else {
        w = wrapInt(type, gen());
      }
    }
  }
  return inputs;
}

Reference::Reference(const Model &model, const Layout &layout,
                     DataType type, ReduceKind reduce,
                     std::vector<std::vector<Word>> inputs)
    : model(model), layout(layout), type(type), reduce(reduce),
      in(std::move(inputs)) {
  if (isReduction(model.collective)) {
    int64_t size = in.empty() ? 0 : in[0].size();
    reduced.resize(size);
    for (int64_t i = 0; i < size; ++i)
      reduced[i] = reduceElement(i);
  }
}

Expected Reference::reduceElement(int64_t index) const {
  int n = model.ranks;
  Expected e;
  Word acc = in[0][index];
  for (int p = 1; p < n; ++p)
    reduceInto(type, reduce, &acc, &in[p][index], 1);
  if (reduce == ReduceKind::avg)
    divideBy(type, &acc, 1, n);
  e.exact = acc;
  if (!isFloat(type) || reduce == ReduceKind::min ||
      reduce == ReduceKind::max)
    return e;
  e.approximate = true;
  double u = unitRoundoff(type);
  // Below the smallest normal the error of a rounding is absolute, up to
  // half the subnormal spacing; n spacings cover the n roundings (this
  // matters for fp8, whose spacing is 2^-9 or 2^-16).
  double tiny = n * subnormalSpacing(type);
  if (reduce == ReduceKind::prod) {
    double prod = 1;
    for (int p = 0; p < n; ++p)
      prod *= toDouble(in[p][index]);
    e.value = prod;
    e.tolerance = 2.0 * n * u * std::fabs(prod) + tiny;
    return e;
  }
  double sum = 0, abs = 0;
  for (int p = 0; p < n; ++p) {
    sum += toDouble(in[p][index]);
    abs += std::fabs(toDouble(in[p][index]));
  }
  e.value = sum;
  e.tolerance = n * u * abs + u * std::fabs(sum) + tiny;
  if (reduce == ReduceKind::avg) {
    e.value /= n;
    e.tolerance = e.tolerance / n + 2 * u * std::fabs(e.value) +
                  subnormalSpacing(type);
  }
  return e;
}

LogicalResult Reference::checkUntouched(const Machine &machine,
                                        int rank) const {
  const BufferInfo &outInfo = model.buffers[model.output];
  int64_t size = layout.size(outInfo);
  for (int64_t i = 0; i < size; ++i) {
    Operation *writer = machine.lastWriter(rank, model.output, i);
    if (!writer)
      continue;
    emitError(writer->getLoc())
        << "wrong result of " << stringifyCollectiveKind(model.collective)
        << ": the operation shown writes rank " << rank << " "
        << outInfo.name << "[" << layout.chunkOf(outInfo, i) << "] element "
        << i << ", but only the root's (rank " << model.root
        << ") output belongs to the collective; other ranks may pass no "
           "receive buffer";
    return failure();
  }
  return success();
}

LogicalResult Reference::check(const Machine &machine) const {
  int n = model.ranks;
  int64_t count = layout.count;
  CollectiveKind kind = model.collective;
  if (kind == CollectiveKind::custom)
    return success();
  const BufferInfo &outInfo = model.buffers[model.output];
  const std::vector<std::vector<Word>> &inputs = in;

  for (int r = 0; r < n; ++r) {
    if (resultAtRootOnly(kind) && r != model.root) {
      if (failed(checkUntouched(machine, r)))
        return failure();
      continue;
    }
    // Where rank r's result lives and how many elements it has.
    mscclc::Collective coll = toFloor(kind);
    int64_t size =
        static_cast<int64_t>(mscclc::outputElements(coll, count, n));
    int64_t offset =
        model.inplace
            ? static_cast<int64_t>(mscclc::inPlaceOutputOffset(coll, count, r))
            : 0;
    const std::vector<Word> &out = machine.data(r, model.output);
    int64_t wrong = 0, firstWrong = -1;
    Expected firstExpected;
    for (int64_t i = 0; i < size; ++i) {
      Expected e;
      switch (kind) {
      case CollectiveKind::allreduce:
      case CollectiveKind::reduce:
        e = reduced[i];
        break;
      case CollectiveKind::reducescatter:
        e = reduced[r * count + i];
        break;
      case CollectiveKind::allgather:
      case CollectiveKind::gather:
        e.exact = inputs[i / count][i % count];
        break;
      case CollectiveKind::scatter:
        e.exact = inputs[model.root][r * count + i];
        break;
      case CollectiveKind::broadcast:
        e.exact = inputs[model.root][i];
        break;
      case CollectiveKind::alltoall:
        e.exact = inputs[i / count][r * count + i % count];
        break;
      default:
        break;
      }
      Word got = out[offset + i];
      // avg reduces as a sum; the division by N happens once, at the end.
      if (reduce == ReduceKind::avg && !reduced.empty())
        divideBy(type, &got, 1, n);
      bool ok = e.approximate
                    ? std::fabs(toDouble(got) - e.value) <= e.tolerance
                    : got == e.exact ||
                          (isFloat(type) && toDouble(got) == toDouble(e.exact));
      if (!ok && wrong++ == 0) {
        firstWrong = i;
        firstExpected = e;
      }
    }
    if (!wrong)
      continue;
    int64_t index = offset + firstWrong;
    Operation *writer = machine.lastWriter(r, model.output, index);
    auto diag = emitError(writer ? writer->getLoc() : model.program.getLoc());
    Word got = out[index];
    if (reduce == ReduceKind::avg && !reduced.empty())
      divideBy(type, &got, 1, n);
    diag << "wrong result of " << stringifyCollectiveKind(kind) << " (";
    if (isReduction(kind) || kind == CollectiveKind::custom)
      diag << stringify(reduce) << ", "; // the others have no operator
    diag << stringify(type) << "): rank " << r << " " << outInfo.name << "["
         << layout.chunkOf(outInfo, index) << "] element " << index;
    if (!writer)
      diag << " was never written (expected "
           << formatWord(type, firstExpected.exact) << ")";
    else
      diag << ": expected "
           << (firstExpected.approximate
                   ? formatWord(DataType::f64, fromDouble(firstExpected.value))
                   : formatWord(type, firstExpected.exact))
           << ", got " << formatWord(type, got);
    diag << " (" << wrong << " of " << size << " elements wrong)";
    if (writer)
      diag << "; the operation shown wrote it last";
    return failure();
  }

  if (kind == CollectiveKind::allreduce && failed(checkSameBits(machine)))
    return failure();
  if (model.inplace)
    return success();
  for (int r = 0; r < n; ++r) {
    const std::vector<Word> &in = machine.data(r, model.input);
    for (size_t i = 0; i < inputs[r].size() && i < in.size(); ++i)
      if (in[i] != inputs[r][i]) {
        Operation *writer = machine.lastWriter(r, model.input, i);
        auto diag =
            emitError(writer ? writer->getLoc() : model.program.getLoc());
        diag << "wrong result: the program changed rank " << r
             << "'s input buffer (element " << i
             << "); an out-of-place collective must leave it intact";
            return failure();
      }
  }
  return success();
}

LogicalResult Reference::checkSameBits(const Machine &machine) const {
  int64_t size = layout.count;
  const std::vector<Word> &first = machine.data(0, model.output);
  for (int r = 1; r < model.ranks; ++r) {
    const std::vector<Word> &out = machine.data(r, model.output);
    for (int64_t i = 0; i < size; ++i) {
      if (out[i] == first[i])
        continue;
      Operation *writer = machine.lastWriter(r, model.output, i);
      emitError(writer ? writer->getLoc() : model.program.getLoc())
          << "results differ across ranks: allreduce (" << stringify(reduce)
          << ", " << stringify(type) << ") element " << i << " is "
          << formatWord(type, first[i]) << " on rank 0 but "
          << formatWord(type, out[i]) << " on rank " << r
          << "; every rank must reduce the ranks' values in the same order, "
             "so that all get the same bits"
          << (writer ? " (the operation shown wrote that rank's value)" : "");
      return failure();
    }
  }
  return success();
}
