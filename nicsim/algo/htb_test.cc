// Htb: pins sch_htb.c behaviour as described in docs/mechanisms §9.1 and §9.3 (token
// buckets in ns of transmission time, modes, charging, borrowing through feeds, DRR per
// level/prio, default class and direct queue, next wake-up) on a manual clock.
//
// Conventions of the worked examples: packets are 1000 bytes; at 8 Mbit/s one costs 1 ms of
// tokens, at 16 Mbit/s 0.5 ms, at 8 kbit/s 1 s. Classes are classified by flow_hash (the class
// id) unless a test says otherwise. Parent 1:1 is a top-level inner class (level 7).
#include "nicsim/algo/htb.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/algo/fifo.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/property.h"
#include "nicsim/testing/recording_observer.h"
#include "nicsim/testing/stats_identities.h"

namespace nicsim::algo {
namespace {

using testing::PacketFactory;
using testing::RecordingObserver;
using Mode = Htb::Mode;

constexpr uint32_t kP = 0x1;
constexpr uint32_t kA = 0x10;
constexpr uint32_t kB = 0x20;
constexpr uint32_t kLen = 1000;

Time ms(int64_t v) { return Time::from_ns(v * 1'000'000); }
Time us(int64_t v) { return Time::from_ns(v * 1'000); }

Htb::Params by_flow_hash() {
  Htb::Params p;
  p.classify = [](const Packet& pk) { return pk.flow_hash; };
  return p;
}

// A pfifo deep enough for the long runs (the default leaf holds 1000 packets).
AnyQueue big_leaf() { return AnyQueue(Fifo(Fifo::Params{.limit_packets = 20'000})); }

void fill(Htb& h, PacketFactory& f, uint32_t cls, int n, Time now = Time::zero()) {
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(h.enqueue(f.make(kLen, cls), now), Verdict::kQueued);
  }
}

struct Sent {
  Time at;
  uint32_t cls;
};

// Dequeues until `end` (inclusive), jumping to next_ready() whenever HTB holds back, and
// checks that next_ready() is strictly later than a fruitless dequeue.
std::vector<Sent> run_until(Htb& h, Time start, Time end) {
  std::vector<Sent> out;
  Time now = start;
  while (now <= end) {
    std::optional<Packet> p = h.dequeue(now);
    if (p) {
      out.push_back({now, p->flow_hash});
      continue;
    }
    std::optional<Time> ready = h.next_ready(now);
    if (!ready) {
      break;
    }
    if (*ready <= now) {
      ADD_FAILURE() << "dequeue returned nothing but next_ready is " << ready->ns_since_epoch()
                    << " <= now " << now.ns_since_epoch();
      break;
    }
    now = *ready;
  }
  return out;
}

std::string classes_of(const std::vector<Sent>& v) {
  std::string s;
  for (const Sent& x : v) {
    s += x.cls == kA ? 'A' : x.cls == kB ? 'B' : '?';
  }
  return s;
}

uint64_t count(const std::vector<Sent>& v, uint32_t cls) {
  uint64_t n = 0;
  for (const Sent& x : v) {
    n += x.cls == cls ? 1 : 0;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Parameters and defaults.

TEST(Htb, DefaultsFollowTcAndKernel) {
  // §9.3: r2q 10 (iproute2), direct_qlen = txqueuelen 1000, htb_hysteresis 0.
  const Htb::Params p;
  EXPECT_EQ(p.r2q, 10);
  EXPECT_EQ(p.direct_qlen, 1000);
  EXPECT_FALSE(p.hysteresis);
  EXPECT_EQ(p.default_class, 0u);
  EXPECT_EQ(Htb::kMbuffer, Duration::s(60));
  EXPECT_EQ(Htb::class_name(0x10), "1:10");
  EXPECT_EQ(Htb::class_name(0xabc), "1:abc");
}

TEST(Htb, DefaultBurstCeilAndLeafQdisc) {
  // §9.3 tc defaults: ceil = rate; burst = rate/HZ + mtu with HZ = 1e9, mtu 1600 → 1600 bytes
  // at 8 Mbit/s = 1.6 ms of tokens; at 10 Gbit/s 1.25e9/1e9 + 1600 = 1601 bytes = 1280.8 ns,
  // rounded up to 1281 ns. A new class starts CAN_SEND with full buckets.
  Htb h;
  h.add_class({.id = kA, .rate = Rate::mbit(8)});
  h.add_class({.id = kB, .rate = Rate::gbit(10)});
  const Htb::ClassStats a = h.class_stats(kA);
  EXPECT_EQ(a.buffer, 1'600'000);
  EXPECT_EQ(a.cbuffer, 1'600'000);
  EXPECT_EQ(a.tokens, 1'600'000);
  EXPECT_EQ(a.ctokens, 1'600'000);
  EXPECT_EQ(a.mode, Mode::kCanSend);
  EXPECT_EQ(a.level, 0);
  const Htb::ClassStats b = h.class_stats(kB);
  EXPECT_EQ(b.buffer, 1281);
  EXPECT_EQ(b.cbuffer, 1281);
  // The default leaf is a pfifo of 1000 packets (qdisc_create_dflt → txqueuelen).
  Fifo* leaf = h.leaf(kA).get<Fifo>();
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->params().limit_packets, 1000);
}

TEST(Htb, QuantumDerivedFromR2qAndClamped) {
  // §9.3: quantum = rate_bytes_per_s / r2q, clamped to [1000, 200000] unless explicit.
  Htb h;
  h.add_class({.id = 1, .rate = Rate::mbit(8)});    // 1e6 B/s / 10 = 100000
  h.add_class({.id = 2, .rate = Rate::kbit(80)});   // 10000 / 10 = 1000
  h.add_class({.id = 3, .rate = Rate::kbit(8)});    // 100 → clamped up to 1000
  h.add_class({.id = 4, .rate = Rate::mbit(100)});  // 1.25e6 → clamped down to 200000
  h.add_class({.id = 5, .rate = Rate::kbit(8), .quantum = 500});  // explicit: not clamped
  h.add_class({.id = 6, .rate = Rate::gbit(1), .quantum = 300000});
  EXPECT_EQ(h.class_stats(1).quantum, 100000);
  EXPECT_EQ(h.class_stats(2).quantum, 1000);
  EXPECT_EQ(h.class_stats(3).quantum, 1000);
  EXPECT_EQ(h.class_stats(4).quantum, 200000);
  EXPECT_EQ(h.class_stats(5).quantum, 500);
  EXPECT_EQ(h.class_stats(6).quantum, 300000);

  Htb::Params p;
  p.r2q = 100;
  Htb h2(p);
  h2.add_class({.id = 1, .rate = Rate::mbit(8)});  // 1e6 / 100 = 10000
  EXPECT_EQ(h2.class_stats(1).quantum, 10000);
}

TEST(Htb, LevelsFollowTheKernel) {
  // Leaves are level 0; a top-level inner class is 7 (TC_HTB_MAXDEPTH - 1), its inner
  // children 6. A leaf that gets a child becomes an inner class.
  Htb h;
  h.add_class({.id = 1, .rate = Rate::mbit(10)});
  EXPECT_EQ(h.class_stats(1).level, 0);
  h.add_class({.id = 2, .parent = 1, .rate = Rate::mbit(5)});
  EXPECT_EQ(h.class_stats(1).level, 7);
  EXPECT_EQ(h.class_stats(2).level, 0);
  h.add_class({.id = 3, .parent = 2, .rate = Rate::mbit(5)});
  EXPECT_EQ(h.class_stats(2).level, 6);
  EXPECT_THROW(h.leaf(2), std::out_of_range);
  EXPECT_NO_THROW(h.leaf(3));
}

void expect_rejected(const Htb::ClassParams& c, const std::string& key) {
  auto err = c.validate();
  ASSERT_TRUE(err.has_value()) << key;
  EXPECT_EQ(err->key, key);
}

TEST(Htb, RejectsBadClassParams) {
  // Keys name the class and the tc option (scenario files use the same names).
  expect_rejected({.id = 0x10, .rate = Rate()}, "class 1:10 rate");
  expect_rejected({.id = 0x10, .rate = Rate::mbit(10), .ceil = Rate::mbit(5)}, "class 1:10 ceil");
  expect_rejected({.id = 0x10, .rate = Rate::mbit(1), .burst = -1}, "class 1:10 burst");
  expect_rejected({.id = 0x10, .rate = Rate::mbit(1), .cburst = -1}, "class 1:10 cburst");
  expect_rejected({.id = 0x10, .rate = Rate::mbit(1), .mtu = 0}, "class 1:10 mtu");
  expect_rejected({.id = 0x10, .rate = Rate::mbit(1), .prio = 8}, "class 1:10 prio");
  expect_rejected({.id = 0x10, .rate = Rate::mbit(1), .prio = -1}, "class 1:10 prio");
  expect_rejected({.id = 0x10, .rate = Rate::mbit(1), .quantum = -1}, "class 1:10 quantum");
  expect_rejected({.id = 0, .rate = Rate::mbit(1)}, "class 1:0 classid");
  expect_rejected({.id = 0x10000, .rate = Rate::mbit(1)}, "class 1:10000 classid");
  expect_rejected({.id = 0x10, .parent = 0x10, .rate = Rate::mbit(1)}, "class 1:10 parent");

  Htb h;
  try {
    h.add_class({.id = 0x10, .rate = Rate::mbit(10), .ceil = Rate::mbit(5)});
    FAIL() << "ceil < rate accepted";
  } catch (const InvalidParams& e) {
    EXPECT_EQ(e.error().key, "class 1:10 ceil");
    EXPECT_NE(std::string(e.what()).find("class 1:10 ceil: must be >= rate"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(h.add_class({.id = 0x10, .rate = Rate()}), InvalidParams);
  EXPECT_FALSE(h.has_class(0x10));
}

TEST(Htb, RejectsBadTrees) {
  Htb h(by_flow_hash());
  h.add_class({.id = kA, .rate = Rate::mbit(1)});
  auto key_of = [&](Htb::ClassParams c) -> std::string {
    try {
      h.add_class(std::move(c));
    } catch (const InvalidParams& e) {
      return e.error().key;
    }
    return "accepted";
  };
  EXPECT_EQ(key_of({.id = kA, .rate = Rate::mbit(1)}), "class 1:10 classid");  // duplicate
  EXPECT_EQ(key_of({.id = kB, .parent = 0x99, .rate = Rate::mbit(1)}), "class 1:20 parent");
  // A leaf holding packets cannot become a parent.
  PacketFactory f;
  ASSERT_EQ(h.enqueue(f.make(kLen, kA), Time::zero()), Verdict::kQueued);
  EXPECT_EQ(key_of({.id = kB, .parent = kA, .rate = Rate::mbit(1)}), "class 1:20 parent");
  // A leaf qdisc handed over must be empty.
  Fifo full;
  full.enqueue(f.make(kLen), Time::zero());
  EXPECT_EQ(key_of({.id = 0x30, .rate = Rate::mbit(1), .leaf = AnyQueue(std::move(full))}),
            "class 1:30 leaf");

  // At most 8 levels of classes (TC_HTB_MAXDEPTH): 1:1 .. 1:8 chain is fine, 1:9 is not.
  Htb deep;
  for (uint32_t id = 1; id <= 8; ++id) {
    deep.add_class({.id = id, .parent = id - 1, .rate = Rate::mbit(1)});
  }
  EXPECT_EQ(deep.class_stats(1).level, 7);
  EXPECT_EQ(deep.class_stats(7).level, 1);
  EXPECT_EQ(deep.class_stats(8).level, 0);
  try {
    deep.add_class({.id = 9, .parent = 8, .rate = Rate::mbit(1)});
    FAIL() << "ninth level accepted";
  } catch (const InvalidParams& e) {
    EXPECT_EQ(e.error().key, "class 1:9 parent");
  }
}

TEST(Htb, RejectsBadQdiscParams) {
  Htb::Params p;
  p.r2q = 0;
  EXPECT_THROW(Htb{p}, InvalidParams);
  ASSERT_TRUE(p.validate());
  EXPECT_EQ(p.validate()->key, "r2q");
  p = Htb::Params{};
  p.direct_qlen = -1;
  ASSERT_TRUE(p.validate());
  EXPECT_EQ(p.validate()->key, "direct_qlen");
  p = Htb::Params{};
  p.default_class = 0x10000;
  ASSERT_TRUE(p.validate());
  EXPECT_EQ(p.validate()->key, "default");
  p.default_class = 0;
  p.direct_qlen = 0;  // allowed: every direct packet is dropped
  EXPECT_FALSE(p.validate());
}

// ---------------------------------------------------------------------------------------------
// One class: token bucket in ns of transmission time (§9.1), modes and wake-up (§9.3).

TEST(Htb, SingleClassBurstThenModeChangeAndExactWakeup) {
  // 1:10 at 8 Mbit/s, ceil = rate, default burst 1600 B = 1.6 ms. At t=0:
  //  #1: tokens 1.6 → 0.6 ms (CAN_SEND); #2: 0.6 → -0.4 ms, ctokens likewise → CANT_SEND,
  //  event at +0.4 ms. HTB sends while tokens >= 0, so the burst overshoots by one packet.
  Htb h(by_flow_hash());
  h.add_class({.id = kA, .rate = Rate::mbit(8)});
  PacketFactory f;
  fill(h, f, kA, 5);
  ASSERT_TRUE(h.dequeue(Time::zero()));
  EXPECT_EQ(h.class_stats(kA).tokens, 600'000);
  EXPECT_EQ(h.class_stats(kA).mode, Mode::kCanSend);
  ASSERT_TRUE(h.dequeue(Time::zero()));
  Htb::ClassStats s = h.class_stats(kA);
  EXPECT_EQ(s.tokens, -400'000);
  EXPECT_EQ(s.ctokens, -400'000);
  EXPECT_EQ(s.mode, Mode::kCantSend);
  EXPECT_EQ(s.overlimits, 1u);
  EXPECT_EQ(h.stats().overlimits, 1u);
  EXPECT_FALSE(h.dequeue(Time::zero()));
  // next_ready is exactly when ctokens (and tokens) are back at 0: t_c - ctokens = 0.4 ms.
  EXPECT_EQ(h.next_ready(Time::zero()), us(400));
  EXPECT_EQ(h.next_event(), us(400));  // the kernel's watchdog instant
  EXPECT_FALSE(h.dequeue(us(400) - Duration::ns(1)));
  EXPECT_EQ(h.next_ready(us(400) - Duration::ns(1)), us(400));
  ASSERT_TRUE(h.dequeue(us(400)));
  // Charged at 0.4 ms: tokens min(0, 1.6) - 1 = -1 ms → next at 1.4 ms.
  s = h.class_stats(kA);
  EXPECT_EQ(s.tokens, -1'000'000);
  EXPECT_EQ(s.mode, Mode::kCantSend);
  EXPECT_EQ(h.next_ready(us(400)), us(1400));
  EXPECT_EQ(s.lends, 3u);  // every packet charged at its own level
  EXPECT_EQ(s.borrows, 0u);
  testing::expect_stats_identities(h);
}

TEST(Htb, SingleClassSendsAtRateInTheLongRun) {
  // §9.3: long-run rate = rate, plus the initial burst. Packets leave at 0, 0, then 0.4 ms +
  // k ms: 1002 packets in [0, 1 s] = 1.6 kB burst + 1 MB (R/8 · 1 s) + 400 B overshoot.
  Htb h(by_flow_hash());
  h.add_class({.id = kA, .rate = Rate::mbit(8), .leaf = big_leaf()});
  PacketFactory f;
  fill(h, f, kA, 12000);
  std::vector<Sent> sent = run_until(h, Time::zero(), ms(1000));
  ASSERT_EQ(sent.size(), 1002u);
  EXPECT_EQ(sent[2].at, us(400));
  EXPECT_EQ(sent.back().at, us(999'400));
  const int64_t bytes = static_cast<int64_t>(sent.size()) * kLen;
  EXPECT_LE(std::abs(bytes - (1'000'000 + 1600)), static_cast<int64_t>(kLen));
  // Ten seconds: 10002 packets (the rate is exact, no drift).
  sent = run_until(h, ms(1000) + Duration::ns(1), ms(10'000));
  EXPECT_EQ(sent.size(), 9000u);
  EXPECT_EQ(h.class_stats(kA).packets, 10002u);
  EXPECT_EQ(h.class_stats(kA).bytes, 10002u * kLen);
}

TEST(Htb, HysteresisSwitchesModesAtMinusBuffer) {
  // §9.3 with hysteresis: lowater = -cbuffer unless CANT_SEND, hiwater = -buffer when
  // CAN_SEND. 8 Mbit/s, burst = cburst = 1000 B = 1 ms: at t=0 tokens 1 → 0 → -1 (still CAN
  // since -1 >= -buffer) → -2 ms (ctokens -2 < -1: CANT_SEND, wait 2 ms). At 2 ms (lowater and
  // hiwater 0 for a CANT_SEND class) it is CAN_SEND again and sends two: 0 → -1 → -2.
  Htb::Params p = by_flow_hash();
  p.hysteresis = true;
  Htb h(p);
  h.add_class({.id = kA, .rate = Rate::mbit(8), .burst = 1000, .cburst = 1000});
  PacketFactory f;
  fill(h, f, kA, 20);
  std::vector<Sent> sent = run_until(h, Time::zero(), ms(6));
  ASSERT_EQ(sent.size(), 9u);
  const Time expected[] = {ms(0), ms(0), ms(0), ms(2), ms(2), ms(4), ms(4), ms(6), ms(6)};
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].at, expected[i]) << i;
  }

  // Without hysteresis the same class sends 2 at t=0, then one per ms from 1 ms.
  Htb h2(by_flow_hash());
  h2.add_class({.id = kA, .rate = Rate::mbit(8), .burst = 1000, .cburst = 1000});
  fill(h2, f, kA, 20);
  sent = run_until(h2, Time::zero(), ms(6));
  ASSERT_EQ(sent.size(), 8u);
  EXPECT_EQ(sent[1].at, ms(0));
  EXPECT_EQ(sent[2].at, ms(1));
  EXPECT_EQ(sent[7].at, ms(6));
}

// ---------------------------------------------------------------------------------------------
// Borrowing (§9.3 "Borrowing model") and charging.

TEST(Htb, CeilCapsABorrowingClass) {
  // 1:1 at 32 Mbit/s has plenty to lend; 1:10 rate 8 Mbit/s (burst 1000 B = 1 ms), ceil
  // 16 Mbit/s (cburst 1000 B = 0.5 ms). t=0: two packets on own tokens (tokens 1 → 0 → -1 ms;
  // ctokens 0.5 → 0 → -0.5: CANT_SEND). 0.5 ms: ctokens 0, tokens -0.5: MAY_BORROW, served
  // through 1:1's feed (borrow). 1 ms: tokens 0: CAN_SEND, own packet (lend at level 0)...
  // so one packet per 0.5 ms = ceil, alternating own / borrowed.
  Htb h(by_flow_hash());
  h.add_class({.id = kP, .rate = Rate::mbit(32)});
  h.add_class({.id = kA,
               .parent = kP,
               .rate = Rate::mbit(8),
               .ceil = Rate::mbit(16),
               .burst = 1000,
               .cburst = 1000,
               .leaf = big_leaf()});
  PacketFactory f;
  fill(h, f, kA, 3000);
  std::vector<Sent> sent = run_until(h, Time::zero(), ms(1000));
  ASSERT_EQ(sent.size(), 2002u);
  EXPECT_EQ(sent[1].at, ms(0));
  EXPECT_EQ(sent[2].at, us(500));
  EXPECT_EQ(sent[3].at, ms(1));
  EXPECT_EQ(sent[4].at, us(1500));
  const Htb::ClassStats a = h.class_stats(kA);
  EXPECT_EQ(a.lends, 1002u);    // 0, 0, 1, 2, ..., 1000 ms on its own tokens
  EXPECT_EQ(a.borrows, 1000u);  // 0.5, 1.5, ..., 999.5 ms through the parent
  const Htb::ClassStats p = h.class_stats(kP);
  EXPECT_EQ(p.lends, 1000u);  // charged at its own level = lent
  EXPECT_EQ(p.borrows, 0u);
  EXPECT_EQ(p.packets, 2002u);  // every packet is charged to the ancestors
  EXPECT_EQ(p.mode, Mode::kCanSend);
}

TEST(Htb, BorrowingWorkedExampleWithModesAndCounters) {
  // 1:1 rate = ceil 16 Mbit/s (burst 1000 B = 0.5 ms); 1:10 rate 8 Mbit/s (1 ms), ceil
  // 16 Mbit/s (0.5 ms). Ten packets: 0, 0 own; then the parent limits too, and 1:10 alternates
  // borrowed (0.5, 1.5, 2.5, 3.5 ms) and own (1, 2, 3, 4 ms).
  Htb h(by_flow_hash());
  h.add_class({.id = kP, .rate = Rate::mbit(16), .burst = 1000, .cburst = 1000});
  h.add_class({.id = kA,
               .parent = kP,
               .rate = Rate::mbit(8),
               .ceil = Rate::mbit(16),
               .burst = 1000,
               .cburst = 1000});
  PacketFactory f;
  fill(h, f, kA, 10);
  ASSERT_TRUE(h.dequeue(Time::zero()));
  ASSERT_TRUE(h.dequeue(Time::zero()));
  // After two: leaf tokens -1 ms, ctokens -0.5 ms; parent tokens = ctokens = -0.5 ms.
  EXPECT_EQ(h.class_stats(kA).tokens, -1'000'000);
  EXPECT_EQ(h.class_stats(kA).ctokens, -500'000);
  EXPECT_EQ(h.class_stats(kA).mode, Mode::kCantSend);
  EXPECT_EQ(h.class_stats(kP).tokens, -500'000);
  EXPECT_EQ(h.class_stats(kP).mode, Mode::kCantSend);
  // Leaf may borrow at 0.5 ms (ctokens 0) and the parent can send then: 0.5 ms.
  EXPECT_EQ(h.next_ready(Time::zero()), us(500));
  std::vector<Sent> sent = run_until(h, Time::zero(), ms(10));
  ASSERT_EQ(sent.size(), 8u);
  const Time expected[] = {us(500), ms(1), us(1500), ms(2), us(2500), ms(3), us(3500), ms(4)};
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].at, expected[i]) << i;
  }
  const Htb::ClassStats a = h.class_stats(kA);
  EXPECT_EQ(a.lends, 6u);
  EXPECT_EQ(a.borrows, 4u);
  // Overlimits (entries into CANT_SEND): the leaf after every packet from the second on (9),
  // the parent at 0, 0.5, 1.5, 2.5 and 3.5 ms (at 1..4 ms it is charged while still CANT).
  EXPECT_EQ(a.overlimits, 9u);
  const Htb::ClassStats p = h.class_stats(kP);
  EXPECT_EQ(p.lends, 4u);
  EXPECT_EQ(p.overlimits, 5u);
  EXPECT_EQ(h.stats().overlimits, 14u);
}

TEST(Htb, SpareIsSharedByDrrQuantum) {
  // §9.3 DRR: 1:1 rate = ceil 8 Mbit/s (burst 1000 B = 1 ms); 1:10 and 1:20 at 8 kbit/s
  // (burst 1000 B = 1 s, never refilled within the test), ceil 8 Mbit/s with a large cburst;
  // quanta 1000 and 3000. t=0 (level 0 row, DRR on deficit[0]): A, B, A, B on own tokens;
  // the parent is then at -3 ms. From 3 ms one borrowed packet per ms through the parent's
  // feed: deficits start at 0, so the first visit sends one packet (A, B), then the cycle is
  // A, B, B, B — borrowed bytes exactly 1 : 3.
  Htb h(by_flow_hash());
  h.add_class({.id = kP, .rate = Rate::mbit(8), .burst = 1000, .cburst = 1000});
  h.add_class({.id = kA,
               .parent = kP,
               .rate = Rate::kbit(8),
               .ceil = Rate::mbit(8),
               .burst = 1000,
               .cburst = 100'000,
               .quantum = 1000});
  h.add_class({.id = kB,
               .parent = kP,
               .rate = Rate::kbit(8),
               .ceil = Rate::mbit(8),
               .burst = 1000,
               .cburst = 100'000,
               .quantum = 3000});
  PacketFactory f;
  fill(h, f, kA, 200);
  fill(h, f, kB, 200);
  std::vector<Sent> sent = run_until(h, Time::zero(), ms(100));
  ASSERT_GE(sent.size(), 14u);
  EXPECT_EQ(classes_of(sent).substr(0, 14),
            "ABAB"
            "AB"
            "ABBB"
            "ABBB");
  EXPECT_EQ(sent[3].at, ms(0));
  EXPECT_EQ(sent[4].at, ms(3));
  EXPECT_EQ(sent[5].at, ms(4));
  // 4 own + 98 borrowed (3..100 ms): A 2 + 1 + 24, B 2 + 1 + 72.
  ASSERT_EQ(sent.size(), 102u);
  EXPECT_EQ(count(sent, kA), 27u);
  EXPECT_EQ(count(sent, kB), 75u);
  EXPECT_EQ(h.class_stats(kA).borrows, 25u);
  EXPECT_EQ(h.class_stats(kB).borrows, 73u);
  EXPECT_EQ(h.class_stats(kA).lends, 2u);
  EXPECT_EQ(h.class_stats(kP).lends, 98u);
  EXPECT_EQ(h.class_stats(kB).borrows * kLen - 1 * kLen,
            3 * (h.class_stats(kA).borrows * kLen - 1 * kLen));
}

TEST(Htb, InnerClassesTakeTurnsWhenAFeedWraps) {
  // §9.3 "the scheduler descends feeds to a leaf": 1:1 (8 Mbit/s, burst 1 ms) over inner 1:2
  // and 1:3 (8 kbit/s, burst 1 B), leaves 1:10, 1:11 under 1:2 and 1:20 under 1:3 (8 kbit/s,
  // burst 1 B: one own packet each at t=0). All quanta 1000. The DRR pointer of a feed moves
  // per leaf packet; the parent's pointer moves on only when a child's feed wraps around
  // (htb_lookup_leaf "rewind & go up"). So 1:2 gets a whole round of its feed (10, 11), then
  // 1:3 gets one (20): 10 11 20 10 11 20 ..., one per ms from 2 ms (the root's rate).
  Htb h(by_flow_hash());
  h.add_class({.id = 0x1, .rate = Rate::mbit(8), .burst = 1000, .cburst = 1000});
  for (uint32_t inner : {0x2u, 0x3u}) {
    h.add_class({.id = inner,
                 .parent = 0x1,
                 .rate = Rate::kbit(8),
                 .ceil = Rate::mbit(8),
                 .burst = 1,
                 .cburst = 100'000});
  }
  for (auto [leaf, parent] : {std::pair{0x10u, 0x2u}, {0x11u, 0x2u}, {0x20u, 0x3u}}) {
    h.add_class({.id = leaf,
                 .parent = parent,
                 .rate = Rate::kbit(8),
                 .ceil = Rate::mbit(8),
                 .burst = 1,
                 .cburst = 100'000,
                 .quantum = 1000});
  }
  PacketFactory f;
  for (uint32_t leaf : {0x10u, 0x11u, 0x20u}) {
    fill(h, f, leaf, 20);
  }
  std::vector<Sent> sent = run_until(h, Time::zero(), ms(8));
  const uint32_t expected_cls[] = {0x10, 0x11, 0x20, 0x10, 0x11, 0x20, 0x10, 0x11, 0x20};
  const Time expected_at[] = {ms(0), ms(0), ms(0), ms(2), ms(3), ms(4), ms(5), ms(6), ms(7)};
  ASSERT_EQ(sent.size(), 10u);
  for (size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(sent[i].cls, expected_cls[i]) << i;
    EXPECT_EQ(sent[i].at, expected_at[i]) << i;
  }
  EXPECT_EQ(h.class_stats(0x2).level, 6);
  EXPECT_EQ(h.class_stats(0x2).mode, Mode::kMayBorrow);
  // Borrowed packets in [2, 8] ms: 1:10 at 2, 5, 8; 1:11 at 3, 6 — 5 through 1:2.
  EXPECT_EQ(sent[9].cls, 0x10u);
  EXPECT_EQ(sent[9].at, ms(8));
  EXPECT_EQ(h.class_stats(0x10).borrows, 3u);
  EXPECT_EQ(h.class_stats(0x2).borrows, 5u);
  EXPECT_EQ(h.class_stats(0x1).lends, 7u);
}

TEST(Htb, FeedPointerResumesAtLastPtrId) {
  // §9.3 DRR pointers: when the class a feed points to leaves the feed (here 1:20 becomes
  // CAN_SEND), the kernel forgets the pointer but remembers the class id (last_ptr_id) and
  // resumes at the first class with id >= it. 1:1 8 Mbit/s (burst 1 ms); 1:10, 1:30 at
  // 8 kbit/s and 1:20 at 1 Mbit/s, all with burst 1 B (8 us at 1 Mbit/s, so 1:20's tokens are
  // back at 0 at 7.992 ms); quanta 1000, 3000, 1000.
  //   t=0 own: 10 20 30; parent at -2 ms. Borrowed: 2 ms 10, 3 ms 20 (first visit: 1 packet,
  //   deficit 2000), 4 ms 30, 5 ms 10, 6 and 7 ms 20 (deficit 1000, 0). 7.992 ms: 1:20 is
  //   CAN_SEND, leaves the feed (pointer NULL, last_ptr_id 1:20), sends on its own tokens and
  //   rejoins. That packet also drained the parent to -1.008 ms: next at 9 ms, where the
  //   pointer resumes at 1:20 (deficit 0 → new quantum), then 1:30 at 10 ms.
  constexpr uint32_t kC = 0x30;
  Htb h(by_flow_hash());
  h.add_class({.id = kP, .rate = Rate::mbit(8), .burst = 1000, .cburst = 1000});
  h.add_class({.id = kA,
               .parent = kP,
               .rate = Rate::kbit(8),
               .ceil = Rate::mbit(8),
               .burst = 1,
               .cburst = 100'000,
               .quantum = 1000});
  h.add_class({.id = kB,
               .parent = kP,
               .rate = Rate::mbit(1),
               .ceil = Rate::mbit(8),
               .burst = 1,
               .cburst = 100'000,
               .quantum = 3000});
  h.add_class({.id = kC,
               .parent = kP,
               .rate = Rate::kbit(8),
               .ceil = Rate::mbit(8),
               .burst = 1,
               .cburst = 100'000,
               .quantum = 1000});
  PacketFactory f;
  for (uint32_t leaf : {kA, kB, kC}) {
    fill(h, f, leaf, 20);
  }
  std::vector<Sent> sent = run_until(h, Time::zero(), ms(10));
  const uint32_t expected_cls[] = {kA, kB, kC, kA, kB, kC, kA, kB, kB, kB, kB, kC};
  const Time expected_at[] = {ms(0), ms(0), ms(0), ms(2),    ms(3), ms(4),
                              ms(5), ms(6), ms(7), us(7992), ms(9), ms(10)};
  ASSERT_EQ(sent.size(), 12u);
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].cls, expected_cls[i]) << i;
    EXPECT_EQ(sent[i].at, expected_at[i]) << i;
  }
  EXPECT_EQ(h.class_stats(kB).lends, 2u);    // t=0 and 7.992 ms on its own tokens
  EXPECT_EQ(h.class_stats(kB).borrows, 4u);  // 3, 6, 7, 9 ms
}

TEST(Htb, EachGetsItsRateAndTheSpareByQuantum) {
  // 1:1 40 Mbit/s; 1:10 rate 24 Mbit/s quantum 1000, 1:20 rate 8 Mbit/s quantum 3000, both
  // ceil 40 Mbit/s. Both backlogged: each gets its rate and the 8 Mbit/s spare splits 1 : 3,
  // so 26 and 14 Mbit/s (3.25 MB and 1.75 MB in 1 s), within the bursts and a few packets.
  Htb h(by_flow_hash());
  h.add_class({.id = kP, .rate = Rate::mbit(40)});
  h.add_class({.id = kA,
               .parent = kP,
               .rate = Rate::mbit(24),
               .ceil = Rate::mbit(40),
               .quantum = 1000,
               .leaf = big_leaf()});
  h.add_class({.id = kB,
               .parent = kP,
               .rate = Rate::mbit(8),
               .ceil = Rate::mbit(40),
               .quantum = 3000,
               .leaf = big_leaf()});
  PacketFactory f;
  fill(h, f, kA, 6000);
  fill(h, f, kB, 6000);
  std::vector<Sent> sent = run_until(h, Time::zero(), ms(1000));
  const int64_t a = static_cast<int64_t>(count(sent, kA) * kLen);
  const int64_t b = static_cast<int64_t>(count(sent, kB) * kLen);
  EXPECT_NEAR(static_cast<double>(a + b), 5'000'000.0, 5000.0);  // the parent's rate
  EXPECT_NEAR(static_cast<double>(a), 3'250'000.0, 10'000.0);
  EXPECT_NEAR(static_cast<double>(b), 1'750'000.0, 10'000.0);
  EXPECT_GE(a, 3'000'000);  // at least its own rate
  EXPECT_GE(b, 1'000'000);
}

TEST(Htb, LowerPrioIsServedFirstWhenBorrowing) {
  // §9.3 "priorities 0..7, lower value first": 1:1 8 Mbit/s (burst 1 ms), leaves at 8 kbit/s
  // (burst 1 s): 1:10 prio 0, 1:20 prio 1. t=0 on own tokens: A, A (prio 0 row first), B, B;
  // the parent is at -3 ms. Borrowed from 3 ms: A until its queue is empty, then B.
  Htb h(by_flow_hash());
  h.add_class({.id = kP, .rate = Rate::mbit(8), .burst = 1000, .cburst = 1000});
  h.add_class({.id = kA,
               .parent = kP,
               .rate = Rate::kbit(8),
               .ceil = Rate::mbit(8),
               .burst = 1000,
               .cburst = 100'000,
               .prio = 0});
  h.add_class({.id = kB,
               .parent = kP,
               .rate = Rate::kbit(8),
               .ceil = Rate::mbit(8),
               .burst = 1000,
               .cburst = 100'000,
               .prio = 1});
  PacketFactory f;
  fill(h, f, kB, 5);  // B first: arrival order must not matter
  fill(h, f, kA, 5);
  std::vector<Sent> sent = run_until(h, Time::zero(), ms(100));
  EXPECT_EQ(classes_of(sent), "AABBAAABBB");
  const Time expected[] = {ms(0), ms(0), ms(0), ms(0), ms(3), ms(4), ms(5), ms(6), ms(7), ms(8)};
  ASSERT_EQ(sent.size(), 10u);
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].at, expected[i]) << i;
  }
}

TEST(Htb, ClassWithTokensIsServedBeforeBorrowers) {
  // §9.3: level 0 (CAN_SEND leaves) is scanned before the parent's level, so a leaf on its own
  // tokens goes before a borrower even with a worse priority. 1:20 (prio 0, 8 kbit/s) first
  // uses up its own tokens (2 packets), then 1:10 (prio 1, 8 Mbit/s, burst 3000 B = 3 ms) and
  // 1:20 are backlogged: A's 3 packets (tokens 3 → 0 ms, still CAN_SEND) go first.
  Htb h(by_flow_hash());
  h.add_class({.id = kP, .rate = Rate::mbit(8), .burst = 100'000, .cburst = 100'000});
  h.add_class(
      {.id = kA, .parent = kP, .rate = Rate::mbit(8), .burst = 3000, .cburst = 100'000, .prio = 1});
  h.add_class({.id = kB,
               .parent = kP,
               .rate = Rate::kbit(8),
               .ceil = Rate::mbit(8),
               .burst = 1000,
               .cburst = 100'000,
               .prio = 0});
  PacketFactory f;
  fill(h, f, kB, 2);
  ASSERT_TRUE(h.dequeue(Time::zero()));
  ASSERT_TRUE(h.dequeue(Time::zero()));
  EXPECT_EQ(h.class_stats(kB).mode, Mode::kMayBorrow);
  fill(h, f, kB, 3);
  fill(h, f, kA, 3);
  std::vector<Sent> sent;
  while (std::optional<Packet> p = h.dequeue(Time::zero())) {
    sent.push_back({Time::zero(), p->flow_hash});
  }
  EXPECT_EQ(classes_of(sent), "AAABBB");
  EXPECT_EQ(h.class_stats(kA).lends, 3u);
  EXPECT_EQ(h.class_stats(kA).borrows, 0u);
  EXPECT_EQ(h.class_stats(kB).lends, 2u);
  EXPECT_EQ(h.class_stats(kB).borrows, 3u);
  EXPECT_EQ(h.class_stats(kP).lends, 3u);
}

TEST(Htb, RootClassCannotBorrow) {
  // A top-level class over its rate but under its ceil is MAY_BORROW with nobody to borrow
  // from: it waits for its own tokens (ceil above rate is unreachable at the top).
  Htb h(by_flow_hash());
  h.add_class(
      {.id = kA, .rate = Rate::mbit(8), .ceil = Rate::mbit(80), .burst = 1000, .cburst = 100'000});
  PacketFactory f;
  fill(h, f, kA, 10);
  std::vector<Sent> sent = run_until(h, Time::zero(), ms(5));
  ASSERT_EQ(sent.size(), 7u);  // 0, 0, 1, 2, 3, 4, 5 ms
  EXPECT_EQ(sent[2].at, ms(1));
  EXPECT_EQ(h.class_stats(kA).mode, Mode::kMayBorrow);
}

// ---------------------------------------------------------------------------------------------
// Classification: default class and direct queue (§9.3).

TEST(Htb, UnclassifiedGoesToTheDefaultClass) {
  Htb::Params p = by_flow_hash();
  p.default_class = kB;
  Htb h(p);
  h.add_class({.id = kA, .rate = Rate::mbit(8)});
  h.add_class({.id = kB, .rate = Rate::mbit(8)});
  PacketFactory f;
  EXPECT_EQ(h.enqueue(f.make(kLen, 0), Time::zero()), Verdict::kQueued);     // unclassified
  EXPECT_EQ(h.enqueue(f.make(kLen, 0x77), Time::zero()), Verdict::kQueued);  // no such class
  EXPECT_EQ(h.enqueue(f.make(kLen, kA), Time::zero()), Verdict::kQueued);
  EXPECT_EQ(h.class_stats(kB).backlog_packets, 2u);
  EXPECT_EQ(h.class_stats(kA).backlog_packets, 1u);
  EXPECT_EQ(h.direct_backlog(), 0u);
  EXPECT_EQ(h.stats().direct_packets, 0u);
}

TEST(Htb, WithoutDefaultUnclassifiedBypassesShapingAndGoesFirst) {
  // No default class: unclassified packets use the direct queue (direct_qlen), which is
  // dequeued before any class and is not shaped.
  Htb::Params p = by_flow_hash();
  p.direct_qlen = 3;
  Htb h(p);
  h.add_class({.id = kA, .rate = Rate::mbit(8), .burst = 1000, .cburst = 1000});
  PacketFactory f;
  fill(h, f, kA, 4);
  for (int i = 0; i < 4; ++i) {
    const Verdict v = h.enqueue(f.make(kLen, 0), Time::zero());
    EXPECT_EQ(v, i < 3 ? Verdict::kQueued : Verdict::kDropped) << i;  // direct_qlen 3
  }
  EXPECT_EQ(h.stats().direct_packets, 3u);
  EXPECT_EQ(h.stats().dropped_packets, 1u);
  std::string order;
  while (std::optional<Packet> pk = h.dequeue(Time::zero())) {
    order += pk->flow_hash == 0 ? 'D' : 'A';
  }
  // Direct first, then the class's 2 packets on its 1 ms of tokens; the rest waits.
  EXPECT_EQ(order, "DDDAA");
  EXPECT_EQ(h.class_stats(kA).mode, Mode::kCantSend);
  // A direct packet arriving while the class is throttled still leaves at once.
  h.enqueue(f.make(kLen, 0), us(10));
  EXPECT_EQ(h.next_ready(us(10)), us(10));
  std::optional<Packet> d = h.dequeue(us(10));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->flow_hash, 0u);
  EXPECT_EQ(h.next_ready(us(10)), ms(1));
  testing::expect_stats_identities(h);
}

TEST(Htb, InnerOrMissingDefaultAndExplicitDirect) {
  // htb_classify: a default naming an inner class, or none, means the direct queue; a
  // classifier result of 1:0 (kDirect) selects the direct queue even with a default class.
  Htb::Params p = by_flow_hash();
  p.default_class = kP;
  Htb h(p);
  h.add_class({.id = kP, .rate = Rate::mbit(8)});
  h.add_class({.id = kA, .parent = kP, .rate = Rate::mbit(8)});
  PacketFactory f;
  h.enqueue(f.make(kLen, 0), Time::zero());
  h.enqueue(f.make(kLen, kP), Time::zero());  // an inner class is not a target either
  EXPECT_EQ(h.direct_backlog(), 2u);

  Htb::Params q = by_flow_hash();
  q.default_class = kA;
  Htb h2(q);
  h2.add_class({.id = kA, .rate = Rate::mbit(8)});
  h2.enqueue(f.make(kLen, Htb::kDirect), Time::zero());
  h2.enqueue(f.make(kLen, 0), Time::zero());
  EXPECT_EQ(h2.direct_backlog(), 1u);
  EXPECT_EQ(h2.class_stats(kA).backlog_packets, 1u);
}

TEST(Htb, DefaultClassifierUsesPriorityAsClassId) {
  // Without a classifier, skb->priority naming a leaf selects it (htb_classify's
  // "skb->priority == classid" rule on the minor id); anything else is unclassified.
  Htb::Params p;
  p.default_class = 2;
  Htb h(p);
  h.add_class({.id = 1, .rate = Rate::mbit(8)});
  h.add_class({.id = 2, .rate = Rate::mbit(8)});
  h.add_class({.id = 5, .rate = Rate::mbit(8)});
  PacketFactory f;
  h.enqueue(f.make(kLen, 0, /*priority=*/5), Time::zero());
  h.enqueue(f.make(kLen, 0, /*priority=*/1), Time::zero());
  h.enqueue(f.make(kLen, 0, /*priority=*/0), Time::zero());
  h.enqueue(f.make(kLen, 0, /*priority=*/7), Time::zero());
  EXPECT_EQ(h.class_stats(5).backlog_packets, 1u);
  EXPECT_EQ(h.class_stats(1).backlog_packets, 1u);
  EXPECT_EQ(h.class_stats(2).backlog_packets, 2u);
}

// ---------------------------------------------------------------------------------------------
// Stats, observer, peek.

TEST(Htb, LeafDropsAreHtbDropsAndReachTheObserver) {
  Htb h(by_flow_hash());
  h.add_class(
      {.id = kA, .rate = Rate::mbit(8), .leaf = AnyQueue(Fifo(Fifo::Params{.limit_packets = 2}))});
  RecordingObserver obs;
  h.set_observer(&obs);
  PacketFactory f;
  EXPECT_EQ(h.enqueue(f.make(kLen, kA), Time::zero()), Verdict::kQueued);
  EXPECT_EQ(h.enqueue(f.make(kLen, kA), Time::zero()), Verdict::kQueued);
  EXPECT_EQ(h.enqueue(f.make(700, kA), Time::zero()), Verdict::kDropped);
  EXPECT_EQ(h.stats().dropped_packets, 1u);
  EXPECT_EQ(h.stats().dropped_bytes, 700u);
  EXPECT_EQ(h.class_stats(kA).drops, 1u);
  EXPECT_EQ(h.backlog_packets(), 2u);
  EXPECT_EQ(h.backlog_bytes(), 2000u);
  ASSERT_EQ(obs.count(RecordingObserver::Event::kDrop), 1u);
  EXPECT_EQ(obs.ids(RecordingObserver::Event::kDrop)[0], 3u);
  EXPECT_EQ(obs.count(RecordingObserver::Event::kEnqueue), 2u);
  ASSERT_TRUE(h.dequeue(Time::zero()));
  EXPECT_EQ(obs.count(RecordingObserver::Event::kDequeue), 1u);
  testing::expect_stats_identities(h);
  h.set_observer(nullptr);
  h.enqueue(f.make(kLen, kA), Time::zero());
  h.enqueue(f.make(kLen, kA), Time::zero());  // dropped, not observed
  EXPECT_EQ(obs.count(RecordingObserver::Event::kDrop), 1u);
  EXPECT_EQ(h.stats().dropped_packets, 2u);
}

TEST(Htb, PeekStashesTheDequeuedPacket) {
  // qdisc_peek_dequeued: peek runs the dequeue (tokens are charged) and keeps the packet,
  // which still counts in the backlog until dequeue() hands it out.
  Htb h(by_flow_hash());
  h.add_class({.id = kA, .rate = Rate::mbit(8)});
  PacketFactory f;
  fill(h, f, kA, 2);
  const Packet* p = h.peek(Time::zero());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->id, 1u);
  EXPECT_EQ(h.class_stats(kA).tokens, 600'000);
  EXPECT_EQ(h.backlog_packets(), 2u);
  EXPECT_EQ(h.stats().dequeued_packets, 0u);
  EXPECT_EQ(h.peek(Time::zero()), p);
  std::optional<Packet> d = h.dequeue(Time::zero());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, 1u);
  EXPECT_EQ(h.backlog_packets(), 1u);
  testing::expect_stats_identities(h);
}

TEST(Htb, NextReadyIsNulloptWhenEmpty) {
  Htb h(by_flow_hash());
  h.add_class({.id = kA, .rate = Rate::mbit(8)});
  EXPECT_EQ(h.next_ready(Time::zero()), std::nullopt);
  EXPECT_FALSE(h.dequeue(Time::zero()));
  EXPECT_EQ(h.next_event(), std::nullopt);
}

TEST(Htb, IsMovable) {
  Htb h(by_flow_hash());
  h.add_class({.id = kA, .rate = Rate::mbit(8)});
  RecordingObserver obs;
  h.set_observer(&obs);
  PacketFactory f;
  h.enqueue(f.make(kLen, kA), Time::zero());
  Htb moved(std::move(h));
  moved.enqueue(f.make(kLen, kA), Time::zero());
  EXPECT_EQ(moved.backlog_packets(), 2u);
  EXPECT_EQ(obs.count(RecordingObserver::Event::kEnqueue), 2u);  // leaf events still forwarded
  AnyQueue any(std::move(moved));
  EXPECT_EQ(any.backlog_packets(), 2u);
  any.set_observer(nullptr);
}

// ---------------------------------------------------------------------------------------------
// Property tests (random operations; the driver advances time to next_ready, so it also checks
// that next_ready is exact: a dequeue there must succeed... or next_ready must move on).

Htb make_property_tree(bool hysteresis, uint32_t default_class, int64_t leaf_limit) {
  Htb::Params p;
  p.hysteresis = hysteresis;
  p.default_class = default_class;
  p.direct_qlen = 4;
  Htb h(p);
  h.add_class({.id = 1, .rate = Rate::mbit(20)});
  h.add_class({.id = 2, .parent = 1, .rate = Rate::mbit(12), .ceil = Rate::mbit(20)});
  h.add_class({.id = 3, .parent = 1, .rate = Rate::mbit(2), .ceil = Rate::mbit(10), .prio = 1});
  auto leaf = [leaf_limit] { return AnyQueue(Fifo(Fifo::Params{.limit_packets = leaf_limit})); };
  h.add_class({.id = 4,
               .parent = 2,
               .rate = Rate::mbit(4),
               .ceil = Rate::mbit(20),
               .quantum = 1514,
               .leaf = leaf()});
  h.add_class({.id = 5,
               .parent = 2,
               .rate = Rate::mbit(1),
               .ceil = Rate::mbit(8),
               .prio = 2,
               .leaf = leaf()});
  h.add_class({.id = 6,
               .parent = 3,
               .rate = Rate::mbit(1),
               .ceil = Rate::mbit(10),
               .burst = 20'000,
               .leaf = leaf()});
  h.add_class({.id = 7,
               .parent = 3,
               .rate = Rate::kbit(500),
               .ceil = Rate::mbit(3),
               .cburst = 3000,
               .prio = 1,
               .quantum = 3000,
               .leaf = leaf()});
  return h;
}

TEST(Htb, PropertiesDeepTree) {
  // Priorities 0..15 select leaves 4..7 (priority rule), the rest go to the default class or
  // the direct queue (4 packets); leaves hold 6 packets, so drops happen.
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Htb h = make_property_tree(false, 4, 6);
    testing::check_queue_properties(h, {.seed = seed});
    EXPECT_GT(h.stats().dropped_packets, 0u);
    EXPECT_GT(h.stats().overlimits, 0u);
  }
  for (uint64_t seed = 11; seed <= 13; ++seed) {
    Htb h = make_property_tree(true, 0, 10);
    testing::check_queue_properties(h, {.seed = seed, .max_step = 50_us});
    EXPECT_GT(h.stats().direct_packets, 0u);
  }
}

TEST(Htb, PropertiesFlatAndSingleClass) {
  for (uint64_t seed = 21; seed <= 23; ++seed) {
    Htb::Params p;
    p.default_class = 9;
    Htb h(p);
    h.add_class({.id = 9,
                 .rate = Rate::mbit(5),
                 .leaf = AnyQueue(Fifo(Fifo::Params{.limit_packets = 0, .limit_bytes = 8000}))});
    testing::check_queue_properties(h, {.seed = seed});
  }
  for (uint64_t seed = 31; seed <= 33; ++seed) {
    Htb::Params p;
    p.default_class = 3;
    Htb h(p);
    for (uint32_t id = 1; id <= 6; ++id) {
      h.add_class({.id = id,
                   .rate = Rate::kbit(200 * id),
                   .ceil = Rate::mbit(id),
                   .prio = id % 3,
                   .leaf = AnyQueue(Fifo(Fifo::Params{.limit_packets = 5}))});
    }
    testing::check_queue_properties(h, {.seed = seed, .max_step = 1000_us});
  }
}

TEST(Htb, PropertiesWithFqCodelLeaves) {
  // fq_codel leaves drop inside the leaf at enqueue (fattest-flow batch drop, limit 12) and at
  // dequeue (CoDel, 1 ms target at 1-4 Mbit/s): every such drop must show up in HTB's counters
  // and observer, and the leaf's backlog mirror must stay exact.
  auto fq = [] {
    return AnyQueue(FqCodel(FqCodel::Params{.limit = 12,
                                            .flows = 8,
                                            .drop_batch = 3,
                                            .quantum = 300,
                                            .target = 1_ms,
                                            .interval = 10_ms}));
  };
  for (uint64_t seed = 41; seed <= 44; ++seed) {
    Htb::Params p;
    p.default_class = 4;
    Htb h(p);
    h.add_class({.id = 1, .rate = Rate::mbit(6)});
    h.add_class({.id = 4, .parent = 1, .rate = Rate::mbit(1), .ceil = Rate::mbit(4), .leaf = fq()});
    h.add_class({.id = 5,
                 .parent = 1,
                 .rate = Rate::mbit(2),
                 .ceil = Rate::mbit(6),
                 .prio = 1,
                 .leaf = fq()});
    testing::check_queue_properties(h, {.seed = seed, .flows = 24, .max_step = 400_us});
    // No direct traffic (everything unclassified goes to 1:4): HTB's drops are the leaves'.
    const FqCodel* l4 = h.leaf(4).get<FqCodel>();
    const FqCodel* l5 = h.leaf(5).get<FqCodel>();
    ASSERT_TRUE(l4 != nullptr && l5 != nullptr);
    EXPECT_EQ(h.class_stats(4).drops, l4->stats().dropped_packets);
    EXPECT_EQ(h.class_stats(5).drops, l5->stats().dropped_packets);
    EXPECT_EQ(h.stats().dropped_packets, l4->stats().dropped_packets + l5->stats().dropped_packets);
    EXPECT_EQ(h.stats().direct_packets, 0u);
    EXPECT_GT(l4->stats().codel.drop_count + l5->stats().codel.drop_count, 0u);
    EXPECT_GT(l4->stats().drop_overlimit + l5->stats().drop_overlimit, 0u);
  }
}

}  // namespace
}  // namespace nicsim::algo
