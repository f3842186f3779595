//===- Nodes.h - Which ranks share a node ---------------------*- C++ -*-===//
//
// A node is a set of ranks that reach each other without a network: memory
// channels, switch channels and the copy engine work inside one, port
// channels over TCP (or IB verbs) between them. By default a node is a host.
// MSCCLC_NODE_OF_RANK ("0,0,1,1": rank r's node, one entry per rank) splits
// hosts into virtual nodes, so that several nodes run on one machine, and
// the network transports can be tested there. A communicator made from
// another (a split) gets its ranks' nodes from the parent's instead: their
// labels travel with the ranks.
//
// A program compiled with --gpus-per-node G takes rank r to be on node
// r / G. It runs on a communicator whose nodes are exactly those blocks, or,
// for G = 1, on any communicator (every rank a node of its own: port
// channels only, which reach any peer).
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_NODES_H
#define MSCCLC_RUNTIME_NODES_H

#include "mscclc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mscclc::rt {

/// Parses MSCCLC_NODE_OF_RANK's value for `nranks` ranks: one non-negative
/// integer per rank, comma-separated. An error names the variable.
Status parseNodeOfRank(const std::string &spec, int nranks,
                       std::vector<int> *nodeOf);

/// Rank r's node, numbered 0.. in the order of each node's lowest rank.
/// `hostOf[r]` identifies rank r's host; `spec` is MSCCLC_NODE_OF_RANK's
/// value ("" when unset: a node per host). A virtual node may not span two
/// hosts.
Status assignNodes(const std::vector<uint64_t> &hostOf, const std::string &spec,
                   std::vector<int> *nodeOf);

/// The same from a node label per rank (`labels[r]`, e.g. the node each
/// rank had in a parent communicator); `origin` says where the labels come
/// from in messages. A label may not span two hosts either, and every rank
/// needs one (>= 0).
Status assignNodesFromLabels(const std::vector<uint64_t> &hostOf,
                             const std::vector<int> &labels,
                             const std::string &origin,
                             std::vector<int> *nodeOf);

/// Ok if a program compiled for `gpusPerNode` ranks per node (0: all on one)
/// runs on ranks placed on the nodes `nodeOf`; else an Unsupported error
/// naming `program`, both shapes and what to do.
Status checkNodeShape(const std::string &program, int gpusPerNode,
                      const std::vector<int> &nodeOf);

/// "2 nodes x 2 ranks" or "nodes of 3, 1 ranks" (for messages).
std::string describeNodes(const std::vector<int> &nodeOf);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_NODES_H
