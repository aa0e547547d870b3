// Result files for the reader's unit tests: written with core::ResultWriter from a FileSpec
// that says which sections to write and which fields to spoil. Test-only.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/result_records.h"
#include "core/result_writer.h"
#include "report/result_reader.h"

namespace memtrack::report::fixture {

namespace result = core::result;

using result::ErrorRecord;
using result::IndirectRecord;

// A double free of a 100-byte malloc'd block, twice at stack 1, allocated at stack 2.
inline ErrorRecord double_free_record() {
  ErrorRecord r;
  r.kind = result::ErrorKind::kDoubleFree;
  r.where = result::ErrorWhere::kUnknown;
  r.alloc_call = result::AllocCall::kMalloc;
  r.free_call = result::FreeCall::kFree;
  r.occurrences = 2;
  r.bad_stack = 1;
  r.alloc_stack = 2;
  r.free_stack = 1;
  r.address = 0x4a5b040;
  r.block_start = 0x4a5b040;
  r.block_size = 100;
  return r;
}

// A resources record with its two strings; make_file fills in their sizes. By default a
// stream opened with fopen(..., "w") at stack 1.
struct ResourceRecord : result::ResourceRecord {
  ResourceRecord() {
    fd = 3;
    kind = result::ResourceKind::kFile;
    call = result::ResourceCall::kFopen;
    stream = 1;
    flags = 01101;  // O_WRONLY|O_CREAT|O_TRUNC
    stack_id = 1;
  }
  std::string mode = "w";
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
  // Section 16: (kind, text) notes, and what the count and the texts' sizes declare beyond.
  std::vector<std::pair<uint8_t, std::string>> notes;
  bool with_notes_section = false;
  uint32_t notes_declared_count = 0;  // 0: the notes' number
  uint32_t note_declared_extra = 0;   // added to every text's declared size
};

inline void write_crash(core::ResultWriter& w, const FileSpec& spec) {
  w.begin_section(result::Section::kCrash, result::CrashRecord::kSize);
  result::CrashRecord r;
  r.signal = spec.crash_signal;
  r.code = 1;  // SEGV_MAPERR
  r.address = 0x10;
  r.tid = 4321;
  r.flags = spec.crash_flags;
  r.stack_id = spec.crash_stack;
  r.reserved = spec.crash_reserved;
  w.put_record(r);
}

inline void write_live(core::ResultWriter& w, const FileSpec& spec) {
  w.begin_section(result::Section::kLive, result::LiveHead::kSize + result::LiveSiteRecord::kSize);
  w.put_record(result::LiveHead{3, 0, 4000, 1000, 2000, 90, 9000, 1, 0});
  w.put_record(result::LiveSiteRecord{spec.live_stack, spec.live_flags, 61, 6100, 20});
}

inline void write_resources(core::ResultWriter& w, const FileSpec& spec) {
  uint64_t size = result::ResourcesHead::kSize + spec.extra_resource_bytes;
  for (const ResourceRecord& r : spec.resources) {
    size += result::ResourceRecord::kSize + r.mode.size() + r.description.size();
  }
  w.begin_section(result::Section::kResources, size);
  w.put_record(result::ResourcesHead{
      static_cast<uint32_t>(spec.resources.size()) + spec.extra_resource_count,
      spec.resources_reserved, spec.untracked_resources});
  for (const ResourceRecord& r : spec.resources) {
    result::ResourceRecord record = r;
    record.mode_size = static_cast<uint8_t>(r.mode.size());
    record.description_size = static_cast<uint16_t>(r.description.size());
    w.put_record(record);
    w.put_bytes(r.mode.data(), r.mode.size());
    w.put_bytes(r.description.data(), r.description.size());
  }
  for (uint32_t i = 0; i < spec.extra_resource_bytes; ++i) w.put_u8(0);
}

inline void write_errors(core::ResultWriter& w, const FileSpec& spec) {
  w.begin_section(result::Section::kErrors,
                  4 + ErrorRecord::kSize * spec.errors.size() + spec.extra_error_bytes);
  w.put_u32(static_cast<uint32_t>(spec.errors.size()) + spec.extra_error_count);
  for (const ErrorRecord& r : spec.errors) w.put_record(r);
  for (uint32_t i = 0; i < spec.extra_error_bytes; ++i) w.put_u8(0);
}

inline void write_indirect(core::ResultWriter& w, const std::vector<IndirectRecord>& records) {
  w.begin_section(result::Section::kIndirect, 4 + IndirectRecord::kSize * records.size());
  w.put_u32(static_cast<uint32_t>(records.size()));
  for (const IndirectRecord& r : records) w.put_record(r);
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
    w.begin_section(result::Section::kProcess,
                    result::ProcessRecord::kSize + 8 + sizeof(command) - 1 + exe.size());
    w.put_record(result::ProcessRecord{1234, 1000, result::ExitHow::kUnderscoreExit, 3});
    w.put_u32(sizeof(command) - 1);
    w.put_bytes(command, sizeof(command) - 1);
    w.put_u32(static_cast<uint32_t>(exe.size()));
    w.put_bytes(exe.data(), exe.size());
    w.begin_section(result::Section::kStats, 4 + 8 * 7);
    w.put_u32(7);
    for (uint64_t v : {10, 4, 1000, 600, 500, 1, 16}) w.put_u64(v);
    const std::string lib = "/lib/libx.so";
    w.begin_section(result::Section::kModules,
                    4 + 2 * result::ModuleRecord::kSize + 4 + exe.size() + lib.size());
    w.put_u32(2);
    for (uint64_t i = 0; i < 2; ++i) {
      const std::string& path = i == 0 ? exe : lib;
      result::ModuleRecord m;
      m.load_bias = m.start = 0x1000 * (i + 1);
      m.end = m.start + 0x800;
      m.build_id_size = i == 0 ? 4 : 0;
      m.flags = i == 1 ? result::kModuleUnloaded : 0;
      m.path_size = static_cast<uint32_t>(path.size());
      w.put_record(m);
      if (i == 0) w.put_bytes("\xde\xad\xbe\xef", 4);
      w.put_bytes(path.data(), path.size());
    }
    if (spec.with_errors_section && spec.errors_first) write_errors(w, spec);
    if (spec.with_resources_section && spec.resources_first) write_resources(w, spec);
    w.begin_section(result::Section::kStacks, 4 + 2 * result::StackRecord::kSize + 3 * 8);
    w.put_u32(2);
    w.put_record(result::StackRecord{1, 2});
    w.put_u64(0x1100);
    w.put_u64(0x1200);
    w.put_record(result::StackRecord{2, 1});
    w.put_u64(0x2100);
    if (spec.with_indirect_section && spec.indirect_first) write_indirect(w, spec.indirect);
    if (spec.with_leaks_section) {
      w.begin_section(result::Section::kLeaks, 4 + 2 * result::LeakRecord::kSize);
      w.put_u32(2);
      for (uint32_t id : {1u, 2u}) {
        result::LeakRecord r;
        r.stack_id = id;
        r.kind = result::LeakKind{spec.kinds[id - 1]};
        r.flags = id == 2 ? result::kLeakRuntimeInternal : 0;
        r.bytes = 100 * id;
        r.blocks = id;
        w.put_record(r);
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
    if (spec.with_notes_section) {
      uint64_t size = 4;
      for (const auto& [kind, text] : spec.notes) size += 5 + text.size();
      w.begin_section(result::Section::kNotes, size);
      w.put_u32(spec.notes_declared_count != 0 ? spec.notes_declared_count
                                               : static_cast<uint32_t>(spec.notes.size()));
      for (const auto& [kind, text] : spec.notes) {
        w.put_u8(kind);
        w.put_u32(static_cast<uint32_t>(text.size()) + spec.note_declared_extra);
        w.put_bytes(text.data(), text.size());
      }
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
  ErrorRecord double_free = double_free_record();
  ErrorRecord on_stack = double_free;
  on_stack.kind = result::ErrorKind::kInvalidFree;
  on_stack.where = result::ErrorWhere::kStack;
  on_stack.alloc_call = result::AllocCall::kNone;
  on_stack.occurrences = 1;
  on_stack.bad_stack = 2;
  on_stack.alloc_stack = 0;
  on_stack.free_stack = 0;
  on_stack.address = 0x7ffc0010;
  on_stack.block_start = 0;
  on_stack.block_size = 0;
  ErrorRecord mismatch = double_free;
  mismatch.kind = result::ErrorKind::kMismatchedFree;
  mismatch.alloc_call = result::AllocCall::kNew;
  mismatch.free_call = result::FreeCall::kDelete;
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
  socket.kind = result::ResourceKind::kSocket;
  socket.call = result::ResourceCall::kAccept4;
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
