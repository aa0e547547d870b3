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

// One 48-byte record of the errors section, as written (docs/format.md, section 7).
struct ErrorRecord {
  uint8_t kind = 1;  // double free
  uint8_t where = 0;
  uint8_t alloc_call = 0;  // malloc
  uint8_t free_call = 0;   // free
  uint8_t alloc_aligned = 0;
  uint8_t free_aligned = 0;
  uint16_t reserved = 0;
  uint32_t occurrences = 2;
  uint32_t bad_stack = 1;
  uint32_t alloc_stack = 2;
  uint32_t free_stack = 1;
  uint64_t address = 0x4a5b040;
  uint64_t block_start = 0x4a5b040;
  uint64_t block_size = 100;
};

// One record of the resources section, as written (docs/format.md, section 8).
struct ResourceRecord {
  int32_t fd = 3;
  uint8_t kind = 1;   // file
  uint8_t call = 22;  // fopen
  uint8_t stream = 1;
  std::string mode = "w";
  uint32_t flags = 01101;  // O_WRONLY|O_CREAT|O_TRUNC
  uint32_t stack_id = 1;
  std::string description = "/tmp/out.txt";
};

struct FileSpec {
  bool with_leaks_section = true;
  uint8_t kinds[2] = {4, 4};  // of the two leak records
  bool with_indirect_section = false;
  std::vector<IndirectRecord> indirect;  // its records
  bool indirect_first = false;           // write it before the leaks section
  bool indirect_twice = false;           // write it twice after the leaks section
  bool with_errors_section = false;
  std::vector<ErrorRecord> errors;  // its records
  uint32_t extra_error_count = 0;   // added to the count the section announces
  uint32_t extra_error_bytes = 0;   // zero bytes after the records
  bool errors_first = false;        // write it before the stacks section
  bool errors_twice = false;        // write it twice at the end
  bool with_live_section = false;   // a live report (with_leaks_section false for a real one)
  uint32_t live_stack = 1;          // the stack its one site refers to
  uint32_t live_flags = 1;          // that site's flags
  bool with_resources_section = false;
  std::vector<ResourceRecord> resources;  // its records
  uint64_t untracked_resources = 0;
  uint32_t resources_reserved = 0;
  uint32_t extra_resource_count = 0;  // added to the count the section announces
  uint32_t extra_resource_bytes = 0;  // zero bytes after the records
  bool resources_first = false;       // write it before the stacks section
  bool resources_twice = false;       // write it twice at the end
  bool with_crash_section = false;
  uint32_t crash_signal = 11;
  uint32_t crash_flags = result::kCrashHasAddress;
  uint32_t crash_stack = 2;
  uint32_t crash_reserved = 0;
};

void write_crash(core::ResultWriter& w, const FileSpec& spec) {
  w.begin_section(result::Section::kCrash, result::kCrashRecordSize);
  w.put_u32(spec.crash_signal);
  w.put_i32(1);  // SEGV_MAPERR
  w.put_u64(0x10);
  w.put_u32(4321);
  w.put_u32(spec.crash_flags);
  w.put_u32(spec.crash_stack);
  w.put_u32(spec.crash_reserved);
}

void write_live(core::ResultWriter& w, const FileSpec& spec) {
  w.begin_section(result::Section::kLive, result::kLiveHeaderSize + result::kLiveSiteSize);
  w.put_u32(3);  // sequence
  w.put_u32(0);
  for (uint64_t v : {4000, 1000, 2000, 90, 9000}) w.put_u64(v);
  w.put_u32(1);
  w.put_u32(0);
  w.put_u32(spec.live_stack);
  w.put_u32(spec.live_flags);
  for (uint64_t v : {61, 6100, 20}) w.put_u64(v);
}

void write_resources(core::ResultWriter& w, const FileSpec& spec) {
  uint64_t size = 16 + spec.extra_resource_bytes;
  for (const ResourceRecord& r : spec.resources) {
    size += result::kResourceRecordMinSize + r.mode.size() + r.description.size();
  }
  w.begin_section(result::Section::kResources, size);
  w.put_u32(static_cast<uint32_t>(spec.resources.size()) + spec.extra_resource_count);
  w.put_u32(spec.resources_reserved);
  w.put_u64(spec.untracked_resources);
  for (const ResourceRecord& r : spec.resources) {
    w.put_i32(r.fd);
    for (uint8_t b : {r.kind, r.call, r.stream, static_cast<uint8_t>(r.mode.size())}) {
      w.put_u8(b);
    }
    w.put_u32(r.flags);
    w.put_u32(r.stack_id);
    w.put_u16(static_cast<uint16_t>(r.description.size()));
    w.put_bytes(r.mode.data(), r.mode.size());
    w.put_bytes(r.description.data(), r.description.size());
  }
  for (uint32_t i = 0; i < spec.extra_resource_bytes; ++i) w.put_u8(0);
}

