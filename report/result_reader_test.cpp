// Unit tests for the result-file reader: a file written with core::ResultWriter round-trips,
// and every truncation or corruption is rejected with one message naming the file.
#include "report/result_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/result_file_fixture.h"

namespace memtrack::report {
namespace {

using namespace fixture;  // NOLINT(google-build-using-namespace): the test's vocabulary
namespace result = core::result;

TEST(ResultReaderTest, RoundTripsEveryField) {
  ResultFile file = parse_result(make_file(), "f.mtr");
  EXPECT_EQ(file.pid, 1234u);
  EXPECT_EQ(file.ppid, 1000u);
  EXPECT_EQ(file.exit.how, ExitInfo::How::kUnderscoreExit);
  EXPECT_EQ(file.exit.code, 3);
  EXPECT_EQ(file.command, (std::vector<std::string>{"./prog", "arg one"}));
  EXPECT_EQ(file.executable, "/usr/bin/prog");
  EXPECT_EQ(file.stats.allocations, 10u);
  EXPECT_EQ(file.stats.frees, 4u);
  EXPECT_EQ(file.stats.bytes_allocated, 1000u);
  EXPECT_EQ(file.stats.peak_bytes, 600u);
  EXPECT_EQ(file.stats.untracked_bytes, 16u);
  ASSERT_EQ(file.modules.size(), 2u);
  EXPECT_EQ(file.modules[0].path, "/usr/bin/prog");
  EXPECT_EQ(file.modules[0].build_id, (std::vector<uint8_t>{0xde, 0xad, 0xbe, 0xef}));
  EXPECT_FALSE(file.modules[0].unloaded);
  EXPECT_TRUE(file.modules[1].unloaded);
  EXPECT_EQ(file.modules[1].end, 0x2800u);
  EXPECT_EQ(file.stacks.at(1), (std::vector<uint64_t>{0x1100, 0x1200}));
  ASSERT_EQ(file.leaks.size(), 2u);
  EXPECT_EQ(file.leaks[1].bytes, 200u);
  EXPECT_EQ(file.leaks[1].blocks, 2u);
  EXPECT_TRUE(file.leaks[1].runtime_internal);
  EXPECT_EQ(file.leaks[0].kind, LeakKind::kUnclassified);
}

// Every prefix of a valid file is rejected with a message naming the file.
TEST(ResultReaderTest, RejectsEveryTruncation) {
  expect_every_truncation_rejected(make_file());
}

TEST(ResultReaderTest, RejectsEveryFlippedByte) {
  expect_every_flip_rejected(make_file());
}

TEST(ResultReaderTest, NamesTheProblem) {
  EXPECT_EQ(error_of({}), "f.mtr: not a memtrack result file");
  std::vector<uint8_t> data = make_file();
  std::vector<uint8_t> version = data;
  version[8] = 9;
  EXPECT_EQ(error_of(version),
            "f.mtr: result file version 9 is not supported (this memtrack reads version 1)");
  std::vector<uint8_t> cut(data.begin(), data.end() - 24);
  EXPECT_EQ(error_of(cut),
            "f.mtr: truncated result file (no end marker; the process may still be running or "
            "was killed while writing)");
  std::vector<uint8_t> corrupt = data;
  corrupt[40] ^= 1;
  EXPECT_EQ(error_of(corrupt), "f.mtr: corrupt result file (checksum mismatch)");
  FileSpec no_leaks;
  no_leaks.with_leaks_section = false;
  EXPECT_EQ(error_of(make_file(no_leaks)), "f.mtr: corrupt result file (leaks section missing)");
  FileSpec bad_kind;
  bad_kind.kinds[0] = 9;
  EXPECT_EQ(error_of(make_file(bad_kind)),
            "f.mtr: corrupt result file (leaks section: unknown leak kind 9)");
}

TEST(ResultReaderTest, RoundTripsKindsAndIndirectTotals) {
  ResultFile file = parse_result(make_file(classified_spec()), "f.mtr");
  ASSERT_EQ(file.leaks.size(), 2u);
  EXPECT_EQ(file.leaks[0].kind, LeakKind::kDefinite);
  EXPECT_EQ(file.leaks[0].indirect_bytes, 48u);
  EXPECT_EQ(file.leaks[0].indirect_blocks, 2u);
  EXPECT_EQ(file.leaks[1].kind, LeakKind::kIndirect);
  EXPECT_EQ(file.leaks[1].indirect_bytes, 0u);
  EXPECT_EQ(file.leaks[1].indirect_blocks, 0u);
  for (uint8_t kind = 0; kind <= 4; ++kind) {
    FileSpec spec;
    spec.kinds[0] = spec.kinds[1] = kind;
    EXPECT_EQ(static_cast<uint8_t>(parse_result(make_file(spec), "f.mtr").leaks[1].kind), kind);
  }
}

TEST(ResultReaderTest, EmptyIndirectSectionIsAccepted) {
  FileSpec spec = classified_spec();
  spec.indirect.clear();
  ResultFile file = parse_result(make_file(spec), "f.mtr");
  EXPECT_EQ(file.leaks[0].indirect_bytes, 0u);
  EXPECT_EQ(file.leaks[0].indirect_blocks, 0u);
  spec.with_indirect_section = false;  // optional: definite leaks need not have one
  EXPECT_EQ(parse_result(make_file(spec), "f.mtr").leaks[0].indirect_bytes, 0u);
}

TEST(ResultReaderTest, RejectsEveryTruncationAndFlipWithAnIndirectSection) {
  std::vector<uint8_t> data = make_file(classified_spec());
  expect_every_truncation_rejected(data);
  expect_every_flip_rejected(data);
}

TEST(ResultReaderTest, RejectsBadIndirectRecords) {
  auto error_with = [](std::vector<IndirectRecord> records, bool first = false) {
    FileSpec spec = classified_spec();
    spec.indirect = std::move(records);
    spec.indirect_first = first;
    return error_of(make_file(spec));
  };
  const std::string prefix = "f.mtr: corrupt result file (indirect section: ";
  EXPECT_EQ(error_with({{2, 0, 8, 1}}), prefix + "leak 2 does not exist (2 leaks))");
  EXPECT_EQ(error_with({{0xffffffff, 0, 8, 1}}),
            prefix + "leak 4294967295 does not exist (2 leaks))");
  EXPECT_EQ(error_with({{1, 0, 8, 1}}), prefix + "leak 1 is not definitely lost)");
  EXPECT_EQ(error_with({{0, 0, 8, 1}, {0, 0, 8, 1}}), prefix + "leak 0 appears twice)");
  EXPECT_EQ(error_with({{0, 7, 8, 1}}), prefix + "reserved field of leak 0 is not 0)");
  EXPECT_EQ(error_with({{0, 0, 8, 1}}, true), prefix + "comes before the leaks section)");
  EXPECT_EQ(error_with({}, true), prefix + "comes before the leaks section)");
  FileSpec twice = classified_spec();
  twice.indirect_twice = true;
  EXPECT_EQ(error_of(make_file(twice)), prefix + "appears twice)");
  // Unclassified leaks (version 1 writers) cannot have indirect totals either.
  FileSpec unclassified;
  unclassified.with_indirect_section = true;
  unclassified.indirect = {{0, 0, 8, 1}};
  EXPECT_EQ(error_of(make_file(unclassified)), prefix + "leak 0 is not definitely lost)");
}

TEST(ResultReaderTest, MissingFileIsAnError) {
  try {
    read_result_file("/nonexistent/x.mtr");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/x.mtr: cannot open result file: No such file or directory");
  }
}

TEST(ResultReaderTest, ReadsALiveReportInsteadOfLeaks) {
  FileSpec spec;
  spec.with_leaks_section = false;
  spec.with_live_section = true;
  ResultFile file = parse_result(make_file(spec), "live.1234.3.mtr");
  ASSERT_TRUE(file.live.has_value());
  EXPECT_TRUE(file.leaks.empty());
  const RawLive& live = *file.live;
  EXPECT_EQ(live.sequence, 3u);
  EXPECT_EQ((std::vector<uint64_t>{live.uptime_ms, live.expire_ms, live.interval_ms,
                                   live.live_blocks, live.live_bytes}),
            (std::vector<uint64_t>{4000, 1000, 2000, 90, 9000}));
  ASSERT_EQ(live.sites.size(), 1u);
  EXPECT_EQ(live.sites[0].stack_id, 1u);
  EXPECT_TRUE(live.sites[0].runtime_internal);
  EXPECT_EQ(live.sites[0].old_blocks, 61u);
  EXPECT_EQ(live.sites[0].old_bytes, 6100u);
  EXPECT_EQ(live.sites[0].freed_after_report, 20u);
}

TEST(ResultReaderTest, RejectsBadLiveSites) {
  FileSpec spec;
  spec.with_leaks_section = false;
  spec.with_live_section = true;
  spec.live_stack = 7;
  EXPECT_THROW(
      {
        try {
          parse_result(make_file(spec), "f");
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(),
                       "f: corrupt result file (live section: site refers to unknown stack 7)");
          throw;
        }
      },
      Error);
  spec.live_stack = 1;
  spec.live_flags = 6;
  EXPECT_THROW(parse_result(make_file(spec), "f"), Error);
  spec.live_flags =
      core::result::kLiveSiteNotSampled;  // the blocks not sampled have stack 0, never another
  EXPECT_EQ(error_of(make_file(spec)),
            "f.mtr: corrupt result file (live section: site 0 of blocks not sampled has a stack "
            "or another flag)");
  spec.live_flags = 0;
  spec.with_live_section = false;  // neither leaks nor live
  EXPECT_THROW(parse_result(make_file(spec), "f"), Error);
}

}  // namespace
}  // namespace memtrack::report
