//===- Exprs.cpp - Reading and evaluating reduction expressions ----------===//

#include "Exprs.h"
#include "KernelUnit.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace hostrun {

using nlohmann::json;

std::unique_ptr<Exprs> Exprs::read(const std::string &path, const Plan &plan) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(fmt::format("cannot read {}", path));
  auto e = std::make_unique<Exprs>();
  try {
    const json j = json::parse(in);
    if (j.at("format") != "mscclc-exprs" || j.at("version") != 1)
      throw std::runtime_error("not an mscclc-exprs file of version 1");
    for (const json &n : j.at("nodes")) {
      const bool leaf = n.contains("leaf");
      const json &pair = leaf ? n.at("leaf") : n.at("op");
      Node node{leaf, pair.at(0).get<uint64_t>(), pair.at(1).get<uint64_t>()};
      const size_t self = e->nodes_.size();
      if (leaf &&
          (node.a >= uint64_t(plan.ranks) || node.b >= plan.inputChunks))
        throw std::runtime_error(fmt::format(
            "node {}: leaf ({}, {}) past {} ranks of {} input chunks", self,
            node.a, node.b, plan.ranks, plan.inputChunks));
      if (!leaf && (node.a >= self || node.b >= self))
        throw std::runtime_error(
            fmt::format("node {}: operands must be earlier nodes", self));
      e->nodes_.push_back(node);
    }
    std::vector<std::pair<uint64_t, uint64_t>> seen; // (rank * chunks, residue)
    for (const json &o : j.at("outputs")) {
      Output out;
      out.rank = o.at("rank").get<int>();
      out.chunk = o.at("chunk").get<uint64_t>();
      out.node = o.at("node").get<size_t>();
      if (o.contains("residues"))
        out.residues = o.at("residues").get<std::vector<uint64_t>>();
      if (out.rank < 0 || out.rank >= plan.ranks ||
          out.chunk >= plan.outputChunks || out.node >= e->nodes_.size())
        throw std::runtime_error(
            fmt::format("output (rank {}, chunk {}, node {}) out of range",
                        out.rank, out.chunk, out.node));
      std::vector<uint64_t> residues = out.residues;
      if (residues.empty())
        for (uint64_t m = 0; m < plan.chunks; ++m)
          residues.push_back(m);
      for (uint64_t m : residues) {
        if (m >= plan.chunks)
          throw std::runtime_error(
              fmt::format("residue {} of {} chunks", m, plan.chunks));
        auto key = std::make_pair(
            uint64_t(out.rank) * plan.outputChunks + out.chunk, m);
        if (std::find(seen.begin(), seen.end(), key) != seen.end())
          throw std::runtime_error(fmt::format(
              "rank {} output chunk {} has two expressions at residue {}",
              out.rank, out.chunk, m));
        seen.push_back(key);
      }
      // The nodes under the root, each once, operands first.
      std::vector<bool> visited(e->nodes_.size());
      std::vector<size_t> stack{out.node};
      while (!stack.empty()) {
        const size_t n = stack.back();
        stack.pop_back();
        if (visited[n])
          continue;
        visited[n] = true;
        out.under.push_back(n);
        if (!e->nodes_[n].leaf) {
          stack.push_back(e->nodes_[n].a);
          stack.push_back(e->nodes_[n].b);
        }
      }
      std::sort(out.under.begin(), out.under.end());
      e->outputs_.push_back(std::move(out));
    }
  } catch (const json::exception &x) {
    throw std::runtime_error(fmt::format("{}: {}", path, x.what()));
  } catch (const std::runtime_error &x) {
    throw std::runtime_error(fmt::format("{}: {}", path, x.what()));
  }
  return e;
}

void Exprs::expect(const Plan &plan, const Case &c, int r, RankCase &rc,
                   unsigned size) const {
  const uint64_t k = plan.chunks, count = c.count;
  auto begin = [&](uint64_t j) -> uint64_t {
    return mscclc_chunk_begin(j, count, k);
  };
  std::vector<unsigned char> value(nodes_.size() * size);
  for (const Output &o : outputs_) {
    if (o.rank != r ||
        (!o.residues.empty() && std::find(o.residues.begin(), o.residues.end(),
                                          count % k) == o.residues.end()))
      continue;
    // Positions that the output chunk and every leaf's chunk hold.
    uint64_t n = begin(o.chunk + 1) - begin(o.chunk);
    for (size_t i : o.under)
      if (nodes_[i].leaf)
        n = std::min(n, begin(nodes_[i].b + 1) - begin(nodes_[i].b));
    for (uint64_t p = 0; p < n; ++p) {
      for (size_t i : o.under) { // operands before the nodes using them
        const Node &node = nodes_[i];
        if (node.leaf)
          std::memcpy(&value[i * size],
                      &c.ranks[node.a].input[(begin(node.b) + p) * size], size);
        else
          mscclc_hostrun_apply(&value[node.a * size], &value[node.b * size],
                               &value[i * size]);
      }
      const uint64_t e = begin(o.chunk) + p;
      rc.check[e] = Check::Exact;
      std::memcpy(&rc.expect[e * size], &value[o.node * size], size);
    }
  }
}

} // namespace hostrun