void write_errors(core::ResultWriter& w, const FileSpec& spec) {
  w.begin_section(result::Section::kErrors,
                  4 + result::kErrorRecordSize * spec.errors.size() + spec.extra_error_bytes);
  w.put_u32(static_cast<uint32_t>(spec.errors.size()) + spec.extra_error_count);
  for (const ErrorRecord& r : spec.errors) {
    for (uint8_t b :
         {r.kind, r.where, r.alloc_call, r.free_call, r.alloc_aligned, r.free_aligned}) {
      w.put_u8(b);
    }
    w.put_u16(r.reserved);
    for (uint32_t v : {r.occurrences, r.bad_stack, r.alloc_stack, r.free_stack}) w.put_u32(v);
    for (uint64_t v : {r.address, r.block_start, r.block_size}) w.put_u64(v);
  }
  for (uint32_t i = 0; i < spec.extra_error_bytes; ++i) w.put_u8(0);
}

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
// indirect and an errors section if the spec asks for them.
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
    if (spec.with_errors_section && spec.errors_first) write_errors(w, spec);
    if (spec.with_resources_section && spec.resources_first) write_resources(w, spec);
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
    if (spec.with_errors_section && !spec.errors_first) write_errors(w, spec);
    if (spec.errors_twice) write_errors(w, spec);
    if (spec.with_live_section) write_live(w, spec);
    if (spec.with_resources_section && !spec.resources_first) write_resources(w, spec);
    if (spec.resources_twice) write_resources(w, spec);
    if (spec.with_crash_section) write_crash(w, spec);
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

