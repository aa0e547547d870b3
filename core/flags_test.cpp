// Unit tests for the MEMTRACK_OPTIONS parser, validate_flags and the flag table.
// Test-only code: may allocate (warnings are collected in a std::vector).
#include "core/flags.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace memtrack::core {
namespace {

// WarningSink is a plain function pointer, so the captured lines live in a static.
std::vector<std::string>& warnings() {
  static std::vector<std::string> lines;
  return lines;
}

void capture_warning(const char* message) {
  warnings().push_back(message);
}

class FlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    warnings().clear();
    set_defaults(&flags_);
  }

  // Parses `text` and checks that the returned count matches the captured lines.
  int parse(const char* text) {
    size_t before = warnings().size();
    int count = parse_flags(text, &flags_, capture_warning);
    EXPECT_EQ(static_cast<size_t>(count), warnings().size() - before);
    return count;
  }

  void expect_defaults() {
    EXPECT_EQ(flags_.max_frames, 32);
    EXPECT_TRUE(flags_.report_at_exit);
    EXPECT_STREQ(flags_.log_file, "");
    EXPECT_EQ(flags_.max_groups, 0);
    EXPECT_FALSE(flags_.show_runtime_internal);
    EXPECT_FALSE(flags_.help);
    EXPECT_TRUE(flags_.track_fds);
    EXPECT_STREQ(flags_.trace_log, "");
  }

  Flags flags_;
};

TEST_F(FlagsTest, Defaults) {
  expect_defaults();
}

TEST_F(FlagsTest, SetDefaultsOverwritesEverything) {
  std::memset(&flags_, 0x5a, sizeof(flags_));
  set_defaults(&flags_);
  expect_defaults();
}

TEST_F(FlagsTest, EmptyAndNullInputGiveNoWarnings) {
  EXPECT_EQ(parse(nullptr), 0);
  EXPECT_EQ(parse(""), 0);
  EXPECT_EQ(parse(" :: \t\n:"), 0);
  expect_defaults();
  EXPECT_TRUE(warnings().empty());
}

TEST_F(FlagsTest, ParsesEveryType) {
  EXPECT_EQ(parse("max_frames=64:report_at_exit=0:log_file=/tmp/out.%p:max_groups=-7:"
                  "show_runtime_internal=yes:help=true"),
            0);
  EXPECT_EQ(flags_.max_frames, 64);
  EXPECT_FALSE(flags_.report_at_exit);
  EXPECT_STREQ(flags_.log_file, "/tmp/out.%p");
  EXPECT_EQ(flags_.max_groups, -7);  // the parser accepts it; validate_flags range-checks
  EXPECT_TRUE(flags_.show_runtime_internal);
  EXPECT_TRUE(flags_.help);
}

TEST_F(FlagsTest, BoolSpellings) {
  const struct {
    const char* text;
    bool value;
  } kCases[] = {
      {"help=1", true},  {"help=true", true},   {"help=yes", true},
      {"help=0", false}, {"help=false", false}, {"help=no", false},
  };
  for (const auto& c : kCases) {
    flags_.help = !c.value;
    EXPECT_EQ(parse(c.text), 0) << c.text;
    EXPECT_EQ(flags_.help, c.value) << c.text;
  }
}

TEST_F(FlagsTest, IntLimits) {
  EXPECT_EQ(parse("max_groups=2147483647"), 0);
  EXPECT_EQ(flags_.max_groups, 2147483647);
  EXPECT_EQ(parse("max_groups=-2147483648"), 0);
  EXPECT_EQ(flags_.max_groups, INT32_MIN);
  EXPECT_EQ(parse("max_groups=+12"), 0);
  EXPECT_EQ(flags_.max_groups, 12);
}

TEST_F(FlagsTest, WhitespaceAndColonSeparators) {
  EXPECT_EQ(parse("  max_frames=8 \t report_at_exit=no\nmax_groups=3::help=1 "), 0);
  EXPECT_EQ(flags_.max_frames, 8);
  EXPECT_FALSE(flags_.report_at_exit);
  EXPECT_EQ(flags_.max_groups, 3);
  EXPECT_TRUE(flags_.help);
}

TEST_F(FlagsTest, LaterEntriesWin) {
  EXPECT_EQ(parse("max_frames=8:max_frames=9"), 0);
  EXPECT_EQ(flags_.max_frames, 9);
}

