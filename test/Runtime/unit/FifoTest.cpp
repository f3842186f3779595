//===- FifoTest.cpp - The host side of the proxy FIFO ---------------------===//

#include "mscclc/runtime/Proxy.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace mscclc::rt;

TEST(TriggerTest, EncodeDecodeRoundTrip) {
  Trigger t;
  t.dstOffset = (uint64_t(1) << 36) - 8;
  t.dstBuffer = 2;
  t.srcBuffer = 1;
  t.type = kTriggerPut | kTriggerSignal | kTriggerFlush;
  t.proxyId = 0xffff;
  t.srcOffset = 123456789;
  t.size = (uint64_t(1) << 27) - 1;
  MscclcTrigger e = encodeTrigger(t);
  EXPECT_NE(e.fst, 0u);
  EXPECT_TRUE(e.snd >> 63) << "valid bit";
  Trigger d = decodeTrigger(e.fst, e.snd);
  EXPECT_EQ(d.dstOffset, t.dstOffset);
  EXPECT_EQ(d.dstBuffer, t.dstBuffer);
  EXPECT_EQ(d.srcBuffer, t.srcBuffer);
  EXPECT_EQ(d.type, t.type);
  EXPECT_EQ(d.proxyId, t.proxyId);
  EXPECT_EQ(d.srcOffset, t.srcOffset);
  EXPECT_EQ(d.size, t.size);
  // Bits 59..63 of fst stay zero (docs/kernel-abi.md).
  EXPECT_EQ(e.fst >> 59, 0u);
}

TEST(TriggerTest, MatchesTheDocumentedBitLayout) {
  // put of 256 bytes, scratch -> output, proxy 3, offsets 64 / 128.
  uint64_t fst = 64 | (uint64_t(1) << 36) | (uint64_t(2) << 38) |
                 (uint64_t(1) << 40) | (uint64_t(3) << 43);
  uint64_t snd = 128 | (uint64_t(256) << 36) | (uint64_t(1) << 63);
  Trigger d = decodeTrigger(fst, snd);
  EXPECT_EQ(d.dstOffset, 64u);
  EXPECT_EQ(d.dstBuffer, 1u);
  EXPECT_EQ(d.srcBuffer, 2u);
  EXPECT_EQ(d.type, uint32_t(kTriggerPut));
  EXPECT_EQ(d.proxyId, 3u);
  EXPECT_EQ(d.srcOffset, 128u);
  EXPECT_EQ(d.size, 256u);
}

TEST(FifoReaderTest, HalfWrittenEntriesWait) {
  std::vector<MscclcTrigger> ring(4, MscclcTrigger{0, 0});
  volatile uint64_t tail = 0;
  FifoReader r(ring.data(), &tail, 4);
  Trigger t;
  EXPECT_FALSE(r.poll(&t)) << "empty";
  Trigger in;
  in.type = kTriggerSignal;
  in.proxyId = 1;
  MscclcTrigger e = encodeTrigger(in);
  ring[0].fst = e.fst; // the second half has not landed
  EXPECT_FALSE(r.poll(&t));
  ring[0].snd = e.snd;
  ASSERT_TRUE(r.poll(&t));
  EXPECT_EQ(t.type, uint32_t(kTriggerSignal));
  EXPECT_EQ(tail, 0u) << "polling does not consume";
  r.pop();
  EXPECT_EQ(tail, 1u);
  EXPECT_EQ(ring[0].fst, 0u) << "the slot is zeroed before the tail moves";
  EXPECT_EQ(ring[0].snd, 0u);
}

