//===- PlanTest.cpp - Plan reading, validation and scratch sizing ---------===//

#include "mscclc/runtime/Plan.h"
#include "mscclc/runtime/DeviceErrorText.h"
#include "mscclc/runtime/JsonDepth.h"

#include "mscclc/device/Layout.h"

#include "JsonDamage.h"
#include "TestFiles.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>

using namespace mscclc::rt;

namespace {

/// docs/plan.md's 1PA example, both ranks spelled out.
std::string planText(const std::string &rank0Extra = "",
                     const std::string &top = "\"version\": 1") {
  return R"({
  "format": "mscclc-plan", )" +
         top + R"(, "abiVersion": 3,
  "name": "allreduce_1pa", "collective": "allreduce",
  "ranks": 2, "gpusPerNode": 2, "instances": 1,
  "chunks": 1, "inputChunks": 1, "outputChunks": 1,
  "inPlace": false, "root": 0, "threadsPerBlock": 512,
  "dtypes": ["f32", "f16", "bf16", "i32"], "redops": ["sum", "avg"],
  "usesPortChannels": false, "usesSwitchChannels": false,
  "futureKey": {"ignored": [1, 2.5, null, true]},
  "scratch": [{"name": "recv", "index": 0, "chunks": 2, "packet": true}],
  "rankPlans": [
    {"rank": 0, "kernel": "mscclc_allreduce_1pa_rank0", "blocks": 1,
     "waitSlots": 0,
     "memoryChannels": [
       {"index": 0, "name": "mem_ll_0_1", "peer": 1, "protocol": "LL",
        "id": 0, "peerIndex": 0, "block": 0, "group": 1, "waitSlot": -1,
        "signals": false, "waits": false, "peerBuffers": ["scratch"])" +
         rank0Extra + R"(}],
     "portChannels": [], "switchChannels": []},
    {"rank": 1, "kernel": "mscclc_allreduce_1pa_rank1", "blocks": 1,
     "waitSlots": 0,
     "memoryChannels": [
       {"index": 0, "name": "mem_ll_1_0", "peer": 0, "protocol": "LL",
        "id": 0, "peerIndex": 0, "block": 0, "group": 1, "waitSlot": -1,
        "signals": false, "waits": false, "peerBuffers": ["scratch"]}],
     "portChannels": [], "switchChannels": []}
  ]
})";
}

} // namespace

TEST(PlanTest, ParsesTheDocumentedExample) {
  Plan p;
  Status s = parsePlan(planText(), &p);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(p.name, "allreduce_1pa");
  EXPECT_EQ(p.ranks, 2);
  EXPECT_EQ(p.threadsPerBlock, 512);
  ASSERT_EQ(p.rankPlans.size(), 2u);
  EXPECT_EQ(p.rankPlans[1].kernel, "mscclc_allreduce_1pa_rank1");
  const PlanChannel &c = p.rankPlans[0].memoryChannels[0];
  EXPECT_TRUE(c.ll);
  EXPECT_EQ(c.peer, 1);
  EXPECT_TRUE(c.peerScratch);
  EXPECT_FALSE(c.peerInput);
  EXPECT_FALSE(p.needsPeerUserBuffers(0));
  EXPECT_TRUE(p.supportsDtype("bf16"));
  EXPECT_FALSE(p.supportsDtype("f64"));
  EXPECT_TRUE(p.supportsRedop("avg"));
}

// The line a kernel's error record becomes: every operation code has its
// own words, and a channel is named from the failing rank's plan.
TEST(PlanTest, DeviceErrorsNameTheOperationAndChannel) {
  Plan p;
  ASSERT_TRUE(parsePlan(planText(), &p).isOk());
  MscclcErrorRecord r{};
  r.code = MSCCLC_ERR_TIMEOUT;
  r.rank = 1;
  r.block = 0;
  r.channelKind = MSCCLC_CHAN_MEMORY;
  r.channel = 0;
  r.op = MSCCLC_OPC_LL_READ;
  r.line = 12;
  r.expected = 3;
  r.observed = 2;
  EXPECT_EQ(describeDeviceError(p, p.rankPlans[1], r),
            "program allreduce_1pa rank 1 block 0 timed out in LL packet read "
            "on memory channel 0 'mem_ll_1_0' (to rank 0) (.mscl line 12): "
            "expected 3, observed 2");
  // avg's scaling waits for the rank's other blocks, on no channel.
  r.code = MSCCLC_ERR_ABORTED;
  r.channelKind = MSCCLC_CHAN_NONE;
  r.op = MSCCLC_OPC_SCALE;
  r.line = 0;
  EXPECT_EQ(describeDeviceError(p, p.rankPlans[1], r),
            "program allreduce_1pa rank 1 block 0 aborted in avg scaling "
            "(waiting for the rank's blocks): expected 3, observed 2");
  const std::pair<uint32_t, const char *> ops[] = {
      {MSCCLC_OPC_WAIT, " in wait:"},
      {MSCCLC_OPC_FIFO_PUSH, " in proxy FIFO push:"},
      {MSCCLC_OPC_FLUSH, " in flush:"},
      {MSCCLC_OPC_ENTRY, " in kernel entry:"},
      {99, " in operation:"}};
  for (auto [op, words] : ops) {
    r.op = op;
    EXPECT_NE(describeDeviceError(p, p.rankPlans[1], r).find(words),
              std::string::npos)
        << op;
  }
  // A channel index past the plan's list (a corrupt record) is still named.
  r.channelKind = MSCCLC_CHAN_PORT;
  r.channel = 7;
  r.code = MSCCLC_ERR_BAD_ARGS;
  EXPECT_NE(describeDeviceError(p, p.rankPlans[1], r)
                .find("bad kernel arguments in operation on port channel 7:"),
            std::string::npos);
}