TEST_F(FlagsTest, QuotedValuesKeepSeparators) {
  EXPECT_EQ(parse("log_file='/tmp/a:b c.log':max_frames=5"), 0);
  EXPECT_STREQ(flags_.log_file, "/tmp/a:b c.log");
  EXPECT_EQ(flags_.max_frames, 5);
  EXPECT_EQ(parse("log_file=\"x:'y'\" max_groups=2"), 0);
  EXPECT_STREQ(flags_.log_file, "x:'y'");
  EXPECT_EQ(flags_.max_groups, 2);
  EXPECT_EQ(parse("log_file=''"), 0);
  EXPECT_STREQ(flags_.log_file, "");
}

TEST_F(FlagsTest, UnterminatedQuoteRunsToTheEnd) {
  EXPECT_EQ(parse("log_file='abc:max_frames=7"), 0);
  EXPECT_STREQ(flags_.log_file, "abc:max_frames=7");
  EXPECT_EQ(flags_.max_frames, 32);
}

TEST_F(FlagsTest, UnknownNameWarnsOnceAndKeepsDefaults) {
  EXPECT_EQ(parse("no_such_flag=1"), 1);
  ASSERT_EQ(warnings().size(), 1u);
  EXPECT_EQ(warnings()[0],
            "ignoring unknown option 'no_such_flag=1': MEMTRACK_OPTIONS=help=1 lists the options");
  expect_defaults();
}

TEST_F(FlagsTest, UnknownNameDoesNotStopLaterEntries) {
  EXPECT_EQ(parse("max_frame=8:max_frames=9"), 1);
  ASSERT_EQ(warnings().size(), 1u);
  EXPECT_EQ(warnings()[0],
            "ignoring unknown option 'max_frame=8': MEMTRACK_OPTIONS=help=1 lists the options");
  EXPECT_EQ(flags_.max_frames, 9);
}

TEST_F(FlagsTest, NamesAreCaseSensitive) {
  EXPECT_EQ(parse("Max_Frames=8"), 1);
  EXPECT_EQ(flags_.max_frames, 32);
}

TEST_F(FlagsTest, BadBoolWarnsAndKeepsDefault) {
  EXPECT_EQ(parse("report_at_exit=maybe"), 1);
  ASSERT_EQ(warnings().size(), 1u);
  EXPECT_EQ(warnings()[0],
            "ignoring bad value in 'report_at_exit=maybe': expected 1/0, true/false or yes/no");
  EXPECT_TRUE(flags_.report_at_exit);
  EXPECT_EQ(parse("report_at_exit=TRUE:report_at_exit="), 2);
  EXPECT_TRUE(flags_.report_at_exit);
}

TEST_F(FlagsTest, BadIntWarnsAndKeepsDefault) {
  EXPECT_EQ(parse("max_frames=12x"), 1);
  ASSERT_EQ(warnings().size(), 1u);
  EXPECT_EQ(warnings()[0], "ignoring bad value in 'max_frames=12x': expected an integer");
  EXPECT_EQ(flags_.max_frames, 32);

  EXPECT_EQ(parse("max_frames=:max_frames=-:max_frames=0x10:max_frames= 5"), 5);
  EXPECT_EQ(warnings()[1], "ignoring bad value in 'max_frames=': expected an integer");
  EXPECT_EQ(warnings()[5], "ignoring option without a value '5': write name=value");
  EXPECT_EQ(flags_.max_frames, 32);

  // Larger than an int: rejected rather than wrapped.
  EXPECT_EQ(parse("max_groups=2147483648:max_groups=-2147483649"), 2);
  EXPECT_EQ(flags_.max_groups, 0);
}

TEST_F(FlagsTest, EntryWithoutEqualsWarns) {
  EXPECT_EQ(parse("help:max_frames=4"), 1);
  ASSERT_EQ(warnings().size(), 1u);
  EXPECT_EQ(warnings()[0], "ignoring option without a value 'help': write name=value");
  EXPECT_FALSE(flags_.help);
  EXPECT_EQ(flags_.max_frames, 4);
}

