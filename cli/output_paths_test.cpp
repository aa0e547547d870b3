// Tests for the output-path checks made before the program runs (output_paths.h): a file that
// cannot be written is refused with its option and the reason, a check never leaves a file
// behind or truncates one, and %p names are checked by their directory.
#include "cli/output_paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"

namespace memtrack::cli {
namespace {

namespace fs = std::filesystem;

std::string error_of(const Config& config) {
  try {
    check_output_paths(config);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class OutputPathsTest : public testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/memtrack_output_paths_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST(ExpandPidTest, ReplacesEveryPercentPAndNothingElse) {
  EXPECT_EQ(expand_pid("log.%p.txt", 42), "log.42.txt");
  EXPECT_EQ(expand_pid("%p-%p", 7), "7-7");
  EXPECT_EQ(expand_pid("100%", 7), "100%");
  EXPECT_EQ(expand_pid("%d%q%", 7), "%d%q%");
  EXPECT_EQ(expand_pid("", 7), "");
}

TEST_F(OutputPathsTest, AcceptsWritableFilesWithoutCreatingOrTruncatingThem) {
  Config config;
  config.json_file = dir_ + "/new.json";
  config.log_file = dir_ + "/kept.log";
  { std::ofstream(config.log_file) << "earlier text"; }
  EXPECT_EQ(error_of(config), "");
  EXPECT_FALSE(fs::exists(config.json_file));
  std::ifstream kept(config.log_file);
  std::string text((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "earlier text");
}

TEST_F(OutputPathsTest, StdoutAndNoFileAreNotChecked) {
  Config config;
  config.json_file = "-";
  config.junit_file = "";
  EXPECT_EQ(error_of(config), "");
}

TEST_F(OutputPathsTest, RefusesAFileInAMissingDirectoryNamingTheOptionAndTheReason) {
  Config config;
  config.sarif_file = dir_ + "/missing/out.sarif";
  EXPECT_EQ(error_of(config),
            "cannot write --sarif=" + config.sarif_file + ": No such file or directory");
}

TEST_F(OutputPathsTest, EveryOutputOptionIsChecked) {
  const std::string bad = dir_ + "/missing/f";
  auto error_with = [&](std::string Config::*field) {
    Config config;
    config.*field = bad;
    return error_of(config);
  };
  const std::pair<std::string Config::*, const char*> options[] = {
      {&Config::log_file, "--log-file"},    {&Config::json_file, "--json"},
      {&Config::junit_file, "--junit"},     {&Config::collapsed_file, "--collapsed"},
      {&Config::xml_file, "--xml-file"},    {&Config::sarif_file, "--sarif"},
      {&Config::pprof_file, "--pprof"},     {&Config::speedscope_file, "--speedscope"},
      {&Config::html_file, "--html"},       {&Config::live_json, "--live-json"},
      {&Config::profile_file, "--profile"}, {&Config::massif_file, "--massif"}};
  for (auto [field, option] : options) {
    EXPECT_EQ(error_with(field).rfind(std::string("cannot write ") + option + "=" + bad, 0), 0u)
        << option;
  }
}

TEST_F(OutputPathsTest, APercentPNameIsCheckedByItsDirectory) {
  Config config;
  config.log_file = dir_ + "/log.%p";
  EXPECT_EQ(error_of(config), "");
  EXPECT_TRUE(fs::is_empty(dir_));
  config.log_file = dir_ + "/missing/log.%p";
  EXPECT_EQ(error_of(config), "cannot write --log-file=" + config.log_file + ": directory " + dir_ +
                                  "/missing: No such file or directory");
}

}  // namespace
}  // namespace memtrack::cli
