// LiveHistory: growth between reports, the growing mark, freed-after-report counts, what is
// left out; and the text form.
#include "report/live_report.h"

#include <sstream>

#include <gtest/gtest.h>

namespace memtrack::report {
namespace {

// Symbolizes address A as function "fA".
const std::vector<Frame>& fake_symbolize(uint64_t address, bool) {
  static std::map<uint64_t, std::vector<Frame>> cache;
  std::vector<Frame>& frames = cache[address];
  if (frames.empty()) {
    Frame f;
    f.address = address;
    f.function = "f" + std::to_string(address);
    f.file = "prog.c";
    f.line = static_cast<int>(address);
    frames.push_back(f);
  }
  return frames;
}

struct Site {
  uint32_t stack;
  uint64_t blocks;
  uint64_t freed_total;
  bool internal = false;
};

ResultFile live_file(uint32_t pid, uint32_t sequence, const std::vector<Site>& sites) {
  ResultFile file;
  file.pid = pid;
  file.command = {"./daemon"};
  RawLive live;
  live.sequence = sequence;
  live.uptime_ms = 1000 * sequence;
  live.expire_ms = live.interval_ms = 1000;
  for (const Site& s : sites) {
    file.stacks[s.stack] = {s.stack};
    live.sites.push_back(RawLiveSite{s.stack, s.internal, s.blocks, 100 * s.blocks, s.freed_total});
  }
  file.live = live;
  return file;
}

LiveReport add(LiveHistory& history, const ResultFile& file,
               const Suppressions& suppressions = Suppressions()) {
  return history.add(file, fake_symbolize, suppressions);
}

TEST(LiveHistoryTest, GrowthAndTheGrowingMark) {
  LiveHistory history;
  std::vector<LiveReport> reports;
  for (uint32_t seq = 1; seq <= 4; ++seq) {
    reports.push_back(add(history, live_file(7, seq, {{10, 5 * seq, 0}})));
  }
  ASSERT_EQ(reports[0].sites.size(), 1u);
  EXPECT_TRUE(reports[0].sites[0].first_report);
  EXPECT_EQ(reports[0].sites[0].growth_bytes, 500);
  EXPECT_FALSE(reports[1].sites[0].first_report);
  EXPECT_EQ(reports[1].sites[0].growth_blocks, 5);
  EXPECT_EQ(reports[1].sites[0].growth_bytes, 500);
  EXPECT_FALSE(reports[1].sites[0].growing);
  EXPECT_TRUE(reports[2].sites[0].growing);  // rose in reports 1, 2 and 3
  EXPECT_TRUE(reports[3].sites[0].growing);
  EXPECT_EQ(reports[3].sites[0].stack[0].function, "f10");
  EXPECT_EQ(reports[3].old_bytes, 2000u);
}

TEST(LiveHistoryTest, FreedBlocksEndTheStreakAndAreCounted) {
  LiveHistory history;
  add(history, live_file(7, 1, {{10, 5, 0}}));
  add(history, live_file(7, 2, {{10, 10, 0}}));
  LiveReport third = add(history, live_file(7, 3, {{10, 20, 4}}));  // rose, but 4 freed
  EXPECT_FALSE(third.sites[0].growing);
  EXPECT_EQ(third.sites[0].freed_since_last, 4u);
  EXPECT_EQ(third.freed_since_last, 4u);
  LiveReport fourth = add(history, live_file(7, 4, {{10, 25, 4}}));
  EXPECT_EQ(fourth.sites[0].freed_since_last, 0u);
  EXPECT_FALSE(fourth.sites[0].growing);  // the streak starts again
}

TEST(LiveHistoryTest, AHoldingSiteIsNeverGrowing) {
  LiveHistory history;
  // Holds 20 blocks past the threshold, frees them, holds 20 new ones, ...
  std::vector<std::pair<uint64_t, uint64_t>> pattern = {{20, 0}, {0, 20},  {20, 20},
                                                        {0, 40}, {20, 40}, {0, 60}};
  uint32_t seq = 0;
  for (auto [blocks, freed] : pattern) {
    LiveReport r = add(history, live_file(7, ++seq, {{11, blocks, freed}}));
    for (const LiveSiteReport& s : r.sites) EXPECT_FALSE(s.growing) << "report " << seq;
  }
}

TEST(LiveHistoryTest, ProcessesAreKeptApartAndInternalOrSuppressedSitesLeftOut) {
  LiveHistory history;
  add(history, live_file(7, 1, {{10, 5, 0}}));
  LiveReport other = add(history, live_file(8, 1, {{10, 9, 0}, {12, 3, 0, true}}));
  ASSERT_EQ(other.sites.size(), 1u);  // the runtime-internal site is left out
  EXPECT_TRUE(other.sites[0].first_report);
  EXPECT_EQ(other.sites[0].growth_blocks, 9);
  Suppressions suppressions = Suppressions::parse("leak:f10\n", "supp");
  LiveReport suppressed = add(history, live_file(7, 2, {{10, 6, 0}, {13, 1, 0}}), suppressions);
  ASSERT_EQ(suppressed.sites.size(), 1u);
  EXPECT_EQ(suppressed.sites[0].stack[0].function, "f13");
}

TEST(LiveHistoryTest, ASiteThatDropsOutStartsAgain) {
  LiveHistory history;
  add(history, live_file(7, 1, {{10, 5, 0}}));
  add(history, live_file(7, 2, {}));
  LiveReport third = add(history, live_file(7, 3, {{10, 5, 0}}));
  EXPECT_TRUE(third.sites[0].first_report);
  EXPECT_EQ(third.sites[0].growth_blocks, 5);
}

TEST(LiveTextTest, HeaderSitesAndFreedLine) {
  LiveHistory history;
  add(history, live_file(7, 1, {{10, 5, 0}}));
  add(history, live_file(7, 2, {{10, 10, 0}}));
  LiveReport r = add(history, live_file(7, 3, {{10, 15, 0}, {11, 2, 3}}));
  std::ostringstream out;
  render_live_text(r, out, false);
  EXPECT_EQ(out.str(),
            "==7== memtrack live report #3 for ./daemon (pid 7), after 3 s: 1,700 bytes in 17 "
            "blocks older than 1 s, at 2 sites\n"
            "==7== 1,500 bytes in 15 blocks older than 1 s (+500 bytes, +5 blocks since the last "
            "report; GROWING), allocated at:\n"
            "==7==    #0 f10 (prog.c:10)\n"
            "==7== 200 bytes in 2 blocks older than 1 s (first reported; 3 blocks reported "
            "before freed since), allocated at:\n"
            "==7==    #0 f11 (prog.c:11)\n"
            "==7== 3 blocks counted by earlier live reports were freed since the last one\n"
            "==7==\n");
}

// The sampled mode: growth and the growing mark follow a site's estimates, the blocks not
// sampled are a line of their own, and the header's totals stay exact.
TEST(LiveHistoryTest, SampledSitesGrowByTheirEstimates) {
  LiveHistory history;
  LiveReport last;
  for (uint32_t seq = 1; seq <= 3; ++seq) {
    ResultFile file = live_file(7, seq, {{10, 2, 0}});  // the same 2 sampled blocks each time
    file.sample_interval = 4096;
    file.live->sites[0].estimated_blocks = 100 * seq;
    file.live->sites[0].estimated_bytes = 12345 * seq;
    RawLiveSite unsampled;
    unsampled.not_sampled = true;
    unsampled.old_blocks = 300 * seq;
    unsampled.old_bytes = 3000 * seq;
    file.stacks[0] = {};
    file.live->sites.push_back(unsampled);
    last = add(history, file);
  }
  ASSERT_EQ(last.sites.size(), 2u);
  const LiveSiteReport& site = last.sites[0];
  EXPECT_EQ(site.sampling, LeakGroup::Sampling::kEstimated);
  EXPECT_EQ(site.growth_blocks, 100);
  EXPECT_EQ(site.growth_bytes, 12345);
  EXPECT_TRUE(site.growing);
  EXPECT_EQ(last.sites[1].sampling, LeakGroup::Sampling::kNotSampled);
  EXPECT_EQ(last.old_blocks, 2u + 900u);
  std::ostringstream out;
  render_live_text(last, out, false);
  EXPECT_EQ(out.str(),
            "==7== memtrack live report #3 for ./daemon (pid 7), after 3 s: 9,200 bytes in 902 "
            "blocks older than 1 s, at 2 sites\n"
            "==7== SAMPLED: about one allocation per 4,096 bytes has a stack; the totals are "
            "exact, the sites are estimates (~)\n"
            "==7== ~37,000 bytes in ~300 blocks (2 sampled) older than 1 s (~+12,345 bytes, "
            "~+100 blocks since the last report; GROWING), allocated at:\n"
            "==7==    #0 f10 (prog.c:10)\n"
            "==7== 9,000 bytes in 900 blocks older than 1 s were not sampled (+3,000 bytes, +300 "
            "blocks since the last report; GROWING; no stack, the estimates above stand for "
            "them)\n"
            "==7==\n");
}

}  // namespace
}  // namespace memtrack::report