TEST(PlanTest, ScratchBytesFollowTheLayout) {
  Plan p;
  ASSERT_TRUE(parsePlan(planText(), &p).isOk());
  // 2 packet chunks of ceil(count/1) elements: 2 parities * 2 chunks *
  // ceil(count*E/8) packets * 16 bytes, rounded to 256.
  for (uint64_t count : {1ull, 7ull, 1000ull, 123457ull}) {
    uint64_t packets = (count * 4 + 7) / 8;
    uint64_t expect = (2 * 2 * packets * 16 + 255) / 256 * 256;
    EXPECT_EQ(p.scratchBytes(count, 4), expect) << count;
    MscclcScratchDesc d{2, 1};
    EXPECT_EQ(p.scratchBytes(count, 2), mscclc_scratch_bytes(&d, 1, count, 1, 2));
  }
  EXPECT_EQ(p.inputElems(1001), 1001u);
}

TEST(PlanTest, UserBufferChunksFollowNcclCounts) {
  Plan p;
  ASSERT_TRUE(parsePlan(planText(), &p).isOk());
  p.chunks = 2;
  p.inputChunks = 2;
  p.outputChunks = 4; // an all-gather over 2 ranks
  EXPECT_EQ(p.outputElems(7), 14u);
  EXPECT_EQ(p.inputElems(7), 7u);
}

TEST(PlanTest, InPlaceReduceScatterResultsSitAtTheRanksBlock) {
  Plan p;
  ASSERT_TRUE(parsePlan(planText(), &p).isOk());
  p.collective = mscclc::Collective::ReduceScatter; // over 2 ranks: 2 input chunks, 1 output
  p.chunks = 1;
  p.inputChunks = 2;
  p.outputChunks = 1;
  EXPECT_EQ(p.resultOffset(1, 7), 0u); // out of place: its own buffer
  p.inPlace = true;
  EXPECT_EQ(p.resultOffset(0, 7), 0u);
  EXPECT_EQ(p.resultOffset(1, 7), 7u); // NCCL's recvbuff = sendbuff + rank * count
  p.collective = mscclc::Collective::AllReduce;
  EXPECT_EQ(p.resultOffset(1, 7), 0u);
}

TEST(PlanTest, PeerUserBuffersAreDetected) {
  Plan p;
  ASSERT_TRUE(parsePlan(planText(R"(, "ignored": 1)"), &p).isOk());
  std::string text = planText();
  size_t at = text.find("[\"scratch\"]");
  text.replace(at, 11, "[\"scratch\", \"output\"]");
  ASSERT_TRUE(parsePlan(text, &p).isOk());
  EXPECT_TRUE(p.needsPeerUserBuffers(0));
  EXPECT_FALSE(p.needsPeerUserBuffers(1));
}

TEST(PlanTest, SwitchChannelsListTheBuffersToBind) {
  std::string text = planText();
  const std::string none = "\"portChannels\": [], \"switchChannels\": []";
  const std::string one =
      "\"portChannels\": [], \"switchChannels\": [{\"index\": 0, "
      "\"name\": \"sw\", \"id\": 0, \"ranks\": [0, 1], "
      "\"buffers\": [\"input\", \"output\"]}]";
  for (size_t at; (at = text.find(none)) != std::string::npos;)
    text.replace(at, none.size(), one);
  text.replace(text.find("\"usesSwitchChannels\": false"), 27,
               "\"usesSwitchChannels\": true");
  Plan p;
  Status s = parsePlan(text, &p);
  ASSERT_TRUE(s.isOk()) << s.message();
  const PlanSwitchChannel &c = p.rankPlans[1].switchChannels.at(0);
  EXPECT_EQ(c.ranks, (std::vector<int>{0, 1}));
  EXPECT_TRUE(c.input);
  EXPECT_TRUE(c.output);
  EXPECT_FALSE(c.scratch);
  std::string bad = text;
  bad.replace(bad.find("\"output\"]}"), 8, "\"shared\"");
  s = parsePlan(bad, &p);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("buffers has unknown 'shared'"), std::string::npos)
      << s.message();
}