// A double free (with allocation and first-free stacks, 2 occurrences), an invalid free of a
// stack address (no block, no stacks but the bad call's) and an aligned-new/delete mismatch.
FileSpec errors_spec() {
  FileSpec spec;
  spec.with_errors_section = true;
  ErrorRecord double_free;
  ErrorRecord on_stack;
  on_stack.kind = 2;
  on_stack.where = 2;
  on_stack.alloc_call = 255;
  on_stack.occurrences = 1;
  on_stack.bad_stack = 2;
  on_stack.alloc_stack = 0;
  on_stack.free_stack = 0;
  on_stack.address = 0x7ffc0010;
  on_stack.block_start = 0;
  on_stack.block_size = 0;
  ErrorRecord mismatch;
  mismatch.kind = 3;
  mismatch.alloc_call = 1;
  mismatch.free_call = 1;
  mismatch.alloc_aligned = 1;
  mismatch.occurrences = 0xffffffff;
  mismatch.free_stack = 0;
  mismatch.address = mismatch.block_start = 0xffffffffffffff00;
  mismatch.block_size = 0xffffffffffffffff;
  spec.errors = {double_free, on_stack, mismatch};
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

// Every prefix of a valid file is rejected with a message naming the file.
void expect_every_truncation_rejected(const std::vector<uint8_t>& data) {
  for (size_t size = 0; size < data.size(); ++size) {
    std::vector<uint8_t> cut(data.begin(), data.begin() + static_cast<long>(size));
    std::string error = error_of(cut);
    ASSERT_FALSE(error.empty()) << "accepted a file cut to " << size << " bytes";
    EXPECT_EQ(error.rfind("f.mtr: ", 0), 0u) << error;
  }
}

// Every single flipped byte of a valid file is rejected (checksum or structure).
void expect_every_flip_rejected(const std::vector<uint8_t>& data) {
  for (size_t i = 0; i < data.size(); ++i) {
    std::vector<uint8_t> bad = data;
    bad[i] ^= 0x40;
    EXPECT_FALSE(error_of(bad).empty()) << "accepted a file with byte " << i << " changed";
  }
}

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

TEST(ResultReaderTest, RoundTripsErrors) {
  ResultFile file = parse_result(make_file(errors_spec()), "f.mtr");
  ASSERT_EQ(file.errors.size(), 3u);
  const RawError& d = file.errors[0];
  EXPECT_EQ(d.kind, ErrorKind::kDoubleFree);
  EXPECT_EQ(d.where, ErrorWhere::kUnknown);
  EXPECT_EQ(d.alloc_call, AllocCall::kMalloc);
  EXPECT_EQ(d.free_call, FreeCall::kFree);
  EXPECT_FALSE(d.alloc_aligned);
  EXPECT_FALSE(d.free_aligned);
  EXPECT_EQ(d.occurrences, 2u);
  EXPECT_EQ(d.bad_stack, 1u);
  EXPECT_EQ(d.alloc_stack, 2u);
  EXPECT_EQ(d.free_stack, 1u);
  EXPECT_EQ(d.address, 0x4a5b040u);
  EXPECT_EQ(d.block_start, 0x4a5b040u);
  EXPECT_EQ(d.block_size, 100u);
  const RawError& s = file.errors[1];
  EXPECT_EQ(s.kind, ErrorKind::kInvalidFree);
  EXPECT_EQ(s.where, ErrorWhere::kStack);
  EXPECT_EQ(s.alloc_call, AllocCall::kNone);
  EXPECT_EQ(s.occurrences, 1u);
  EXPECT_EQ(s.bad_stack, 2u);
  EXPECT_EQ(s.alloc_stack, 0u);  // 0: not known, needs no stack entry
  EXPECT_EQ(s.free_stack, 0u);
  EXPECT_EQ(s.address, 0x7ffc0010u);
  EXPECT_EQ(s.block_start, 0u);
  EXPECT_EQ(s.block_size, 0u);
  const RawError& m = file.errors[2];
  EXPECT_EQ(m.kind, ErrorKind::kMismatchedFree);
  EXPECT_EQ(m.alloc_call, AllocCall::kNew);
  EXPECT_EQ(m.free_call, FreeCall::kDelete);
  EXPECT_TRUE(m.alloc_aligned);
  EXPECT_FALSE(m.free_aligned);
  EXPECT_EQ(m.occurrences, 0xffffffffu);
  EXPECT_EQ(m.address, 0xffffffffffffff00u);
  EXPECT_EQ(m.block_size, 0xffffffffffffffffu);
  // The rest of the file is unchanged by the section.
  EXPECT_EQ(file.leaks.size(), 2u);
  EXPECT_EQ(file.stacks.size(), 2u);
}

TEST(ResultReaderTest, RoundTripsEveryErrorValue) {
  auto read_one = [](const ErrorRecord& record) {
    FileSpec spec;
    spec.with_errors_section = true;
    spec.errors = {record};
    ResultFile file = parse_result(make_file(spec), "f.mtr");
    EXPECT_EQ(file.errors.size(), 1u);
    return file.errors.empty() ? RawError{} : file.errors[0];
  };
  const ErrorKind kinds[] = {ErrorKind::kDoubleFree, ErrorKind::kInvalidFree,
                             ErrorKind::kMismatchedFree, ErrorKind::kReallocAfterFree};
  const ErrorWhere wheres[] = {ErrorWhere::kUnknown, ErrorWhere::kHeap, ErrorWhere::kStack,
                               ErrorWhere::kGlobal};
  const FreeCall frees[] = {FreeCall::kFree, FreeCall::kDelete, FreeCall::kDeleteArray,
                            FreeCall::kRealloc};
  for (uint8_t i = 0; i < 4; ++i) {
    ErrorRecord r;
    r.kind = static_cast<uint8_t>(i + 1);
    r.where = i;
    r.free_call = i;
    r.free_aligned = i % 2;
    RawError e = read_one(r);
    EXPECT_EQ(e.kind, kinds[i]);
    EXPECT_EQ(e.where, wheres[i]);
    EXPECT_EQ(e.free_call, frees[i]);
    EXPECT_EQ(e.free_aligned, i % 2 == 1);
  }
  const std::pair<uint8_t, AllocCall> allocs[] = {{0, AllocCall::kMalloc},
                                                  {1, AllocCall::kNew},
                                                  {2, AllocCall::kNewArray},
                                                  {255, AllocCall::kNone}};
  for (auto [value, call] : allocs) {
    ErrorRecord r;
    r.alloc_call = value;
    EXPECT_EQ(read_one(r).alloc_call, call) << int{value};
  }
}

TEST(ResultReaderTest, ErrorsSectionIsOptionalAndMayBeEmpty) {
  EXPECT_TRUE(parse_result(make_file(), "f.mtr").errors.empty());
  FileSpec empty;
  empty.with_errors_section = true;
  EXPECT_TRUE(parse_result(make_file(empty), "f.mtr").errors.empty());
  // With the other optional section, in either order after the stacks.
  FileSpec both = classified_spec();
  both.with_errors_section = true;
  both.errors = errors_spec().errors;
  ResultFile file = parse_result(make_file(both), "f.mtr");
  EXPECT_EQ(file.errors.size(), 3u);
  EXPECT_EQ(file.leaks[0].indirect_bytes, 48u);
}

TEST(ResultReaderTest, RejectsEveryTruncationAndFlipWithAnErrorsSection) {
  std::vector<uint8_t> data = make_file(errors_spec());
  expect_every_truncation_rejected(data);
  expect_every_flip_rejected(data);
}

TEST(ResultReaderTest, RejectsBadErrorRecords) {
  // Each case changes one field of the first record of errors_spec().
  auto error_with = [](auto change) {
    FileSpec spec = errors_spec();
    change(spec.errors[0]);
    return error_of(make_file(spec));
  };
  const std::string prefix = "f.mtr: corrupt result file (errors section: ";
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.kind = 0; }), prefix + "unknown error kind 0)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.kind = 5; }), prefix + "unknown error kind 5)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.where = 4; }), prefix + "unknown error location 4)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.alloc_call = 3; }),
            prefix + "unknown allocation call 3)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.alloc_call = 254; }),
            prefix + "unknown allocation call 254)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.free_call = 4; }), prefix + "unknown free call 4)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.alloc_aligned = 2; }),
            prefix + "alloc_aligned of error 0 is not 0 or 1)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.free_aligned = 0x80; }),
            prefix + "free_aligned of error 0 is not 0 or 1)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.reserved = 1; }),
            prefix + "reserved field of error 0 is not 0)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.bad_stack = 3; }),
            prefix + "error refers to unknown stack 3)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.bad_stack = 0; }),
            prefix + "error refers to unknown stack 0)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.alloc_stack = 7; }),
            prefix + "error refers to unknown allocation stack 7)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.free_stack = 0xffffffff; }),
            prefix + "error refers to unknown free stack 4294967295)");
  // The third record: the index in the message is the record's.
  FileSpec third = errors_spec();
  third.errors[2].reserved = 0x100;
  EXPECT_EQ(error_of(make_file(third)), prefix + "reserved field of error 2 is not 0)");
}

