//===- ProofExprs.h - A GPU run against the proof's expressions ----------===//
//
// `mscclc --emit=exprs` prints, for every rank and output chunk, the
// reduction expression the static proof says every element of that chunk
// holds (docs/verification.md, "Translation validation"). Evaluated on a
// run's inputs, operation by operation in the element type, it gives each
// output element bit for bit: runtime-gpu-collectives --exprs compares a
// GPU run with it. Exact for the types whose operations a double computes
// exactly before the one rounding (f32, f64 and the integers, with these
// tests' inputs); the 16- and 8-bit floats round through f32 on the GPU,
// so they are refused here.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_TEST_RUNTIME_GPU_PROOFEXPRS_H
#define MSCCLC_TEST_RUNTIME_GPU_PROOFEXPRS_H

#include "GpuTestUtil.h"

#include "mscclc/device/Layout.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace gputest {

struct ProofExprs {
  struct Node {
    enum Kind { Input, Op, Uninitialised, Switch } kind = Input;
    int64_t a = 0, b = 0; ///< input: rank, chunk; op: operands
  };
  struct Output {
    int64_t rank = 0, chunk = 0, expr = 0;
    std::vector<int64_t> lastDiffers; ///< residues (count % chunks)
  };
  int64_t chunks = 1;
  std::vector<Node> nodes;
  std::vector<Output> outputs;
};

/// Whether `--exprs` can check type t bit for bit.
inline bool exactInDouble(DType t) {
  return t == DType::F32 || t == DType::F64 || isInteger(t);
}

/// Runs `compiler source args --emit=exprs` and parses its output; false
/// with *error set when it fails.
inline bool loadProofExprs(const std::string &compiler,
                           const std::string &source, const std::string &args,
                           ProofExprs *out, std::string *error) {
  std::string command = "'" + compiler + "' '" + source + "' " + args +
                        " --emit=exprs 2>&1";
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe) {
    *error = "cannot run " + command;
    return false;
  }
  std::string text;
  char buf[65536];
  for (size_t got; (got = fread(buf, 1, sizeof(buf), pipe)) > 0;)
    text.append(buf, got);
  if (pclose(pipe) != 0) {
    *error = command + " failed: " + text.substr(0, 2000);
    return false;
  }
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || doc.value("format", "") != "mscclc-exprs") {
    *error = command + ": not an expression file";
    return false;
  }
  out->chunks = doc["chunks"].get<int64_t>();
  for (const auto &n : doc["nodes"]) {
    ProofExprs::Node node;
    std::string kind = n[0].get<std::string>();
    if (kind == "input") {
      node.a = n[1].get<int64_t>();
      node.b = n[2].get<int64_t>();
    } else if (kind == "op") {
      node.kind = ProofExprs::Node::Op;
      node.a = n[1].get<int64_t>();
      node.b = n[2].get<int64_t>();
    } else if (kind == "switch") {
      node.kind = ProofExprs::Node::Switch;
    } else {
      node.kind = ProofExprs::Node::Uninitialised;
    }
    out->nodes.push_back(node);
  }
  for (const auto &o : doc["outputs"]) {
    ProofExprs::Output output;
    output.rank = o["rank"].get<int64_t>();
    output.chunk = o["chunk"].get<int64_t>();
    output.expr = o["expr"].get<int64_t>();
    output.lastDiffers = o["lastElementDiffers"].get<std::vector<int64_t>>();
    out->outputs.push_back(std::move(output));
  }
  return true;
}

/// Compares rank `rank`'s result `host` (its output region, type t) with
/// the expressions at `count`; `input(q, i)` is element i of rank q's
/// input buffer. Returns the number of wrong elements (reports the first).
inline size_t checkProofExprs(const ProofExprs &p, int rank, size_t count,
                              DType t, mscclcRedOp_t op, const void *host,
                              const std::function<double(int, size_t)> &input,
                              const std::string &what) {
  auto begin = [&](int64_t j) {
    return size_t(mscclc_chunk_begin(mscclc_u64(j), count, mscclc_u64(p.chunks)));
  };
  std::vector<double> value(p.nodes.size());
  size_t wrong = 0;
  for (const ProofExprs::Output &o : p.outputs) {
    if (o.rank != rank)
      continue;
    size_t first = begin(o.chunk), size = begin(o.chunk + 1) - first;
    bool lastDiffers = false;
    for (int64_t r : o.lastDiffers)
      lastDiffers |= size_t(r) == count % size_t(p.chunks);
    for (size_t pos = 0; pos < size; ++pos) {
      if (lastDiffers && pos + 1 == size && size > count / size_t(p.chunks))
        continue; // the proof says this element holds something else
      bool known = true;
      // Nodes come after their operands: one pass evaluates them all.
      for (size_t n = 0; n <= size_t(o.expr); ++n) {
        const ProofExprs::Node &node = p.nodes[n];
        switch (node.kind) {
        case ProofExprs::Node::Input:
          value[n] = input(int(node.a), begin(node.b) + pos);
          break;
        case ProofExprs::Node::Op:
          value[n] = roundTo(t, applyOp(op, value[size_t(node.a)],
                                        value[size_t(node.b)]));
          break;
        default:
          known = known && n != size_t(o.expr);
          break;
        }
      }
      if (!known)
        continue;
      unsigned char want[8], have[8];
      store(t, want, 0, value[size_t(o.expr)]);
      std::memcpy(have, static_cast<const char *>(host) + (first + pos) * sizeOf(t),
                  sizeOf(t));
      if (std::memcmp(want, have, sizeOf(t)) == 0)
        continue;
      if (wrong++ == 0)
        fprintf(stderr,
                "  %s: rank %d output element %zu (chunk %lld, position %zu) "
                "is %.9g, the proof's expression gives %.9g\n",
                what.c_str(), rank, first + pos, (long long)o.chunk, pos,
                load(t, have, 0), load(t, want, 0));
    }
  }
  return wrong;
}

} // namespace gputest

#endif // MSCCLC_TEST_RUNTIME_GPU_PROOFEXPRS_H