TEST(PlanTest, RejectsBadPlans) {
  Plan p;
  auto expectError = [&](const std::string &text, const char *needle) {
    Status s = parsePlan(text, &p);
    EXPECT_FALSE(s.isOk()) << needle;
    EXPECT_NE(s.message().find(needle), std::string::npos)
        << "want '" << needle << "' in: " << s.message();
  };
  expectError(planText("", "\"version\": 2"), "version 2");
  expectError("[]", "not an object");
  expectError("{\"format\": \"x\"}", "format");
  std::string text = planText();
  // A reverse channel that does not exist.
  std::string bad = text;
  bad.replace(bad.find("\"peerIndex\": 0"), 14, "\"peerIndex\": 3");
  expectError(bad, "does not lead back");
  // A channel to a rank that does not exist.
  bad = text;
  bad.replace(bad.find("\"peer\": 1"), 9, "\"peer\": 7");
  expectError(bad, "out of range");
  // A block outside the grid.
  bad = text;
  bad.replace(bad.find("\"block\": 0"), 10, "\"block\": 4");
  expectError(bad, "block");
  // A wait slot outside state.waitCounters.
  bad = text;
  bad.replace(bad.find("\"waitSlot\": -1"), 14, "\"waitSlot\": 0");
  expectError(bad, "waitSlots");
  // Missing rank plan.
  bad = text;
  bad.replace(bad.find("\"ranks\": 2"), 10, "\"ranks\": 3");
  expectError(bad, "gpusPerNode 2 does not divide ranks 3");
  // Unknown protocol, bad type.
  bad = text;
  bad.replace(bad.find("\"LL\""), 4, "\"XY\"");
  expectError(bad, "LL or HB");
  bad = text;
  bad.replace(bad.find("\"blocks\": 1"), 11, "\"blocks\": \"1\"");
  expectError(bad, "must be an integer");
  bad = text;
  bad.replace(bad.find("\"threadsPerBlock\": 512"), 22, "\"threadsPerBlock\": 100");
  expectError(bad, "multiple of 32");
  bad = text;
  bad.replace(bad.find("\"abiVersion\": 3"), 15, "\"abiVersion\": 9");
  expectError(bad, "ABI");
}

