//===- FloorTest.cpp - The compiler's copies of the floor's tables -------===//
//
// Every row of Collectives.def, DataTypes.def and RedOps.def round-trips
// through the compiler's parsers and printers (the dialect's ODS enum, the
// frontend's printer, the simulator's types and operators), and the shape
// functions give NCCL's documented buffer sizes. A consumer that drifts
// from the tables fails here.
//
//===----------------------------------------------------------------------===//

#include "mscclc/Frontend/Frontend.h"
#include "mscclc/Simulator/Simulator.h"
#include "mscclc/floor/Shape.h"
#include "mscl/IR/MsclDialect.h"

#include <gtest/gtest.h>

using namespace mscclc;

namespace {

TEST(FloorCompiler, EveryCollectiveRoundTripsThroughTheDialect) {
  EXPECT_EQ(int(mscl::getMaxEnumValForCollectiveKind()) + 1, kNumCollectives);
  for (const CollectiveInfo &c : kCollectives) {
    std::optional<mscl::CollectiveKind> k =
        mscl::symbolizeCollectiveKind(c.name);
    ASSERT_TRUE(k.has_value()) << c.name;
    EXPECT_EQ(mscl::stringifyCollectiveKind(*k), c.name);
    EXPECT_EQ(mscl::toFloor(*k), c.id) << c.name;
    EXPECT_EQ(mscl::fromFloor(c.id), *k) << c.name;
    EXPECT_EQ(mscl::isReduction(*k), c.reduces) << c.name;
    EXPECT_EQ(mscl::hasRoot(*k), c.root != Root::None) << c.name;
    EXPECT_EQ(mscl::resultAtRootOnly(*k), c.root == Root::Output) << c.name;
  }
}

TEST(FloorCompiler, EveryCollectivePrintsUnderItsName) {
  for (const CollectiveInfo &c : kCollectives) {
    EXPECT_EQ(stringifyCollective(c.id), c.name);
    EXPECT_EQ(lookupCollective(c.name), c.id);
  }
  EXPECT_FALSE(lookupCollective("allsum").has_value());
}

TEST(FloorCompiler, EveryDataTypeRoundTripsThroughTheSimulator) {
  for (const DataTypeInfo &t : kDataTypes) {
    std::optional<sim::DataType> s = sim::parseDataType(t.name);
    ASSERT_TRUE(s.has_value()) << t.name;
    EXPECT_EQ(sim::stringify(*s), t.name);
    EXPECT_EQ(sim::byteSize(*s), int64_t(t.bytes)) << t.name;
    EXPECT_EQ(sim::parseDataType(t.ncclName), s) << t.ncclName;
    EXPECT_EQ(int(*s), int(t.id)) << t.name;
  }
}

TEST(FloorCompiler, EveryOperatorButPreMulSumRoundTripsThroughTheSimulator) {
  for (const RedOpInfo &op : kRedOps) {
    std::optional<sim::ReduceKind> k = sim::parseReduceKind(op.name);
    if (op.id == RedOp::PreMulSum) {
      EXPECT_FALSE(k.has_value());
      continue;
    }
    ASSERT_TRUE(k.has_value()) << op.name;
    EXPECT_EQ(sim::stringify(*k), op.name);
  }
}

/// The tables against NCCL's definition of `count` (nccl.h), written out.
TEST(FloorShape, BufferSizesAndInPlaceOffsetsAreNccls) {
  struct Want {
    Collective c;
    uint64_t in, out, inOffset, outOffset; // 4 ranks, count 3, rank 2
  };
  const Want wants[] = {
      {Collective::AllReduce, 3, 3, 0, 0},
      {Collective::AllGather, 3, 12, 6, 0},
      {Collective::ReduceScatter, 12, 3, 0, 6},
      {Collective::Broadcast, 3, 3, 0, 0},
      {Collective::Reduce, 3, 3, 0, 0},
      {Collective::AllToAll, 12, 12, 0, 0},
      {Collective::Gather, 3, 12, 6, 0},
      {Collective::Scatter, 12, 3, 0, 6},
  };
  ASSERT_EQ(std::size(wants), size_t(kNumStandardCollectives));
  for (const Want &w : wants) {
    const char *name = collectiveName(w.c);
    EXPECT_EQ(inputElements(w.c, 3, 4), w.in) << name;
    EXPECT_EQ(outputElements(w.c, 3, 4), w.out) << name;
    EXPECT_EQ(inPlaceInputOffset(w.c, 3, 2), w.inOffset) << name;
    EXPECT_EQ(inPlaceOutputOffset(w.c, 3, 2), w.outOffset) << name;
    EXPECT_TRUE(shapeFits(w.c, 4, int64_t(w.in), int64_t(w.out))) << name;
    EXPECT_FALSE(shapeFits(w.c, 4, int64_t(w.in) + 1, int64_t(w.out)))
        << name;
  }
  EXPECT_TRUE(shapeFits(Collective::Custom, 4, 5, 7));
}

} // namespace
