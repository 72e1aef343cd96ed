#pragma once
// Test helper: asserts the conservation identities of nicsim/core/stats.h on any element.

#include <gtest/gtest.h>

#include "nicsim/core/element.h"

namespace nicsim::testing {

template <QueueElement E>
void expect_stats_identities(const E& e) {
  const QueueStats& s = e.stats();
  EXPECT_EQ(s.enqueued_packets, s.dequeued_packets + s.dropped_packets + e.backlog_packets())
      << "packets: enqueued != dequeued + dropped + backlog";
  EXPECT_EQ(s.enqueued_bytes, s.dequeued_bytes + s.dropped_bytes + e.backlog_bytes())
      << "bytes: enqueued != dequeued + dropped + backlog";
}

}  // namespace nicsim::testing
