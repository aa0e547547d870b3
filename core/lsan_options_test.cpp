#include "core/lsan_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace memtrack::core {
namespace {

struct Parsed {
  std::string name;
  std::string value;
  LsanOption option;
};

std::vector<Parsed> parse_all(const char* text) {
  std::vector<Parsed> out;
  size_t pos = 0;
  LsanEntry e;
  while (next_lsan_entry(text, &pos, &e)) {
    out.push_back({std::string(e.name, e.name_size), std::string(e.value, e.value_size), e.option});
  }
  return out;
}

TEST(LsanOptions, SplitsOnEverySeparatorSanitizersAccept) {
  auto parsed = parse_all(" exitcode=7:use_stacks=0,max_leaks=3\tprint_suppressions=1\nfoo=bar ");
  ASSERT_EQ(parsed.size(), 5u);
  EXPECT_EQ(parsed[0].name, "exitcode");
  EXPECT_EQ(parsed[0].value, "7");
  EXPECT_EQ(parsed[0].option, LsanOption::kExitcode);
  EXPECT_EQ(parsed[1].option, LsanOption::kUseStacks);
  EXPECT_EQ(parsed[2].option, LsanOption::kMaxLeaks);
  EXPECT_EQ(parsed[2].value, "3");
  EXPECT_EQ(parsed[3].option, LsanOption::kPrintSuppressions);
  EXPECT_EQ(parsed[4].name, "foo");
  EXPECT_EQ(parsed[4].value, "bar");
  EXPECT_EQ(parsed[4].option, LsanOption::kOther);
}

TEST(LsanOptions, QuotedValuesKeepSeparators) {
  auto parsed = parse_all("suppressions='/tmp/a b:c.supp':log_path=\"x,y\"");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].value, "/tmp/a b:c.supp");
  EXPECT_EQ(parsed[0].option, LsanOption::kSuppressions);
  EXPECT_EQ(parsed[1].value, "x,y");
  EXPECT_EQ(parsed[1].option, LsanOption::kLogPath);
}

TEST(LsanOptions, EntryWithoutValueAndUnclosedQuote) {
  auto parsed = parse_all("verbosity:suppressions='open");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].name, "verbosity");
  EXPECT_EQ(parsed[0].value, "");
  EXPECT_EQ(parsed[1].value, "open");
}

TEST(LsanOptions, EmptyAndNullText) {
  EXPECT_TRUE(parse_all("").empty());
  EXPECT_TRUE(parse_all(" :,: ").empty());
  size_t pos = 0;
  LsanEntry e;
  EXPECT_FALSE(next_lsan_entry(nullptr, &pos, &e));
}

TEST(LsanOptions, RuntimeOptionsSetTheScanFlags) {
  Flags flags;
  set_defaults(&flags);
  const char* text =
      "use_globals=0:use_stacks=false:use_registers=no:use_root_regions=0:"
      "malloc_context_size=7:exitcode=3";
  size_t pos = 0;
  LsanEntry e;
  int applied = 0;
  while (next_lsan_entry(text, &pos, &e)) {
    EXPECT_EQ(is_lsan_runtime_option(e.option), e.option != LsanOption::kExitcode);
    if (apply_lsan_runtime_option(e, &flags)) ++applied;
  }
  EXPECT_EQ(applied, 5);
  EXPECT_FALSE(flags.scan_globals);
  EXPECT_FALSE(flags.scan_stacks);
  EXPECT_FALSE(flags.scan_registers);
  EXPECT_FALSE(flags.scan_root_regions);
  EXPECT_EQ(flags.max_frames, 7);
}

TEST(LsanOptions, BadValuesLeaveTheFlagsAlone) {
  Flags flags;
  set_defaults(&flags);
  const char* text = "use_globals=maybe:malloc_context_size=0:malloc_context_size=9999";
  size_t pos = 0;
  LsanEntry e;
  while (next_lsan_entry(text, &pos, &e)) EXPECT_FALSE(apply_lsan_runtime_option(e, &flags));
  EXPECT_TRUE(flags.scan_globals);
  EXPECT_EQ(flags.max_frames, 32);
}

TEST(LsanOptions, StandaloneReportOptions) {
  Flags flags;
  set_defaults(&flags);
  const char* text = "max_leaks=4:log_path=/tmp/lsan.log:use_stacks=0";
  size_t pos = 0;
  LsanEntry e;
  int applied = 0;
  while (next_lsan_entry(text, &pos, &e)) applied += apply_lsan_standalone_option(e, &flags);
  EXPECT_EQ(applied, 2);
  EXPECT_EQ(flags.max_groups, 4);
  EXPECT_STREQ(flags.log_file, "/tmp/lsan.log.%p");
  EXPECT_TRUE(flags.scan_stacks);
}

TEST(LsanOptions, IgnoredOptionsSayWhy) {
  EXPECT_STREQ(lsan_ignored_reason("report_objects", 14),
               "memtrack groups leaks by allocation stack and keeps no block addresses");
  EXPECT_STREQ(lsan_ignored_reason("no_such_option", 14), "memtrack has no equivalent");
}

}  // namespace
}  // namespace memtrack::core
