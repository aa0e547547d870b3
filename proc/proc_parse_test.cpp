// The /proc file parsers on good, tricky and malformed text.
#include "proc/proc_parse.h"

#include <gtest/gtest.h>

#include "proc/test_tree.h"

namespace memtrack::top {
namespace {

using testing::stat_line;

TEST(ParseStat, ReadsTheFieldsTopUses) {
  std::optional<StatFields> s =
      try_parse_stat(stat_line(42, "bash", 'R', 7, 0x400100, 250, 125, 3, 98765));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pid, 42u);
  EXPECT_EQ(s->comm, "bash");
  EXPECT_EQ(s->state, 'R');
  EXPECT_EQ(s->ppid, 7u);
  EXPECT_EQ(s->flags, 0x400100u);
  EXPECT_EQ(s->utime, 250u);
  EXPECT_EQ(s->stime, 125u);
  EXPECT_EQ(s->num_threads, 3u);
  EXPECT_EQ(s->start_ticks, 98765u);
}

TEST(ParseStat, CommWithSpacesAndParenthesesRunsToTheLastParenthesis) {
  std::optional<StatFields> s = try_parse_stat(stat_line(9, "a) (b c) d", 'S', 3));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->comm, "a) (b c) d");
  EXPECT_EQ(s->ppid, 3u);
  s = try_parse_stat(stat_line(9, "", 'S', 3));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->comm, "");
}

TEST(ParseStat, ControlCharactersInCommBecomeQuestionMarks) {
  std::optional<StatFields> s = try_parse_stat(stat_line(9, "two\nlines\x1b[2J", 'S'));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->comm, "two?lines?[2J");
}

TEST(ParseStat, KernelThreadFlag) {
  std::optional<StatFields> s =
      try_parse_stat(stat_line(2, "kthreadd", 'S', 0, 0x208040 | kPfKthread));
  ASSERT_TRUE(s);
  EXPECT_NE(s->flags & kPfKthread, 0u);
}

TEST(ParseStat, MalformedIsNullopt) {
  std::string good = stat_line(42, "x", 'S');
  EXPECT_FALSE(try_parse_stat(""));
  EXPECT_FALSE(try_parse_stat("\n"));
  EXPECT_FALSE(try_parse_stat("42 (x S 1 2 3"));                          // no ')'
  EXPECT_FALSE(try_parse_stat("42 x) S 1"));                              // no '('
  EXPECT_FALSE(try_parse_stat("abc (x) S 1 1 1 0 -1 0"));                 // pid not a number
  EXPECT_FALSE(try_parse_stat(good.substr(0, good.find(" 1000 1000"))));  // cut before starttime
  EXPECT_FALSE(try_parse_stat("42 (x) SS " + good.substr(good.find(") S ") + 4)));      // state
  EXPECT_FALSE(try_parse_stat("42 (x) S -1 " + good.substr(good.find(") S 1 ") + 6)));  // ppid
  std::string bad_utime = stat_line(42, "x", 'S', 1, 0, 7777);
  bad_utime.replace(bad_utime.find("7777"), 4, "77x7");
  EXPECT_FALSE(try_parse_stat(bad_utime));
}

TEST(ParseStatus, UidVmRssVmSwap) {
  StatusFields s = parse_status(
      "Name:\tbash\nUid:\t1000\t1001\t1000\t1000\nVmRSS:\t    5120 kB\nVmSwap:\t      12 kB\n");
  EXPECT_EQ(s.euid, 1001u);
  EXPECT_EQ(s.vm_rss_kb, 5120u);
  EXPECT_EQ(s.vm_swap_kb, 12u);
}

TEST(ParseStatus, MissingOrMalformedLinesAreNullopt) {
  StatusFields kernel = parse_status("Name:\tkthreadd\nUid:\t0\t0\t0\t0\nKthread:\t1\n");
  EXPECT_EQ(kernel.euid, 0u);
  EXPECT_FALSE(kernel.vm_rss_kb);
  EXPECT_FALSE(kernel.vm_swap_kb);
  StatusFields bad = parse_status("Uid:\tx\nVmRSS:\t12 MB\nVmSwap:\t\n");
  EXPECT_FALSE(bad.euid);
  EXPECT_FALSE(bad.vm_rss_kb);
  EXPECT_FALSE(bad.vm_swap_kb);
  StatusFields empty = parse_status("");
  EXPECT_FALSE(empty.euid);
  StatusFields cut = parse_status("Name:\tx\nVmRSS:\t  12");  // cut short mid-line
  EXPECT_FALSE(cut.vm_rss_kb);
}

TEST(ParseStatm, ResidentPages) {
  EXPECT_EQ(try_parse_statm_resident_pages("5000 1234 100 10 0 800 0\n"), 1234u);
  EXPECT_EQ(try_parse_statm_resident_pages("0 0 0 0 0 0 0\n"), 0u);
  EXPECT_FALSE(try_parse_statm_resident_pages(""));
  EXPECT_FALSE(try_parse_statm_resident_pages("5000\n"));
  EXPECT_FALSE(try_parse_statm_resident_pages("5000 x 1\n"));
}

TEST(ParseSmapsRollup, PssUssSwap) {
  std::optional<RollupFields> r = try_parse_smaps_rollup(
      "55a91f6e7000-7ffcfb475000 ---p 00000000 00:00 0                          [rollup]\n"
      "Rss:                1716 kB\nPss:                 505 kB\nShared_Clean:       1544 kB\n"
      "Private_Clean:        60 kB\nPrivate_Dirty:       112 kB\nSwap:                  7 kB\n"
      "SwapPss:               7 kB\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pss_kb, 505u);
  EXPECT_EQ(r->uss_kb, 172u);
  EXPECT_EQ(r->swap_kb, 7u);
}

TEST(ParseSmapsRollup, EmptyOrIncompleteIsNullopt) {
  EXPECT_FALSE(try_parse_smaps_rollup(""));  // kernel threads, zombies
  EXPECT_FALSE(try_parse_smaps_rollup("Pss: 5 kB\nPrivate_Clean: 1 kB\n"));
  EXPECT_FALSE(try_parse_smaps_rollup("Pss: x kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 1 kB\n"));
}

TEST(ParseCmdline, JoinsArgumentsAndNeutralisesControlCharacters) {
  using namespace std::string_literals;
  EXPECT_EQ(parse_cmdline("/bin/ls\0-l\0/tmp\0"s), "/bin/ls -l /tmp");
  EXPECT_EQ(parse_cmdline("title set by setproctitle"), "title set by setproctitle");
  EXPECT_EQ(parse_cmdline("a\0\0b\0\0\0"s), "a  b");
  EXPECT_EQ(parse_cmdline("x\ny\x1b[31m\0"s), "x?y?[31m");
  EXPECT_EQ(parse_cmdline(""), "");
  std::string huge(3 << 20, 'a');
  EXPECT_EQ(parse_cmdline(huge).size(), huge.size());  // never truncated
}

}  // namespace
}  // namespace memtrack::top
