// Unit tests for the result-file reader: a file written with core::ResultWriter round-trips,
// and every truncation or corruption is rejected with one message naming the file.
#include "report/result_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/result_writer.h"

namespace memtrack::report {
namespace {

namespace result = core::result;

struct IndirectRecord {
  uint32_t leak_index = 0;
  uint32_t reserved = 0;
  uint64_t bytes = 0;
  uint64_t blocks = 0;
};

struct FileSpec {
  bool with_leaks_section = true;
  uint8_t kinds[2] = {4, 4};  // of the two leak records
  bool with_indirect_section = false;
  std::vector<IndirectRecord> indirect;  // its records
  bool indirect_first = false;           // write it before the leaks section
  bool indirect_twice = false;           // write it twice after the leaks section
};

void write_indirect(core::ResultWriter& w, const std::vector<IndirectRecord>& records) {
  w.begin_section(result::Section::kIndirect, 4 + 24 * records.size());
  w.put_u32(static_cast<uint32_t>(records.size()));
  for (const IndirectRecord& r : records) {
    w.put_u32(r.leak_index);
    w.put_u32(r.reserved);
    w.put_u64(r.bytes);
    w.put_u64(r.blocks);
  }
}

// Writes a small, valid file: one process, two modules, two stacks, two leaks, and an
// indirect section if the spec asks for one.
std::vector<uint8_t> make_file(const FileSpec& spec) {
  std::FILE* tmp = std::tmpfile();
  int fd = fileno(tmp);
  {
    core::ResultWriter w(fd);
    w.write_header();
    const char command[] = "./prog\0arg one";
    const std::string exe = "/usr/bin/prog";
    w.begin_section(result::Section::kProcess, 24 + sizeof(command) - 1 + exe.size());
    w.put_u32(1234);
    w.put_u32(1000);
    w.put_u32(static_cast<uint32_t>(result::ExitHow::kUnderscoreExit));
    w.put_i32(3);
    w.put_u32(sizeof(command) - 1);
    w.put_bytes(command, sizeof(command) - 1);
    w.put_u32(static_cast<uint32_t>(exe.size()));
    w.put_bytes(exe.data(), exe.size());
    w.begin_section(result::Section::kStats, 4 + 8 * 7);
    w.put_u32(7);
    for (uint64_t v : {10, 4, 1000, 600, 500, 1, 16}) w.put_u64(v);
    const std::string lib = "/lib/libx.so";
    w.begin_section(result::Section::kModules, 4 + 2 * 32 + 4 + exe.size() + lib.size());
    w.put_u32(2);
    for (int i = 0; i < 2; ++i) {
      const std::string& path = i == 0 ? exe : lib;
      w.put_u64(0x1000 * (i + 1));
      w.put_u64(0x1000 * (i + 1));
      w.put_u64(0x1000 * (i + 1) + 0x800);
      w.put_u16(i == 0 ? 4 : 0);
      w.put_u16(i == 1 ? result::kModuleUnloaded : 0);
      w.put_u32(static_cast<uint32_t>(path.size()));
      if (i == 0) w.put_bytes("\xde\xad\xbe\xef", 4);
      w.put_bytes(path.data(), path.size());
    }
    w.begin_section(result::Section::kStacks, 4 + (8 + 16) + (8 + 8));
    w.put_u32(2);
    w.put_u32(1);
    w.put_u32(2);
    w.put_u64(0x1100);
    w.put_u64(0x1200);
    w.put_u32(2);
    w.put_u32(1);
    w.put_u64(0x2100);
    if (spec.with_indirect_section && spec.indirect_first) write_indirect(w, spec.indirect);
    if (spec.with_leaks_section) {
      w.begin_section(result::Section::kLeaks, 4 + 2 * 24);
      w.put_u32(2);
      for (uint32_t id : {1u, 2u}) {
        w.put_u32(id);
        w.put_u8(spec.kinds[id - 1]);
        w.put_u8(id == 2 ? result::kLeakRuntimeInternal : 0);
        w.put_u16(0);
        w.put_u64(100 * id);
        w.put_u64(id);
      }
    }
    if (spec.with_indirect_section && !spec.indirect_first) write_indirect(w, spec.indirect);
    if (spec.indirect_twice) write_indirect(w, spec.indirect);
    EXPECT_TRUE(w.finish());
  }
  std::vector<uint8_t> data(static_cast<size_t>(lseek(fd, 0, SEEK_END)));
  EXPECT_EQ(pread(fd, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  std::fclose(tmp);
  return data;
}

std::vector<uint8_t> make_file() {
  return make_file(FileSpec{});
}

// Leak 0 definitely lost with 48 bytes in 2 blocks hanging off it, leak 1 indirectly lost.
FileSpec classified_spec() {
  FileSpec spec;
  spec.kinds[0] = 0;
  spec.kinds[1] = 1;
  spec.with_indirect_section = true;
  spec.indirect = {{0, 0, 48, 2}};
  return spec;
}

std::string error_of(const std::vector<uint8_t>& data) {
  try {
    parse_result(data, "f.mtr");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

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

TEST(ResultReaderTest, RejectsEveryTruncation) {
  std::vector<uint8_t> data = make_file();
  for (size_t size = 0; size < data.size(); ++size) {
    std::vector<uint8_t> cut(data.begin(), data.begin() + static_cast<long>(size));
    std::string error = error_of(cut);
    ASSERT_FALSE(error.empty()) << "accepted a file cut to " << size << " bytes";
    EXPECT_EQ(error.rfind("f.mtr: ", 0), 0u) << error;
  }
}

TEST(ResultReaderTest, RejectsEveryFlippedByte) {
  std::vector<uint8_t> data = make_file();
  for (size_t i = 0; i < data.size(); ++i) {
    std::vector<uint8_t> bad = data;
    bad[i] ^= 0x40;
    EXPECT_FALSE(error_of(bad).empty()) << "accepted a file with byte " << i << " changed";
  }
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
  for (size_t size = 0; size < data.size(); ++size) {
    std::vector<uint8_t> cut(data.begin(), data.begin() + static_cast<long>(size));
    std::string error = error_of(cut);
    ASSERT_FALSE(error.empty()) << "accepted a file cut to " << size << " bytes";
    EXPECT_EQ(error.rfind("f.mtr: ", 0), 0u) << error;
  }
  for (size_t i = 0; i < data.size(); ++i) {
    std::vector<uint8_t> bad = data;
    bad[i] ^= 0x40;
    EXPECT_FALSE(error_of(bad).empty()) << "accepted a file with byte " << i << " changed";
  }
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

}  // namespace
}  // namespace memtrack::report
