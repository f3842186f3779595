//===- FloorTest.cpp - The runtime's copies of the floor's tables --------===//
//
// Every row of Collectives.def, DataTypes.def and RedOps.def round-trips
// through the runtime's and the NCCL library's parsers and printers: the
// selection table's collective names, the plan's data type sizes, and the
// NCCL library's call names, fallback list, data types and operators. (The
// C enums of mscclc.h and nccl.h are checked at compile time, in
// runtime/lib/Api.cpp and Validate.cpp.) A consumer that drifts from the
// tables fails here.
//
//===----------------------------------------------------------------------===//

#include "Route.h"
#include "Validate.h"

#include "mscclc/floor/Shape.h"
#include "mscclc/runtime/Plan.h"
#include "mscclc/runtime/Selection.h"

#include <gtest/gtest.h>

using namespace mscclc;

namespace {

TEST(FloorRuntime, EveryStandardCollectiveParsesInSelectionTables) {
  for (const CollectiveInfo &c : kCollectives) {
    rt::Collective parsed = Collective::AllReduce;
    bool ok = rt::parseCollective(c.name, &parsed);
    EXPECT_EQ(ok, isStandardCollective(c.id)) << c.name;
    if (ok)
      EXPECT_EQ(parsed, c.id) << c.name;
  }
}

TEST(FloorRuntime, EveryStandardCollectiveIsAnNcclCall) {
  for (const CollectiveInfo &c : kCollectives) {
    std::optional<nccl::Collective> call = nccl::parseCollective(c.name);
    if (!isStandardCollective(c.id)) {
      EXPECT_FALSE(call.has_value()) << c.name;
      continue;
    }
    ASSERT_TRUE(call.has_value()) << c.name;
    EXPECT_EQ(nccl::floorCollective(*call), c.id) << c.name;
    EXPECT_STREQ(nccl::collectiveName(*call), c.ncclName);
    EXPECT_EQ(nccl::parseCollective(std::string("nccl") + c.ncclName), call);
    EXPECT_EQ(nccl::mscclcCollective(*call), c.mscclc) << c.name;
    EXPECT_EQ(nccl::reduces(*call), c.reduces) << c.name;
    EXPECT_EQ(nccl::rooted(*call), c.root != Root::None) << c.name;
  }
  for (nccl::Collective p2p : {nccl::Collective::Send, nccl::Collective::Recv}) {
    EXPECT_FALSE(nccl::floorCollective(p2p).has_value());
    EXPECT_FALSE(nccl::mscclcCollective(p2p).has_value());
    EXPECT_EQ(nccl::parseCollective(nccl::collectiveName(p2p)), p2p);
  }
}

TEST(FloorRuntime, EveryDataTypeHasItsSizeAndNames) {
  for (const DataTypeInfo &t : kDataTypes) {
    EXPECT_EQ(rt::dtypeSize(t.name), t.bytes) << t.name;
    EXPECT_EQ(nccl::elementSize(t.nccl), t.bytes) << t.name;
    EXPECT_EQ(nccl::dtypeName(t.nccl), t.ncclName);
  }
  EXPECT_EQ(rt::dtypeSize("f33"), 0u);
  EXPECT_EQ(nccl::elementSize(kNumDataTypes), 0u);
}

TEST(FloorRuntime, EveryBuiltInOperatorHasItsNcclName) {
  for (const RedOpInfo &op : kRedOps) {
    if (op.nccl < 0)
      continue;
    EXPECT_EQ(nccl::redOpName(op.nccl), op.name);
  }
  EXPECT_EQ(nccl::redOpName(ncclNumOps), "premulsum#5");
}

TEST(FloorRuntime, PlansAnswerRootQuestionsFromTheTable) {
  rt::Plan plan;
  for (const CollectiveInfo &c : kCollectives) {
    plan.collective = c.id;
    EXPECT_EQ(plan.resultAtRootOnly(), c.root == Root::Output) << c.name;
    EXPECT_EQ(plan.inputAtRootOnly(), c.root == Root::Input) << c.name;
  }
}

} // namespace