TEST(ResultReaderTest, RejectsBadErrorsSections) {
  const std::string prefix = "f.mtr: corrupt result file (errors section: ";
  FileSpec too_many = errors_spec();
  too_many.extra_error_count = 1;
  EXPECT_EQ(error_of(make_file(too_many)), prefix + "record count too large)");
  FileSpec huge = errors_spec();
  huge.extra_error_count = 0xffffffff - 3;
  EXPECT_EQ(error_of(make_file(huge)), prefix + "record count too large)");
  FileSpec leftover = errors_spec();
  leftover.extra_error_bytes = 47;  // less than a record: the count still fits
  EXPECT_EQ(error_of(make_file(leftover)), prefix + "unexpected bytes at the end of the section)");
  FileSpec first = errors_spec();
  first.errors_first = true;
  EXPECT_EQ(error_of(make_file(first)), prefix + "comes before the stacks section)");
  FileSpec twice = errors_spec();
  twice.errors_twice = true;
  EXPECT_EQ(error_of(make_file(twice)), prefix + "appears twice)");
}

// A FILE stream left open (fd 3) and an accepted socket (fd 7, another stack), 5 more
// descriptors beyond what the runtime could record.
FileSpec resources_spec() {
  FileSpec spec;
  spec.with_resources_section = true;
  spec.untracked_resources = 5;
  ResourceRecord stream;
  ResourceRecord socket;
  socket.fd = 7;
  socket.kind = 3;
  socket.call = 13;  // accept4
  socket.stream = 0;
  socket.mode = "";
  socket.flags = 02000002;  // O_RDWR|O_CLOEXEC
  socket.stack_id = 2;
  socket.description = "TCP 127.0.0.1:8080 -> 127.0.0.1:40000";
  spec.resources = {stream, socket};
  return spec;
}