TEST(FifoReaderTest, WrapsAroundInOrder) {
  const uint32_t cap = 3;
  std::vector<MscclcTrigger> ring(cap, MscclcTrigger{0, 0});
  volatile uint64_t tail = 0;
  FifoReader r(ring.data(), &tail, cap);
  for (uint64_t i = 0; i < 10; ++i) {
    Trigger in;
    in.type = kTriggerPut;
    in.size = i + 1;
    MscclcTrigger e = encodeTrigger(in);
    ring[i % cap] = e;
    Trigger out;
    ASSERT_TRUE(r.poll(&out));
    EXPECT_EQ(out.size, i + 1);
    r.pop();
    EXPECT_EQ(tail, i + 1);
  }
}

TEST(FifoReaderTest, ConcurrentProducer) {
  // A producer thread plays the GPU: reserve, wait for space, one store.
  const uint32_t cap = 8;
  const uint64_t total = 20000;
  std::vector<MscclcTrigger> ring(cap, MscclcTrigger{0, 0});
  volatile uint64_t tail = 0;
  std::thread producer([&] {
    for (uint64_t i = 0; i < total; ++i) {
      while (i - tail >= cap) {
      }
      Trigger in;
      in.type = kTriggerPut;
      in.srcOffset = i;
      MscclcTrigger e = encodeTrigger(in);
      volatile MscclcTrigger *slot = &ring[i % cap];
      slot->snd = e.snd; // halves land in either order
      slot->fst = e.fst;
    }
  });
  FifoReader r(ring.data(), &tail, cap);
  uint64_t next = 0;
  while (next < total) {
    Trigger t;
    if (!r.poll(&t))
      continue;
    ASSERT_EQ(t.srcOffset, next) << "entries must be consumed in order";
    r.pop();
    ++next;
  }
  producer.join();
  EXPECT_EQ(tail, total);
}

TEST(ProxyFifoTest, BadTriggersAreReportedAndConsumed) {
  std::vector<MscclcTrigger> ring(4, MscclcTrigger{0, 0});
  volatile uint64_t tail = 0;
  ProxyFifo fifo(FifoReader(ring.data(), &tail, 4), 16);
  Trigger in;
  in.type = kTriggerSignal;
  in.proxyId = 5; // no channel was registered for it
  ring[0] = encodeTrigger(in);
  in.proxyId = 40; // beyond the table
  ring[1] = encodeTrigger(in);
  EXPECT_EQ(fifo.serve(nullptr), 2);
  EXPECT_EQ(tail, 2u) << "consumed so the GPU is not stuck behind it";
  std::string err = fifo.takeError();
  EXPECT_NE(err.find("proxy id 5"), std::string::npos) << err;
  EXPECT_TRUE(fifo.takeError().empty()) << "taking clears it";
}

TEST(ProxyFifoTest, PutOutsideTheBufferIsRefused) {
  std::vector<MscclcTrigger> ring(2, MscclcTrigger{0, 0});
  volatile uint64_t tail = 0;
  ProxyFifo fifo(FifoReader(ring.data(), &tail, 2), 4);
  char src[64], dst[64];
  ProxyChannel ch;
  ch.src[2] = src;
  ch.srcExtent[2] = sizeof(src);
  ch.dst[2] = dst;
  ch.dstExtent[2] = sizeof(dst);
  uint64_t counter = 0;
  ch.counter = &counter;
  fifo.setChannel(1, &ch);
  Trigger in;
  in.type = kTriggerPut;
  in.proxyId = 1;
  in.srcBuffer = 2;
  in.dstBuffer = 2;
  in.dstOffset = 32;
  in.size = 64; // 32 + 64 > 64
  ring[0] = encodeTrigger(in);
  EXPECT_EQ(fifo.serve(nullptr), 1);
  EXPECT_NE(fifo.takeError().find("runs past a buffer"), std::string::npos);
  in.srcBuffer = 0; // input was not mapped for this channel
  in.size = 8;
  ring[1] = encodeTrigger(in);
  EXPECT_EQ(fifo.serve(nullptr), 1);
  EXPECT_NE(fifo.takeError().find("not mapped"), std::string::npos);
  EXPECT_EQ(counter, 0u);
}