TEST_F(FlagsTest, EmptyNameIsUnknown) {
  EXPECT_EQ(parse("=5"), 1);
  ASSERT_EQ(warnings().size(), 1u);
  EXPECT_EQ(warnings()[0],
            "ignoring unknown option '=5': MEMTRACK_OPTIONS=help=1 lists the options");
}

TEST_F(FlagsTest, StringLengthLimit) {
  std::string longest(kMaxFlagStringLength - 1, 'a');
  EXPECT_EQ(parse(("log_file=" + longest).c_str()), 0);
  EXPECT_EQ(flags_.log_file, longest);

  set_defaults(&flags_);
  std::string too_long(kMaxFlagStringLength, 'b');
  EXPECT_EQ(parse(("log_file=" + too_long + ":max_frames=3").c_str()), 1);
  ASSERT_EQ(warnings().size(), 1u);
  // The entry is quoted up to 200 bytes so that the line stays readable.
  std::string expected =
      "ignoring bad value in '" + ("log_file=" + too_long).substr(0, 200) + "': value too long";
  EXPECT_EQ(warnings()[0], expected);
  EXPECT_STREQ(flags_.log_file, "");
  EXPECT_EQ(flags_.max_frames, 3);
}

TEST_F(FlagsTest, ValidateResetsOutOfRangeMaxFrames) {
  flags_.max_frames = 0;
  EXPECT_EQ(validate_flags(&flags_, capture_warning), 1);
  EXPECT_EQ(flags_.max_frames, 32);
  flags_.max_frames = 1000;
  EXPECT_EQ(validate_flags(&flags_, capture_warning), 1);
  EXPECT_EQ(flags_.max_frames, 32);
  ASSERT_EQ(warnings().size(), 2u);
  EXPECT_EQ(warnings()[0], "option max_frames=0 is out of range 1..256; using 32");
  EXPECT_EQ(warnings()[1], "option max_frames=1000 is out of range 1..256; using 32");
}

TEST_F(FlagsTest, ValidateAcceptsRangeEnds) {
  flags_.max_frames = 1;
  EXPECT_EQ(validate_flags(&flags_, capture_warning), 0);
  EXPECT_EQ(flags_.max_frames, 1);
  flags_.max_frames = kMaxFramesLimit;
  flags_.max_groups = 2147483647;
  EXPECT_EQ(validate_flags(&flags_, capture_warning), 0);
  EXPECT_EQ(flags_.max_frames, 256);
  EXPECT_EQ(flags_.max_groups, 2147483647);
  EXPECT_TRUE(warnings().empty());
}

TEST_F(FlagsTest, ValidateResetsNegativeMaxGroups) {
  EXPECT_EQ(parse("max_groups=-1:max_frames=-3"), 0);
  EXPECT_EQ(validate_flags(&flags_, capture_warning), 2);
  EXPECT_EQ(flags_.max_groups, 0);
  EXPECT_EQ(flags_.max_frames, 32);
  ASSERT_EQ(warnings().size(), 2u);
  EXPECT_EQ(warnings()[0], "option max_frames=-3 is out of range 1..256; using 32");
  EXPECT_EQ(warnings()[1], "option max_groups=-1 is out of range 0..2147483647; using 0");
}

TEST(FlagTableTest, IntFlagsCarryTheirRange) {
  const FlagInfo* max_frames = find_flag("max_frames");
  ASSERT_NE(max_frames, nullptr);
  EXPECT_EQ(max_frames->min, 1);
  EXPECT_EQ(max_frames->max, kMaxFramesLimit);
  const FlagInfo* expire = find_flag("expire_ms");
  ASSERT_NE(expire, nullptr);
  EXPECT_EQ(expire->min, 0);
  EXPECT_EQ(expire->max, 2147483647);
  const FlagInfo* help = find_flag("help");
  ASSERT_NE(help, nullptr);
  EXPECT_EQ(help->min, 0);
  EXPECT_EQ(help->max, 0);
  EXPECT_EQ(find_flag("max_frame"), nullptr);
  EXPECT_EQ(find_flag(""), nullptr);
}