namespace {

/// Expects parsePlan to reject `text` with a message containing `needle`.
void expectRejected(const std::string &text, const std::string &needle) {
  Plan p;
  Status s = parsePlan(text, &p);
  EXPECT_EQ(s.code(), Code::InvalidArgument) << needle;
  EXPECT_NE(s.message().find(needle), std::string::npos)
      << "want '" << needle << "' in: " << s.message();
}

/// planText() with the first `from` replaced by `to`.
std::string planWith(const std::string &from, const std::string &to) {
  std::string text = planText();
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

} // namespace

TEST(PlanTest, MalformedJsonNamesTheLineAndColumn) {
  expectRejected("{\n  \"format\": [1, 2,\n}", "line 3, column 1");
  expectRejected("{\n  \"format\": [1, 2,\n}", "reading the plan: JSON ");
  expectRejected("{} x", "line 1, column 4");
  expectRejected("{\"format\": \"open", "missing closing quote");
  expectRejected(std::string(50, '['), "unexpected end of input");
  expectRejected(std::string(500, '['), "JSON nested 500 deep");
  expectRejected("", "line 1, column 1");
}

TEST(PlanTest, MissingKeysAreNamed) {
  expectRejected(planWith("\"name\": \"allreduce_1pa\", ", ""),
                 "plan: plan has no 'name'");
  expectRejected(planWith("\"kernel\": \"mscclc_allreduce_1pa_rank0\", ", ""),
                 "plan: rankPlans[0] has no 'kernel'");
  expectRejected(planWith("\"protocol\": \"LL\",", ""),
                 "plan: rankPlans[0].memoryChannels[0] has no 'protocol'");
}

TEST(PlanTest, WrongTypesNameTheKeyAndBothTypes) {
  expectRejected(planWith("\"blocks\": 1", "\"blocks\": \"1\""),
                 "plan: rankPlans[0].blocks must be an integer, not a string");
  expectRejected(
      planWith("\"threadsPerBlock\": 512", "\"threadsPerBlock\": 512.0"),
      "plan.threadsPerBlock must be an integer, not a fractional number");
  expectRejected(planWith("\"inPlace\": false", "\"inPlace\": 0"),
                 "plan.inPlace must be true or false, not an integer");
  expectRejected(planWith("\"name\": \"allreduce_1pa\"", "\"name\": null"),
                 "plan.name must be a string, not null");
  expectRejected(planWith("\"portChannels\": []", "\"portChannels\": {}"),
                 "rankPlans[0].portChannels must be an array, not an object");
  expectRejected(planWith("[\"sum\", \"avg\"]", "[\"sum\", 3]"),
                 "plan.redops[1] must be a string, not an integer");
  expectRejected(planWith("\"scratch\": [{", "\"scratch\": [7, {"),
                 "plan: scratch[0] is not an object (it is an integer)");
}

TEST(PlanTest, IntegersKeep64Bits) {
  // Out of range, but read exactly: 2^53 + 1 survives (no trip through
  // double), and so do the ends of int64 and past them.
  expectRejected(planWith("\"id\": 0", "\"id\": 9007199254740993"),
                 "id = 9007199254740993 is out of range [0, 65535]");
  expectRejected(planWith("\"id\": 0", "\"id\": -9223372036854775808"),
                 "id = -9223372036854775808 is out of range");
  expectRejected(planWith("\"id\": 0", "\"id\": 9223372036854775808"),
                 "id = 9223372036854775808 is out of range");
  expectRejected(planWith("\"blocks\": 1", "\"blocks\": 4294967297"),
                 "blocks = 4294967297 is out of range [1, 65535]");
}

TEST(PlanTest, DtypeSizes) {
  EXPECT_EQ(dtypeSize("f32"), 4u);
  EXPECT_EQ(dtypeSize("bf16"), 2u);
  EXPECT_EQ(dtypeSize("u64"), 8u);
  EXPECT_EQ(dtypeSize("i8"), 1u);
  EXPECT_EQ(dtypeSize("f128"), 0u);
}

//===----------------------------------------------------------------------===//
// Damaged plans. Plans the compiler wrote (plans/, `mscclc --emit=plan` of
// stdlib programs) damaged one field at a time: every damage is refused,
// with a message naming the field, the value or what is accepted. Before
// these checks, 32 of 103 hand-damaged plans were accepted.
//===----------------------------------------------------------------------===//

namespace {

using Json = nlohmann::json;

std::string planFixture(const std::string &name) {
  std::string text =
      mscclc::test::readAll(std::string(MSCCLC_PLAN_FIXTURES) + "/" + name);
  EXPECT_FALSE(text.empty()) << name;
  return text;
}

using Damage = mscclc::test::JsonDamage<Json>;

Damage removed(std::string pointer, std::string needle) {
  return mscclc::test::removedField<Json>(std::move(pointer), std::move(needle));
}

/// Applies each damage to `fixture` alone and expects parsePlan to refuse.
void expectEachRefused(const std::string &fixture,
                       const std::vector<Damage> &damages) {
  Json good = Json::parse(planFixture(fixture));
  Plan p;
  Status ok = parsePlan(good.dump(), &p);
  ASSERT_TRUE(ok.isOk()) << fixture << ": " << ok.message();
  for (const Damage &d : damages) {
    Status s = parsePlan(mscclc::test::damaged(good, d).dump(), &p);
    std::string what = fixture + " " + d.describe();
    EXPECT_FALSE(s.isOk()) << what << ": accepted";
    EXPECT_NE(s.message().find(d.needle), std::string::npos)
        << what << ": want '" << d.needle << "' in: " << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos)
        << what << ": one line, not " << s.message();
  }
}

const Json k2to40 = int64_t(1) << 40;
const Json k2to32 = int64_t(1) << 32;

} // namespace

