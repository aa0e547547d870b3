// Unit tests of the bounded RSS history.
#include "ui/history.h"

#include <gtest/gtest.h>

namespace memtrack::ui {
namespace {

TEST(History, KeepsEveryRecentSample) {
  History h;
  for (int i = 0; i < 3; ++i) {
    h.add(7, 100, i, 1000 + static_cast<uint64_t>(i));
    h.end_sample();
  }
  std::vector<HistoryPoint> p = h.points(7);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].rss_kb, 1000u);
  EXPECT_EQ(p[2].rss_kb, 1002u);
  EXPECT_TRUE(h.points(8).empty());
  EXPECT_EQ(h.recent_rss_kb(7, 2), (std::vector<uint32_t>{1001, 1002}));
  EXPECT_EQ(h.recent_rss_kb(7, 10), (std::vector<uint32_t>{1000, 1001, 1002}));
  EXPECT_TRUE(h.recent_rss_kb(8, 2).empty());
}

TEST(History, OlderSamplesAreTenSecondMaxima) {
  History h;
  // One hour at 1 s: 300 fine points, and 10 s maxima before them.
  for (int i = 0; i < 3600; ++i) {
    h.add(7, 100, i, static_cast<uint64_t>(i % 10 == 3 ? 5000 : 1000));
    h.end_sample();
  }
  std::vector<HistoryPoint> p = h.points(7);
  ASSERT_EQ(p.size(), (3600 - 300) / 10 + 300u);
  EXPECT_EQ(p.front().seconds, 0);
  EXPECT_EQ(p.front().rss_kb, 5000u);  // the spike of the bucket survives
  EXPECT_EQ(p[1].seconds, 10);
  EXPECT_EQ(p.back().seconds, 3599);
}

TEST(History, IsBounded) {
  History h;
  for (int i = 0; i < 4 * 3600; ++i) {
    h.add(7, 100, i, 1);
    h.end_sample();
  }
  EXPECT_LE(h.points(7).size(), History::kFinePoints + History::kCoarsePoints);
}

TEST(History, ForgetsGoneProcessesAndReusedPids) {
  History h;
  h.add(7, 100, 0, 1);
  h.add(8, 100, 0, 1);
  h.end_sample();
  h.add(7, 200, 1, 2);  // pid 7 reused by a new process
  h.end_sample();
  EXPECT_EQ(h.process_count(), 1u);
  ASSERT_EQ(h.points(7).size(), 1u);
  EXPECT_EQ(h.points(7)[0].rss_kb, 2u);
}

}  // namespace
}  // namespace memtrack::ui
