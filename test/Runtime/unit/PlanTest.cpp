//===- PlanTest.cpp - Plan reading, validation and scratch sizing ---------===//

#include "mscclc/runtime/Plan.h"
#include "mscclc/runtime/DeviceErrorText.h"

#include "mscclc/device/Layout.h"

#include <gtest/gtest.h>

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
  p.collective = "reducescatter"; // over 2 ranks: 2 input chunks, 1 output
  p.chunks = 1;
  p.inputChunks = 2;
  p.outputChunks = 1;
  EXPECT_EQ(p.resultOffset(1, 7), 0u); // out of place: its own buffer
  p.inPlace = true;
  EXPECT_EQ(p.resultOffset(0, 7), 0u);
  EXPECT_EQ(p.resultOffset(1, 7), 7u); // NCCL's recvbuff = sendbuff + rank * count
  p.collective = "allreduce";
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
  expectError(bad, "rankPlans");
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
  expectRejected(std::string(500, '['), "unexpected end of input");
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
  Plan p;
  Status s = parsePlan(planWith("\"id\": 0", "\"id\": 9007199254740993"), &p);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(p.rankPlans[0].memoryChannels[0].id, 9007199254740993LL)
      << "2^53 + 1 survives (no trip through double)";
  s = parsePlan(planWith("\"id\": 0", "\"id\": -9223372036854775808"), &p);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(p.rankPlans[0].memoryChannels[0].id, INT64_MIN);
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