TEST(PlanDamageTest, TopLevelFields) {
  expectEachRefused(
      "allreduce_2pa_ll.2.plan.json",
      {
          {"/format", "mscclc-pla", "format is 'mscclc-pla'"},
          {"/format", 1, "plan.format must be a string, not an integer"},
          {"/version", 2, "version 2 is not supported"},
          {"/abiVersion", 99, "kernels use ABI 99"},
          {"/name", "", "plan.name = '' is not a C identifier"},
          {"/name", "all reduce", "plan.name = 'all reduce' is not a C identifier"},
          {"/collective", "foo",
           "collective 'foo' is not one of allreduce, allgather"},
          {"/collective", "", "collective '' is not one of"},
          {"/collective", "allgather",
           "inputChunks 2 and outputChunks 2 are not those of allgather"},
          {"/ranks", 0, "plan.ranks = 0 is out of range [1, 65536]"},
          {"/ranks", 65537, "plan.ranks = 65537 is out of range [1, 65536]"},
          {"/ranks", 1, "plan.gpusPerNode = 2 is out of range [1, 1]"},
          {"/ranks", 3, "plan: gpusPerNode 2 does not divide ranks 3"},
          {"/gpusPerNode", 3, "plan.gpusPerNode = 3 is out of range [1, 2]"},
          {"/gpusPerNode", 0, "plan.gpusPerNode = 0 is out of range"},
          {"/gpusPerNode", -1, "plan.gpusPerNode = -1 is out of range"},
          {"/instances", 0, "plan.instances = 0 is out of range [1, 65535]"},
          {"/instances", 65536, "plan.instances = 65536 is out of range"},
          {"/chunks", 0, "plan.chunks = 0 is out of range [1, 4294967296]"},
          {"/chunks", int64_t(1) << 33, "plan.chunks = 8589934592 is out of range"},
          {"/chunks", 1, "inputChunks 2 and outputChunks 2 are not those of "
                         "allreduce over 2 ranks in 1 chunks (1 and 1)"},
          {"/chunks", 4, "inputChunks 2 and outputChunks 2 are not those of "
                         "allreduce over 2 ranks in 4 chunks (4 and 4)"},
          {"/inputChunks", k2to32,
           "plan.inputChunks = 4294967296 is out of range [1, 4]"},
          {"/inputChunks", 0, "plan.inputChunks = 0 is out of range"},
          {"/inputChunks", 4, "inputChunks 4 and outputChunks 2 are not those"},
          {"/outputChunks", k2to40, "plan.outputChunks = 1099511627776 is out of range"},
          {"/outputChunks", 1, "inputChunks 2 and outputChunks 1 are not those"},
          {"/inPlace", 1, "plan.inPlace must be true or false, not an integer"},
          {"/root", 1, "root 1 given for allreduce, which has no root"},
          {"/root", 2, "plan.root = 2 is out of range [0, 1]"},
          {"/root", -1, "plan.root = -1 is out of range"},
          {"/threadsPerBlock", 0, "plan.threadsPerBlock = 0 is out of range [32, 1024]"},
          {"/threadsPerBlock", 4294967295, "threadsPerBlock = 4294967295 is out of range"},
          {"/threadsPerBlock", 100, "threadsPerBlock 100 is not a multiple of 32"},
          {"/dtypes", Json::array({"f32", "f8zz"}),
           "dtypes names unknown 'f8zz' (accepted: f32, f16"},
          {"/dtypes", "f32", "plan.dtypes must be an array, not a string"},
          {"/dtypes/0", 32, "plan.dtypes[0] must be a string, not an integer"},
          {"/redops", Json::array({"xor"}),
           "redops names unknown 'xor' (accepted: sum, prod, min, max, avg or "
           "premulsum)"},
          {"/premulKernel", "", "redops lists premulsum but premulKernel is missing"},
          {"/premulKernel", "no-kernel",
           "plan.premulKernel = 'no-kernel' is not a C identifier"},
          {"/usesPortChannels", true,
           "usesPortChannels is true, but the ranks have no port channels"},
          {"/usesSwitchChannels", true,
           "usesSwitchChannels is true, but the ranks have no switch channels"},
          {"/usesPortChannels", "no", "plan.usesPortChannels must be true or false"},
          {"/rankPlans", Json::array(), "plan: 0 rankPlans for 2 ranks"},
          {"/rankPlans", Json::object(), "plan.rankPlans must be an array"},
          removed("/name", "plan: plan has no 'name'"),
          removed("/collective", "plan: plan has no 'collective'"),
          removed("/ranks", "plan: plan has no 'ranks'"),
          removed("/chunks", "plan: plan has no 'chunks'"),
          removed("/inputChunks", "plan: plan has no 'inputChunks'"),
          removed("/outputChunks", "plan: plan has no 'outputChunks'"),
          removed("/threadsPerBlock", "plan: plan has no 'threadsPerBlock'"),
          removed("/rankPlans", "plan: plan has no 'rankPlans'"),
          removed("/abiVersion", "plan: plan has no 'abiVersion'"),
      });
}

