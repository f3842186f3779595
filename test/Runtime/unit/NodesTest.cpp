//===- NodesTest.cpp - Virtual nodes and the node-shape check -------------===//
//
// MSCCLC_NODE_OF_RANK's parsing, nodes from hosts and from the variable
// (none spanning two hosts), and the refusal of a program compiled for
// another node shape than the communicator's.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Nodes.h"

#include <gtest/gtest.h>

using namespace mscclc::rt;

namespace {
const std::vector<uint64_t> kOneHost = {7, 7, 7, 7};
const std::vector<uint64_t> kTwoHosts = {7, 7, 9, 9};
} // namespace

TEST(Nodes, ParsesOneNodePerRank) {
  std::vector<int> nodes;
  ASSERT_TRUE(parseNodeOfRank("0,0,1,1", 4, &nodes).isOk());
  EXPECT_EQ(nodes, (std::vector<int>{0, 0, 1, 1}));
  for (const char *bad : {"0,0,1", "0,0,1,1,1", "0,,1,1", "0,0,1,x", "0,0,1,-1",
                          "", "0,0,1,1,"}) {
    Status s = parseNodeOfRank(bad, 4, &nodes);
    EXPECT_FALSE(s.isOk()) << bad;
    EXPECT_NE(s.message().find("MSCCLC_NODE_OF_RANK"), std::string::npos)
        << s.message();
  }
}

TEST(Nodes, HostsAreNodesByDefault) {
  std::vector<int> nodes;
  ASSERT_TRUE(assignNodes(kTwoHosts, "", &nodes).isOk());
  EXPECT_EQ(nodes, (std::vector<int>{0, 0, 1, 1}));
  ASSERT_TRUE(assignNodes(kOneHost, "", &nodes).isOk());
  EXPECT_EQ(nodes, (std::vector<int>{0, 0, 0, 0}));
}

TEST(Nodes, VirtualNodesSplitAHostAndAreRenumbered) {
  std::vector<int> nodes;
  ASSERT_TRUE(assignNodes(kOneHost, "5,5,3,3", &nodes).isOk());
  EXPECT_EQ(nodes, (std::vector<int>{0, 0, 1, 1}));
  ASSERT_TRUE(assignNodes(kTwoHosts, "0,1,2,3", &nodes).isOk());
  EXPECT_EQ(nodes, (std::vector<int>{0, 1, 2, 3}));
  Status s = assignNodes(kTwoHosts, "0,0,0,1", &nodes);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("different hosts"), std::string::npos)
      << s.message();
}

TEST(Nodes, LabelsFromAParentKeepItsNodes) {
  // Ranks 0 and 2 of "0,0,1,1", split off: one rank on each of two nodes,
  // although the variable lists four ranks.
  std::vector<int> nodes;
  ASSERT_TRUE(assignNodesFromLabels({7, 7}, {0, 1}, "parent", &nodes).isOk());
  EXPECT_EQ(nodes, (std::vector<int>{0, 1}));
  ASSERT_TRUE(assignNodesFromLabels(kOneHost, {4, 4, 2, 4}, "parent", &nodes).isOk());
  EXPECT_EQ(nodes, (std::vector<int>{0, 0, 1, 0}));
  Status s = assignNodesFromLabels(kTwoHosts, {0, 0, 0, 1}, "the parent's nodes", &nodes);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("the parent's nodes puts ranks 0 and 2"), std::string::npos)
      << s.message();
  // Every rank has a node or none does.
  s = assignNodesFromLabels(kOneHost, {0, 0, -1, 1}, "the nodes given", &nodes);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("rank 2 was given no node"), std::string::npos)
      << s.message();
}

TEST(Nodes, ShapeCheckAcceptsTheCompiledShape) {
  EXPECT_TRUE(checkNodeShape("p", 2, {0, 0, 1, 1}).isOk());
  EXPECT_TRUE(checkNodeShape("p", 0, {0, 0, 0, 0}).isOk()); // one node
  EXPECT_TRUE(checkNodeShape("p", 4, {0, 0, 0, 0}).isOk());
  // One rank per node: port channels only, any placement.
  EXPECT_TRUE(checkNodeShape("p", 1, {0, 0, 1, 1}).isOk());
  EXPECT_TRUE(checkNodeShape("p", 1, {0, 0, 0, 0}).isOk());
}

TEST(Nodes, ShapeCheckRefusesAMismatchNamingBoth) {
  Status s = checkNodeShape("allreduce_2ph", 2, {0, 0, 0, 0});
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), Code::Unsupported);
  EXPECT_NE(s.message().find("allreduce_2ph"), std::string::npos);
  EXPECT_NE(s.message().find("2 nodes x 2 ranks"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("1 node x 4 ranks"), std::string::npos)
      << s.message();
  // A one-node program across two nodes.
  s = checkNodeShape("p", 0, {0, 0, 1, 1});
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("1 node x 4 ranks"), std::string::npos);
  // Same sizes, other ranks: rank r must be on node r / G.
  EXPECT_FALSE(checkNodeShape("p", 2, {0, 1, 0, 1}).isOk());
  s = checkNodeShape("p", 2, {0, 0, 0, 1});
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("nodes of 3, 1 ranks"), std::string::npos)
      << s.message();
}
