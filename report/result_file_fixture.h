// Result files for the reader's unit tests: written with core::ResultWriter from a FileSpec
// that says which sections to write and which fields to spoil. Test-only.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/result_writer.h"
#include "report/result_reader.h"

namespace memtrack::report::fixture {

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
  bool with_lsan_section = false;  // the program's __lsan_default_options/_suppressions
  std::string lsan_options;
  std::string lsan_suppressions;
  uint32_t lsan_declared_extra = 0;  // added to the suppressions' declared size
};

inline void write_crash(core::ResultWriter& w, const FileSpec& spec) {
  w.begin_section(result::Section::kCrash, result::kCrashRecordSize);
  w.put_u32(spec.crash_signal);
  w.put_i32(1);  // SEGV_MAPERR
  w.put_u64(0x10);
  w.put_u32(4321);
  w.put_u32(spec.crash_flags);
  w.put_u32(spec.crash_stack);
  w.put_u32(spec.crash_reserved);
}

inline void write_live(core::ResultWriter& w, const FileSpec& spec) {
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

inline void write_resources(core::ResultWriter& w, const FileSpec& spec) {
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

inline void write_errors(core::ResultWriter& w, const FileSpec& spec) {
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

inline void write_indirect(core::ResultWriter& w, const std::vector<IndirectRecord>& records) {
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
inline std::vector<uint8_t> make_file(const FileSpec& spec) {
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
    if (spec.with_lsan_section) {
      w.begin_section(result::Section::kLsan,
                      8 + spec.lsan_options.size() + spec.lsan_suppressions.size());
      w.put_u32(static_cast<uint32_t>(spec.lsan_options.size()));
      w.put_bytes(spec.lsan_options.data(), spec.lsan_options.size());
      w.put_u32(static_cast<uint32_t>(spec.lsan_suppressions.size()) + spec.lsan_declared_extra);
      w.put_bytes(spec.lsan_suppressions.data(), spec.lsan_suppressions.size());
    }
    EXPECT_TRUE(w.finish());
  }
  std::vector<uint8_t> data(static_cast<size_t>(lseek(fd, 0, SEEK_END)));
  EXPECT_EQ(pread(fd, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  std::fclose(tmp);
  return data;
}

inline std::vector<uint8_t> make_file() {
  return make_file(FileSpec{});
}

// Leak 0 definitely lost with 48 bytes in 2 blocks hanging off it, leak 1 indirectly lost.
inline FileSpec classified_spec() {
  FileSpec spec;
  spec.kinds[0] = 0;
  spec.kinds[1] = 1;
  spec.with_indirect_section = true;
  spec.indirect = {{0, 0, 48, 2}};
  return spec;
}

// A double free (with allocation and first-free stacks, 2 occurrences), an invalid free of a
// stack address (no block, no stacks but the bad call's) and an aligned-new/delete mismatch.
inline FileSpec errors_spec() {
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

inline std::string error_of(const std::vector<uint8_t>& data) {
  try {
    parse_result(data, "f.mtr");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline void expect_every_truncation_rejected(const std::vector<uint8_t>& data) {
  for (size_t size = 0; size < data.size(); ++size) {
    std::vector<uint8_t> cut(data.begin(), data.begin() + static_cast<long>(size));
    std::string error = error_of(cut);
    ASSERT_FALSE(error.empty()) << "accepted a file cut to " << size << " bytes";
    EXPECT_EQ(error.rfind("f.mtr: ", 0), 0u) << error;
  }
}

// Every single flipped byte of a valid file is rejected (checksum or structure).
inline void expect_every_flip_rejected(const std::vector<uint8_t>& data) {
  for (size_t i = 0; i < data.size(); ++i) {
    std::vector<uint8_t> bad = data;
    bad[i] ^= 0x40;
    EXPECT_FALSE(error_of(bad).empty()) << "accepted a file with byte " << i << " changed";
  }
}

inline FileSpec resources_spec() {
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

inline FileSpec crash_spec() {
  FileSpec spec;
  spec.with_crash_section = true;
  return spec;
}

}  // namespace memtrack::report::fixture