TEST(PlanDamageTest, ScratchBuffers) {
  expectEachRefused(
      "allreduce_2pa_ll.2.plan.json",
      {
          {"/scratch/0/chunks", 0, "scratch[0].chunks = 0 is out of range [1, 4294967296]"},
          {"/scratch/0/chunks", int64_t(1) << 33, "scratch[0].chunks = 8589934592 is out of range"},
          {"/scratch/0/chunks", -2, "scratch[0].chunks = -2 is out of range"},
          {"/scratch/0/index", 1, "plan: scratch[0] has index 1"},
          {"/scratch/1/index", -1, "scratch[1].index = -1 is out of range"},
          {"/scratch/0/packet", "yes", "scratch[0].packet must be true or false"},
          {"/scratch/0", 7, "plan: scratch[0] is not an object"},
          {"/scratch", Json::array(),
           "rankPlans[0].memoryChannels[0].peerBuffers names scratch, but the "
           "plan has no scratch buffer"},
          removed("/scratch/0/chunks", "plan: scratch[0] has no 'chunks'"),
      });
}

TEST(PlanDamageTest, RankPlansAndMemoryChannels) {
  const std::string c = "/rankPlans/0/memoryChannels/0";
  expectEachRefused(
      "allreduce_2pa_ll.2.plan.json",
      {
          {"/rankPlans/0/rank", 1, "rankPlans[1].memoryChannels[0] connects rank 1 to itself"},
          {"/rankPlans/0/rank", -1, "rankPlans[0].rank = -1 is out of range [0, 1]"},
          {"/rankPlans/0/rank", 2, "rankPlans[0].rank = 2 is out of range"},
          {"/rankPlans/0/kernel", "1kernel",
           "rankPlans[0].kernel = '1kernel' is not a C identifier"},
          {"/rankPlans/0/kernel", "", "rankPlans[0].kernel = '' is not a C identifier"},
          {"/rankPlans/0/kernel", 0, "rankPlans[0].kernel must be a string"},
          {"/rankPlans/0/blocks", 0, "rankPlans[0].blocks = 0 is out of range [1, 65535]"},
          {"/rankPlans/0/blocks", 65536, "rankPlans[0].blocks = 65536 is out of range"},
          {"/rankPlans/0/waitSlots", -1, "rankPlans[0].waitSlots = -1 is out of range"},
          {"/rankPlans/0/waitSlots", int64_t(1) << 25, "waitSlots = 33554432 is out of range"},
          {"/rankPlans/0/memoryChannels", 5, "rankPlans[0].memoryChannels must be an array"},
          {c + "/index", 1, "plan: rankPlans[0].memoryChannels[0] has index 1"},
          {c + "/index", -1, "memoryChannels[0].index = -1 is out of range"},
          {c + "/peer", 0, "connects rank 0 to itself"},
          {c + "/peer", 2, "memoryChannels[0].peer = 2 is out of range [0, 1]"},
          {c + "/peer", -1, "memoryChannels[0].peer = -1 is out of range"},
          {c + "/protocol", "XY", "memoryChannels[0].protocol must be LL or HB, not 'XY'"},
          {c + "/protocol", "HB", "differ in id or protocol"},
          {c + "/id", -1, "memoryChannels[0].id = -1 is out of range [0, 65535]"},
          {c + "/id", k2to40, "memoryChannels[0].id = 1099511627776 is out of range [0, 65535]"},
          {c + "/id", 1, "(id 1, LL) and its reverse channel 0 on rank 1 (id 0, LL) differ"},
          {c + "/peerIndex", 1, "names reverse channel 1 on rank 1, which does not lead back"},
          {c + "/peerIndex", -2, "memoryChannels[0].peerIndex = -2 is out of range"},
          {c + "/block", 1, "memoryChannels[0].block = 1 is out of range [0, 0]"},
          {c + "/group", 2, "memoryChannels[0].group = 2 is out of range [1, 1]"},
          {c + "/group", 0, "memoryChannels[0].group = 0 is out of range"},
          {c + "/waitSlot", 0, "memoryChannels[0].waitSlot 0 + group 1 exceeds waitSlots 0"},
          {c + "/waitSlot", -2, "memoryChannels[0].waitSlot = -2 is out of range"},
          {c + "/signals", "no", "memoryChannels[0].signals must be true or false"},
          {c + "/peerBuffers", Json::array({"shared"}),
           "memoryChannels[0].peerBuffers has unknown 'shared'"},
          {c + "/peerBuffers", "scratch", "memoryChannels[0].peerBuffers must be an array"},
          removed(c + "/peer", "memoryChannels[0] has no 'peer'"),
          removed(c + "/protocol", "memoryChannels[0] has no 'protocol'"),
          removed(c + "/peerIndex", "memoryChannels[0] has no 'peerIndex'"),
          removed(c + "/block", "memoryChannels[0] has no 'block'"),
          removed(c + "/index", "memoryChannels[0] has no 'index'"),
          removed("/rankPlans/0/kernel", "rankPlans[0] has no 'kernel'"),
          removed("/rankPlans/0/blocks", "rankPlans[0] has no 'blocks'"),
          removed("/rankPlans/0/rank", "rankPlans[0] has no 'rank'"),
          removed("/rankPlans/1", "plan: 1 rankPlans for 2 ranks"),
      });
}