TEST(ResultReaderTest, RoundTripsResources) {
  ResultFile file = parse_result(make_file(resources_spec()), "f.mtr");
  EXPECT_TRUE(file.tracks_resources);
  EXPECT_EQ(file.untracked_resources, 5u);
  ASSERT_EQ(file.resources.size(), 2u);
  const RawResource& f = file.resources[0];
  EXPECT_EQ(f.fd, 3);
  EXPECT_EQ(f.kind, ResourceKind::kFile);
  EXPECT_EQ(f.call, "fopen");
  EXPECT_TRUE(f.stream);
  EXPECT_EQ(f.mode, "w");
  EXPECT_EQ(f.flags, 01101u);
  EXPECT_EQ(f.stack_id, 1u);
  EXPECT_EQ(f.description, "/tmp/out.txt");
  const RawResource& s = file.resources[1];
  EXPECT_EQ(s.fd, 7);
  EXPECT_EQ(s.kind, ResourceKind::kSocket);
  EXPECT_EQ(s.call, "accept4");
  EXPECT_FALSE(s.stream);
  EXPECT_EQ(s.mode, "");
  EXPECT_EQ(s.flags, 02000002u);
  EXPECT_EQ(s.stack_id, 2u);
  EXPECT_EQ(s.description, "TCP 127.0.0.1:8080 -> 127.0.0.1:40000");
  EXPECT_EQ(file.leaks.size(), 2u);  // the rest of the file is unchanged by the section
}

TEST(ResultReaderTest, ResourcesSectionIsOptionalAndMayBeEmpty) {
  ResultFile old = parse_result(make_file(), "f.mtr");  // older runtimes, or track_fds=0
  EXPECT_FALSE(old.tracks_resources);
  EXPECT_TRUE(old.resources.empty());
  FileSpec empty;
  empty.with_resources_section = true;
  ResultFile none_open = parse_result(make_file(empty), "f.mtr");
  EXPECT_TRUE(none_open.tracks_resources);
  EXPECT_TRUE(none_open.resources.empty());
  EXPECT_EQ(none_open.untracked_resources, 0u);
  FileSpec all = resources_spec();  // with the other optional sections
  all.with_errors_section = true;
  all.errors = errors_spec().errors;
  ResultFile file = parse_result(make_file(all), "f.mtr");
  EXPECT_EQ(file.resources.size(), 2u);
  EXPECT_EQ(file.errors.size(), 3u);
}

TEST(ResultReaderTest, RoundTripsEveryResourceKindAndCall) {
  for (uint8_t kind = 0; kind <= 10; ++kind) {
    FileSpec spec = resources_spec();
    spec.resources[1].kind = kind;
    EXPECT_EQ(static_cast<uint8_t>(parse_result(make_file(spec), "f.mtr").resources[1].kind), kind);
  }
  const char* calls[] = {"open",         "openat",        "creat",          "dup",
                         "dup2",         "dup3",          "fcntl",          "pipe",
                         "pipe2",        "socket",        "socketpair",     "accept",
                         "accept4",      "eventfd",       "timerfd_create", "signalfd",
                         "epoll_create", "epoll_create1", "inotify_init",   "inotify_init1",
                         "memfd_create", "fopen",         "fdopen",         "freopen"};
  for (uint8_t call = 1; call <= 24; ++call) {
    FileSpec spec = resources_spec();
    spec.resources[1].call = call;
    EXPECT_EQ(parse_result(make_file(spec), "f.mtr").resources[1].call, calls[call - 1]);
  }
}

TEST(ResultReaderTest, RejectsEveryTruncationAndFlipWithAResourcesSection) {
  std::vector<uint8_t> data = make_file(resources_spec());
  expect_every_truncation_rejected(data);
  expect_every_flip_rejected(data);
}