TEST(FlagTableTest, ListsEveryFlagInDeclarationOrder) {
  size_t count = 0;
  const FlagInfo* table = flag_table(&count);
  ASSERT_EQ(count, 41u);
  const struct {
    const char* name;
    FlagType type;
    const char* default_text;
  } kExpected[] = {
      {"max_frames", FlagType::kInt, "32"},
      {"report_at_exit", FlagType::kBool, "true"},
      {"log_file", FlagType::kString, "\"\""},
      {"max_groups", FlagType::kInt, "0"},
      {"show_runtime_internal", FlagType::kBool, "false"},
      {"max_metadata_mb", FlagType::kInt, "0"},
      {"result_dir", FlagType::kString, "\"\""},
      {"follow_exec", FlagType::kBool, "true"},
      {"silent_after_fork", FlagType::kBool, "false"},
      {"report_on_signal", FlagType::kBool, "true"},
      {"classify_leaks", FlagType::kBool, "true"},
      {"scan_globals", FlagType::kBool, "true"},
      {"scan_stacks", FlagType::kBool, "true"},
      {"scan_registers", FlagType::kBool, "true"},
      {"scan_root_regions", FlagType::kBool, "true"},
      {"leak_scan_stats", FlagType::kBool, "false"},
      {"retainers", FlagType::kBool, "false"},
      {"show_reachable", FlagType::kBool, "false"},
      {"glibc_malloc", FlagType::kBool, "false"},
      {"detect_misuse", FlagType::kBool, "true"},
      {"free_stacks", FlagType::kBool, "false"},
      {"fast_unwind", FlagType::kBool, "true"},
      {"check_unwinder", FlagType::kBool, "false"},
      {"halt_on_error", FlagType::kBool, "false"},
      {"check_heap", FlagType::kString, "\"off\""},
      {"check_heap_slots", FlagType::kInt, "1024"},
      {"check_heap_max_per_sec", FlagType::kInt, "250"},
      {"check_heap_side", FlagType::kString, "\"random\""},
      {"check_heap_continue", FlagType::kBool, "false"},
      {"check_heap_quarantine_mb", FlagType::kInt, "64"},
      {"expire_ms", FlagType::kInt, "0"},
      {"report_interval_ms", FlagType::kInt, "0"},
      {"snapshot_signal", FlagType::kBool, "false"},
      {"sample_bytes", FlagType::kInt, "0"},
      {"sample_seed", FlagType::kInt, "0"},
      {"alloc_totals", FlagType::kBool, "false"},
      {"help", FlagType::kBool, "false"},
      {"track_fds", FlagType::kBool, "true"},
      {"trace_log", FlagType::kString, "\"\""},
      {"profile", FlagType::kString, "\"\""},
      {"profile_interval_ms", FlagType::kInt, "10"},
  };
  for (size_t i = 0; i < count; ++i) {
    EXPECT_STREQ(table[i].name, kExpected[i].name);
    EXPECT_EQ(table[i].type, kExpected[i].type) << table[i].name;
    EXPECT_STREQ(table[i].default_text, kExpected[i].default_text) << table[i].name;
    EXPECT_GT(std::strlen(table[i].description), 0u) << table[i].name;
  }
}

std::string read_all(int fd) {
  std::string text;
  char chunk[4096];
  for (ssize_t n; (n = read(fd, chunk, sizeof(chunk))) > 0;) text.append(chunk, n);
  return text;
}

TEST(FlagHelpTest, WritesOneEntryPerFlag) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  write_flag_help(fds[1]);
  close(fds[1]);
  std::string help = read_all(fds[0]);
  close(fds[0]);
  const std::string kHeader =
      "memtrack runtime options (MEMTRACK_OPTIONS=\"name=value:name=value\"):\n";
  EXPECT_EQ(help.substr(0, kHeader.size()), kHeader);
  EXPECT_NE(help.find("\n  max_frames (int, default 32)\n      Stack frames recorded per "
                      "allocation (1-256). Deeper stacks are cut.\n"),
            std::string::npos);
  EXPECT_NE(help.find("\n  log_file (string, default \"\")\n"), std::string::npos);
  EXPECT_NE(help.find("\n  help (bool, default false)\n"), std::string::npos);
  size_t entries = 0;  // lines indented by exactly two spaces
  for (size_t pos = 0; (pos = help.find("\n  ", pos)) != std::string::npos; ++pos) {
    if (pos + 3 < help.size() && help[pos + 3] != ' ') ++entries;
  }
  EXPECT_EQ(entries, 40u);
}

}  // namespace
}  // namespace memtrack::core