TEST(PlanDamageTest, PortChannels) {
  const std::string c = "/rankPlans/0/portChannels/0";
  expectEachRefused(
      "allgather_port.4.plan.json",
      {
          {"/usesPortChannels", false,
           "usesPortChannels is false, but the ranks have some port channels"},
          {"/outputChunks", 1, "inputChunks 1 and outputChunks 1 are not those of allgather"},
          {"/collective", "reducescatter", "are not those of reducescatter"},
          {c + "/id", -1, "portChannels[0].id = -1 is out of range [0, 65535]"},
          {c + "/id", k2to40, "portChannels[0].id = 1099511627776 is out of range"},
          {c + "/peer", 4, "portChannels[0].peer = 4 is out of range [0, 3]"},
          {c + "/peerIndex", 7, "port channel 0 names reverse channel 7"},
          {c + "/index", 3, "portChannels[0] has index 3"},
          {c + "/peerBuffers", Json::array({"input", "nothing"}),
           "portChannels[0].peerBuffers has unknown 'nothing'"},
      });
}

TEST(PlanDamageTest, SwitchChannels) {
  const std::string c = "/rankPlans/0/switchChannels/0";
  expectEachRefused(
      "allreduce_switch.4.plan.json",
      {
          {"/usesSwitchChannels", false,
           "usesSwitchChannels is false, but the ranks have some switch channels"},
          {c + "/index", 3, "rankPlans[0].switchChannels[0] has index 3"},
          {c + "/id", -1, "switchChannels[0].id = -1 is out of range [0, 65535]"},
          {c + "/id", k2to40, "switchChannels[0].id = 1099511627776 is out of range"},
          {c + "/ranks", Json::array({0, 0}), "switchChannels[0].ranks lists rank 0 twice"},
          {c + "/ranks", Json::array({0, 9}), "switchChannels[0].ranks[1] must be a rank in [0, 4), not 9"},
          {c + "/ranks", Json::array({1, 2}), "must list at least 2 ranks, rank 0 among them"},
          {c + "/ranks", Json::array({0}), "must list at least 2 ranks"},
          {c + "/ranks", Json::array({0, "1"}), "ranks[1] must be a rank in [0, 4), not \"1\""},
          {c + "/buffers", Json::array({"input", "x"}), "switchChannels[0].buffers has unknown 'x'"},
          {"/dtypes", Json::array({"f32", "u4"}), "dtypes names unknown 'u4'"},
          removed(c + "/ranks", "switchChannels[0] has no 'ranks'"),
      });
}

TEST(PlanDamageTest, RootedCollectives) {
  expectEachRefused(
      "broadcast_chain.4.root1.plan.json",
      {
          {"/root", 4, "plan.root = 4 is out of range [0, 3]"},
          {"/root", -1, "plan.root = -1 is out of range"},
          {"/inputChunks", 4, "are not those of broadcast over 4 ranks"},
          {"/gpusPerNode", 3, "gpusPerNode 3 does not divide ranks 4"},
          {"/collective", "custom", "root 1 given for custom, which has no root"},
      });
}

// custom programs choose their chunk counts, within ranks * chunks; a
// root is for rooted collectives only.
TEST(PlanDamageTest, CustomCollectivesKeepTheirChunkCounts) {
  Json plan = Json::parse(planFixture("allreduce_2pa_ll.2.plan.json"));
  plan["collective"] = "custom";
  plan["outputChunks"] = 4;
  Plan p;
  Status s = parsePlan(plan.dump(), &p);
  ASSERT_TRUE(s.isOk()) << s.message();
  plan["outputChunks"] = 5;
  expectRejected(plan.dump(), "plan.outputChunks = 5 is out of range [1, 4]");
}

