// Tests for the checked values of command-line options (option_values.h): each parser either
// returns the value or throws memtrack::Error naming the option and the bad value.
#include "cli/option_values.h"
#include "cli/pprof_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace memtrack::cli {
namespace {

using report::LeakKind;
using report::LeakKinds;

// The message of the Error `parse` throws, or "no error".
template <typename Parse>
std::string error_of(Parse parse) {
  try {
    parse();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(OptionValues, YesNoTakesValgrindAndLsanSpellingsOnly) {
  for (const char* yes : {"yes", "1", "true"}) EXPECT_TRUE(parse_yes_no("--xml", yes)) << yes;
  for (const char* no : {"no", "0", "false"}) EXPECT_FALSE(parse_yes_no("--xml", no)) << no;
  EXPECT_EQ(error_of([] { parse_yes_no("--track-fds", "maybe"); }),
            "--track-fds expects yes or no, not 'maybe'");
  for (const char* bad : {"", "Yes", "NO", "y", "on"}) {
    EXPECT_EQ(error_of([&] { parse_yes_no("--xml", bad); }),
              std::string("--xml expects yes or no, not '") + bad + "'");
  }
}

TEST(OptionValues, IntegersMustBeWholeNumbersFromMinToMax) {
  EXPECT_EQ(parse_int("--error-exitcode", "0", 0, 255), 0);
  EXPECT_EQ(parse_int("--error-exitcode", "255", 0, 255), 255);
  EXPECT_EQ(parse_int("--error-exitcode", "42", 0, 255), 42);
  EXPECT_EQ(error_of([] { parse_int("--num-callers", "0", 1, 256); }),
            "--num-callers expects a number from 1 to 256, not '0'");
  for (const char* bad : {"257", "-1", "", "12abc", "3.5", "0x10", "abc", "99999999999"}) {
    EXPECT_EQ(error_of([&] { parse_int("--num-callers", bad, 1, 256); }),
              std::string("--num-callers expects a number from 1 to 256, not '") + bad + "'");
  }
}

TEST(OptionValues, LeakKindsTakeValgrindsSyntaxAndAlwaysIncludeUnclassifiedBlocks) {
  EXPECT_EQ(parse_leak_kinds("--show-leak-kinds", "definite"),
            LeakKinds({LeakKind::kDefinite, LeakKind::kUnclassified}));
  EXPECT_EQ(parse_leak_kinds("--show-leak-kinds", "none"), LeakKinds{LeakKind::kUnclassified});
  EXPECT_EQ(parse_leak_kinds("--show-leak-kinds", "all"),
            LeakKinds::all().with(LeakKind::kUnclassified));
  EXPECT_EQ(parse_leak_kinds("--errors-for-leak-kinds", "reachable,possible"),
            LeakKinds({LeakKind::kReachable, LeakKind::kPossible, LeakKind::kUnclassified}));
  EXPECT_EQ(error_of([] { parse_leak_kinds("--show-leak-kinds", "definitely"); }),
            "--show-leak-kinds expects all, none or a comma-separated list of definite, "
            "indirect, possible, reachable, not 'definitely'");
}

TEST(OptionValues, SecondsAllowFractionsFromACentisecondToADay) {
  EXPECT_DOUBLE_EQ(parse_seconds("-d", "0.5"), 0.5);
  EXPECT_DOUBLE_EQ(parse_seconds("-d", "2"), 2.0);
  EXPECT_DOUBLE_EQ(parse_seconds("-d", "0.01"), 0.01);
  EXPECT_DOUBLE_EQ(parse_seconds("-d", "86400"), 86400.0);
  for (const char* bad : {"0", "0.001", "86401", "-1", "", "1s", "nan", "inf"}) {
    EXPECT_EQ(
        error_of([&] { parse_seconds("--timeout", bad); }),
        std::string("--timeout expects seconds from 0.01 to 86400 (e.g. 0.5), not '") + bad + "'");
  }
}

TEST(OptionValues, DurationsTakeMillisecondsSecondsMinutesAndHours) {
  EXPECT_EQ(parse_duration_ms("--expire", "500ms"), 500);
  EXPECT_EQ(parse_duration_ms("--expire", "30s"), 30000);
  EXPECT_EQ(parse_duration_ms("--expire", "5m"), 300000);
  EXPECT_EQ(parse_duration_ms("--expire", "1h"), 3600000);
  EXPECT_EQ(parse_duration_ms("--expire", "1.5h"), 5400000);
  EXPECT_EQ(parse_duration_ms("--expire", "0.25s"), 250);
  // Without a unit: seconds. Rounded to whole milliseconds.
  EXPECT_EQ(parse_duration_ms("--expire", "2"), 2000);
  EXPECT_EQ(parse_duration_ms("--expire", "0.5"), 500);
  EXPECT_EQ(parse_duration_ms("--expire", "10.4ms"), 10);
  EXPECT_EQ(parse_duration_ms("--expire", "10.6ms"), 11);
}

TEST(OptionValues, SizesTakeBytesAndBinaryUnitsUpToTheLimit) {
  EXPECT_EQ(parse_check_heap("off"), "");
  EXPECT_EQ(parse_check_heap("sample"), "sample:1000");
  EXPECT_EQ(parse_check_heap("sample:1"), "sample:1");
  EXPECT_EQ(parse_check_heap("full"), "full");
  for (const char* bad : {"", "sample:", "sample:0", "sample:2147483648", "guard", "sample:x"}) {
    EXPECT_THROW(parse_check_heap(bad), Error) << bad;
  }
  EXPECT_EQ(parse_size("--sample", "0", 100), 0u);
  EXPECT_EQ(parse_size("--sample", "4096", 1u << 30), 4096u);
  EXPECT_EQ(parse_size("--sample", "512KiB", 1u << 30), 512u * 1024);
  EXPECT_EQ(parse_size("--sample", "512K", 1u << 30), 512u * 1024);
  EXPECT_EQ(parse_size("--sample", "1MiB", 1u << 30), 1u << 20);
  EXPECT_EQ(parse_size("--sample", "1GiB", 1u << 30), 1u << 30);
  EXPECT_EQ(parse_size("--sample", "7B", 100), 7u);
  for (const char* bad :
       {"", "KiB", "-1", "1.5MiB", "1 KiB", "1kib", "1TiB", "2GiB", "+4", "9999999999999"}) {
    EXPECT_THROW(parse_size("--sample", bad, 1u << 30), Error) << bad;
  }
  try {
    parse_size("--sample", "2GiB", 1u << 30);
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--sample expects a size in bytes (4096, 512KiB, 1MiB, ...) of at most "
                 "1073741824 bytes, not '2GiB'");
  }
}

TEST(OptionValues, ListenAddressesArePortOrHostAndPortLoopbackByDefault) {
  ListenAddress a = parse_listen_address("6060");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 6060);
  a = parse_listen_address("0.0.0.0:80");
  EXPECT_EQ(a.host, "0.0.0.0");
  EXPECT_EQ(a.port, 80);
  a = parse_listen_address("[::1]:0");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 0);
  for (const char* bad : {"", ":80", "host:", "80000", "-1", "http://x:80", "12ab", "x:+80"}) {
    EXPECT_THROW(parse_listen_address(bad), Error) << bad;
  }
}

