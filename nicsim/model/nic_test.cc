// QdiscDropRelease: drops of packets a qdisc had accepted become TSQ releases; a packet refused
// at send() does not (the verdict tells the caller). Contract in nicsim/model/nic.h.
#include "nicsim/model/nic.h"

#include <gtest/gtest.h>

#include <vector>

#include "nicsim/algo/fifo.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/testing/packet_factory.h"
#include "nicsim/testing/recording_observer.h"

namespace nicsim::model {
namespace {

struct ReleaseSink : NicSink {
  std::vector<TxRelease> releases;
  void deliver(Packet&&, Time) override {}
  void tx_released(const TxRelease& r, Time) override { releases.push_back(r); }
};

Verdict offer(AnyQueue& q, QdiscDropRelease& d, Packet&& p, Time now) {
  d.begin_enqueue(p.id);
  const Verdict v = q.enqueue(std::move(p), now);
  d.end_enqueue();
  return v;
}

TEST(QdiscDropRelease, RefusedArrivalIsNotReleased) {
  AnyQueue q = AnyQueue::make<algo::Fifo>(algo::Fifo::Params{.limit_packets = 1});
  ReleaseSink sink;
  testing::RecordingObserver user;
  QdiscDropRelease d;
  d.set_sink(&sink);
  d.set_user(&user);
  q.set_observer(&d);
  testing::PacketFactory f;
  EXPECT_EQ(offer(q, d, f.make(100), Time::zero()), Verdict::kQueued);
  EXPECT_EQ(offer(q, d, f.make(100), Time::zero()), Verdict::kDropped);
  EXPECT_TRUE(sink.releases.empty());
  EXPECT_EQ(user.count(testing::RecordingObserver::Event::kDrop), 1u);  // still forwarded
}

TEST(QdiscDropRelease, HeadDropOfAnAcceptedPacketIsReleased) {
  // fq_codel over its packet limit drops from the head of the fattest flow (§8.5): the
  // victim was accepted earlier, so its socket gets the bytes back.
  AnyQueue q = AnyQueue::make<algo::FqCodel>(algo::FqCodel::Params{.limit = 2});
  ReleaseSink sink;
  QdiscDropRelease d;
  d.set_sink(&sink);
  q.set_observer(&d);
  testing::PacketFactory f;
  Packet a = f.make(1000, 1);
  a.meta = 7;
  offer(q, d, std::move(a), Time::zero());
  offer(q, d, f.make(1000, 1), Time::zero());
  // Third packet: the flow holds 3000 bytes; the batch drops from its head until half of
  // that (1500 bytes) is gone — packets 1 and 2. The arrival itself stays.
  EXPECT_EQ(offer(q, d, f.make(1000, 1), Time::zero()), Verdict::kCongested);
  ASSERT_EQ(sink.releases.size(), 2u);
  EXPECT_EQ(sink.releases[0].packet_id, 1u);
  EXPECT_EQ(sink.releases[0].bytes, 1000u);
  EXPECT_EQ(sink.releases[0].meta, 7u);
  EXPECT_EQ(sink.releases[1].packet_id, 2u);
  EXPECT_EQ(d.released_drops(), 2u);
  EXPECT_EQ(q.backlog_packets(), 1u);
}

}  // namespace
}  // namespace nicsim::model