// Buffer and scratch sizes once wrapped to 0 (2^32 chunks): now they
// saturate, so the runtime asks for more memory than there is and fails
// cleanly instead of running with a buffer too small.
TEST(PlanDamageTest, SizesSaturateInsteadOfWrapping) {
  Json plan = Json::parse(planFixture("allreduce_2pa_ll.2.plan.json"));
  plan["scratch"][0]["chunks"] = k2to32;
  Plan p;
  ASSERT_TRUE(parsePlan(plan.dump(), &p).isOk());
  uint64_t count = uint64_t(1) << 30;
  // 2 parities * 2^32 chunks * (2^30 * 8 / 2 chunks / 8 bytes) packets * 16:
  // 2^66, which wrapped to 0.
  EXPECT_EQ(p.scratchBytes(count, 8), UINT64_MAX);
  EXPECT_GT(p.scratchBytes(1, 8), 0u);
  Plan fine;
  ASSERT_TRUE(parsePlan(planFixture("allreduce_2pa_ll.2.plan.json"), &fine).isOk());
  std::vector<MscclcScratchDesc> descs = {{2, 1}, {2, 1}};
  for (uint64_t c : {uint64_t(1), uint64_t(1000), uint64_t(1) << 40})
    EXPECT_EQ(fine.scratchBytes(c, 4),
              mscclc_scratch_bytes(descs.data(), 2, c, 2, 4))
        << "the layout's size where nothing overflows, count " << c;

  plan = Json::parse(planFixture("allreduce_2pa_ll.2.plan.json"));
  plan["collective"] = "custom";
  plan["chunks"] = k2to32;
  plan["inputChunks"] = int64_t(1) << 33;
  plan["outputChunks"] = int64_t(1) << 33;
  ASSERT_TRUE(parsePlan(plan.dump(), &p).isOk());
  EXPECT_EQ(p.inputElems(UINT64_MAX - 1), UINT64_MAX);
  EXPECT_EQ(p.inputElems(7), 14u);
}

// A kernel that is not in the program's source failed only at launch.
TEST(PlanDamageTest, KernelsMustBeDefinedInTheSource) {
  std::string cuda = planFixture("allreduce_2pa_ll.2.cu");
  Json plan = Json::parse(planFixture("allreduce_2pa_ll.2.plan.json"));
  Plan p;
  ASSERT_TRUE(parsePlan(plan.dump(), &p).isOk());
  ASSERT_TRUE(checkKernelsDefined(p, cuda).isOk());
  p.rankPlans[1].kernel = "mscclc_allreduce_2pa_ll_rank7";
  Status s = checkKernelsDefined(p, cuda);
  EXPECT_NE(s.message().find("rankPlans[1].kernel "
                             "'mscclc_allreduce_2pa_ll_rank7' is not defined"),
            std::string::npos)
      << s.message();
  // A prefix of a defined kernel's name, or a name only mentioned, is not.
  p.rankPlans[1].kernel = "mscclc_allreduce_2pa_ll_rank";
  EXPECT_FALSE(checkKernelsDefined(p, cuda).isOk());
  p.rankPlans[1].kernel = "using";
  EXPECT_FALSE(checkKernelsDefined(p, cuda).isOk());
  ASSERT_TRUE(parsePlan(plan.dump(), &p).isOk());
  p.premulKernel = "mscclc_other_premul";
  s = checkKernelsDefined(p, cuda);
  EXPECT_NE(s.message().find("premulKernel 'mscclc_other_premul' is not defined"),
            std::string::npos)
      << s.message();
}

// Printing a plan (bundleJson) recursed once per level: 50,000 levels
// overflowed the stack.
TEST(PlanDamageTest, DeepNestingIsRefused) {
  std::string deep = planFixture("allreduce_2pa_ll.2.plan.json");
  deep.insert(deep.rfind('}'), ", \"futureKey\": " + std::string(50000, '[') +
                                   std::string(50000, ']'));
  expectRejected(deep, "JSON nested 50001 deep, more than the limit of 64");
  EXPECT_EQ(mscclc::jsonNestingDepth("{\"a\": \"[[[{{\\\"[\", \"b\": [[1]]}"), 3);
}

// Where the compiler is at hand: every stdlib program's plan passes the
// checks (they must refuse damage, never what the compiler writes).
TEST(PlanDamageTest, EveryStdlibPlanIsAccepted) {
  const char *compiler = getenv("MSCCLC_COMPILER");
  if (!compiler || !*compiler)
    GTEST_SKIP() << "needs MSCCLC_COMPILER";
  std::string dir = MSCCLC_STDLIB_SOURCES;
  int checked = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    std::string path = entry.path().string();
    if (entry.path().extension() != ".mscl" || path.find("common") != std::string::npos)
      continue;
    for (const char *shape : {"--ranks=4", "--ranks=8 --gpus-per-node=4"}) {
      mscclc::test::TempDir tmp("mscclc-plan-test");
      std::string out = tmp / "plan.json";
      std::string cmd = fmt::format("'{}' '{}' {} --emit=plan > '{}' 2>/dev/null",
                                    compiler, path, shape, out);
      if (system(cmd.c_str()) != 0)
        continue; // a program for other shapes
      Plan p;
      Status s = parsePlan(mscclc::test::readAll(out), &p);
      EXPECT_TRUE(s.isOk()) << path << " " << shape << ": " << s.message();
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}