TEST(ResultReaderTest, RejectsBadResourceRecords) {
  // Each case changes one field of the second record of resources_spec().
  auto error_with = [](auto change) {
    FileSpec spec = resources_spec();
    change(spec.resources[1]);
    return error_of(make_file(spec));
  };
  const std::string prefix = "f.mtr: corrupt result file (resources section: descriptor record 1";
  EXPECT_EQ(error_with([](ResourceRecord& r) { r.fd = -1; }), prefix + " has a negative fd)");
  EXPECT_EQ(error_with([](ResourceRecord& r) { r.kind = 11; }),
            prefix + " has an unknown kind 11)");
  EXPECT_EQ(error_with([](ResourceRecord& r) { r.call = 0; }), prefix + " has an unknown call 0)");
  EXPECT_EQ(error_with([](ResourceRecord& r) { r.call = 25; }),
            prefix + " has an unknown call 25)");
  EXPECT_EQ(error_with([](ResourceRecord& r) { r.stream = 2; }),
            prefix + ": stream is not 0 or 1)");
  EXPECT_EQ(error_with([](ResourceRecord& r) { r.mode = "r"; }),
            prefix + " has a mode but is no stream)");
  EXPECT_EQ(error_with([](ResourceRecord& r) { r.stack_id = 3; }),
            prefix + " refers to unknown stack 3)");
}

TEST(ResultReaderTest, RejectsBadResourcesSections) {
  const std::string prefix = "f.mtr: corrupt result file (resources section: ";
  FileSpec reserved = resources_spec();
  reserved.resources_reserved = 1;
  EXPECT_EQ(error_of(make_file(reserved)), prefix + "reserved field is not 0)");
  FileSpec too_many = resources_spec();
  too_many.extra_resource_count = 1;  // records vary in size: the count fits, the data not
  EXPECT_EQ(error_of(make_file(too_many)), prefix + "truncated)");
  FileSpec huge = resources_spec();
  huge.extra_resource_count = 0xffffffff - 2;
  EXPECT_EQ(error_of(make_file(huge)), prefix + "record count too large)");
  FileSpec leftover = resources_spec();
  leftover.extra_resource_bytes = 17;  // less than a record: the count still fits
  EXPECT_EQ(error_of(make_file(leftover)), prefix + "unexpected bytes at the end of the section)");
  FileSpec first = resources_spec();
  first.resources_first = true;
  EXPECT_EQ(error_of(make_file(first)), prefix + "comes before the stacks section)");
  FileSpec twice = resources_spec();
  twice.resources_twice = true;
  EXPECT_EQ(error_of(make_file(twice)), prefix + "appears twice)");
}

FileSpec crash_spec() {
  FileSpec spec;
  spec.with_crash_section = true;
  return spec;
}

TEST(ResultReaderTest, RoundTripsACrash) {
  EXPECT_FALSE(parse_result(make_file(), "f.mtr").crash.has_value());
  ResultFile file = parse_result(make_file(crash_spec()), "f.mtr");
  ASSERT_TRUE(file.crash.has_value());
  EXPECT_EQ(file.crash->signal, 11);
  EXPECT_EQ(file.crash->code, 1);
  EXPECT_TRUE(file.crash->has_address);
  EXPECT_EQ(file.crash->address, 0x10u);
  EXPECT_EQ(file.crash->tid, 4321u);
  EXPECT_EQ(file.crash->stack_id, 2u);
}

TEST(ResultReaderTest, RejectsEveryTruncationAndFlipWithACrashSection) {
  std::vector<uint8_t> data = make_file(crash_spec());
  expect_every_truncation_rejected(data);
  expect_every_flip_rejected(data);
}

TEST(ResultReaderTest, RejectsBadCrashSections) {
  const std::string prefix = "f.mtr: corrupt result file (crash section: ";
  FileSpec signal = crash_spec();
  signal.crash_signal = 65;
  EXPECT_EQ(error_of(make_file(signal)), prefix + "signal 65 out of range)");
  FileSpec flags = crash_spec();
  flags.crash_flags = 2;
  EXPECT_EQ(error_of(make_file(flags)), prefix + "unknown flags)");
  FileSpec stack = crash_spec();
  stack.crash_stack = 9;
  EXPECT_EQ(error_of(make_file(stack)), prefix + "refers to unknown stack 9)");
  FileSpec reserved = crash_spec();
  reserved.crash_reserved = 1;
  EXPECT_EQ(error_of(make_file(reserved)), prefix + "reserved field is not 0)");
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
  spec.live_flags = 0;
  spec.with_live_section = false;  // neither leaks nor live
  EXPECT_THROW(parse_result(make_file(spec), "f"), Error);
}

}  // namespace
}  // namespace memtrack::report