TEST(OptionValues, DurationsRunFromTenMillisecondsToTwentyFourDays) {
  EXPECT_EQ(parse_duration_ms("--expire", "10ms"), 10);
  EXPECT_EQ(parse_duration_ms("--expire", "576h"), 2073600000);  // 24 days
  for (const char* bad : {"9ms", "0", "0s", "577h", "-5s", "0.001"}) {
    EXPECT_EQ(error_of([&] { parse_duration_ms("--expire", bad); }),
              std::string("--expire expects a duration from 10ms to 24 days such as 500ms, 30s, "
                          "5m or 1h, not '") +
                  bad + "'")
        << bad;
  }
}

TEST(OptionValues, DurationsWithAnUnknownUnitAreRejected) {
  for (const char* bad : {"5d", "5 s", "5sec", "5S", "5M", "s", "ms", ""}) {
    EXPECT_EQ(error_of([&] { parse_duration_ms("--report-interval", bad); }),
              std::string("--report-interval expects a duration from 10ms to 24 days such as "
                          "500ms, 30s, 5m or 1h, not '") +
                  bad + "'")
        << bad;
  }
}

TEST(OptionValues, PidsTakeACommaSeparatedListWithoutEmptyEntries) {
  std::vector<uint32_t> pids = {7};
  parse_pids("42", &pids);
  parse_pids("1,300,1073741824", &pids);
  EXPECT_EQ(pids, (std::vector<uint32_t>{7, 42, 1, 300, 1073741824}));
  // A bad entry is named in the error.
  EXPECT_EQ(error_of([&] { parse_pids("1,,2", &pids); }),
            "--pid expects a number from 1 to 1073741824, not ''");
  EXPECT_EQ(error_of([&] { parse_pids("5,", &pids); }),
            "--pid expects a number from 1 to 1073741824, not ''");
  EXPECT_EQ(error_of([&] { parse_pids("5,x", &pids); }),
            "--pid expects a number from 1 to 1073741824, not 'x'");
  EXPECT_EQ(error_of([&] { parse_pids("0", &pids); }),
            "--pid expects a number from 1 to 1073741824, not '0'");
}

// A pipe's descriptors, closed at the end of the test.
class Pipe {
 public:
  Pipe() { EXPECT_EQ(pipe(fds_), 0); }
  ~Pipe() {
    close(fds_[0]);
    close(fds_[1]);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  int write_end() const { return fds_[1]; }

 private:
  int fds_[2] = {-1, -1};
};

TEST(OptionValues, DescriptorOneIsStdoutAndAnyOtherOpenOneItsDevFdPath) {
  Pipe pipe;
  std::string fd = std::to_string(pipe.write_end());
  EXPECT_EQ(output_file_for_fd("--xml-fd", "1"), "-");
  EXPECT_EQ(output_file_for_fd("--xml-fd", fd), "/dev/fd/" + fd);
  EXPECT_EQ(output_file_for_fd("--xml-fd", "2"), "/dev/fd/2");
}

TEST(OptionValues, ADescriptorThatIsNotOpenIsAnError) {
  Pipe pipe;
  int closed = dup(pipe.write_end());
  ASSERT_GE(closed, 0);
  close(closed);
  std::string fd = std::to_string(closed);
  EXPECT_EQ(error_of([&] { output_file_for_fd("--xml-fd", fd); }),
            "--xml-fd=" + fd + ": descriptor " + fd + " is not open");
  EXPECT_EQ(error_of([] { output_file_for_fd("--xml-fd", "-1"); }),
            "--xml-fd expects a number from 0 to 1048576, not '-1'");
}

TEST(OptionValues, LogFdTwoIsTheDefaultStderrAndOneIsStdout) {
  Pipe pipe;
  std::string fd = std::to_string(pipe.write_end());
  EXPECT_EQ(log_file_for_fd("2"), "");
  EXPECT_EQ(log_file_for_fd("1"), "-");
  EXPECT_EQ(log_file_for_fd(fd), "/dev/fd/" + fd);
  EXPECT_EQ(error_of([] { log_file_for_fd("two"); }),
            "--log-fd expects a number from 0 to 1048576, not 'two'");
}

}  // namespace
}  // namespace memtrack::cli
