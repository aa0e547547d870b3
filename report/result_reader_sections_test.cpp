// Unit tests for the reader's optional sections: allocator misuse errors, descriptors left
// open and the crash; each round-trips, and each bad record or section is named.
#include "report/result_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/result_file_fixture.h"

namespace memtrack::report {
namespace {

using namespace fixture;  // NOLINT(google-build-using-namespace): the test's vocabulary
namespace result = core::result;

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
    ErrorRecord r = double_free_record();
    r.kind = ErrorKind(i + 1);
    r.where = ErrorWhere{i};
    r.free_call = FreeCall{i};
    r.free_aligned = i % 2;
    RawError e = read_one(r);
    EXPECT_EQ(e.kind, kinds[i]);
    EXPECT_EQ(e.where, wheres[i]);
    EXPECT_EQ(e.free_call, frees[i]);
    EXPECT_EQ(e.free_aligned, i % 2 == 1);
  }
  // The heap check's kinds, with the detail flag.
  const ErrorKind heap_kinds[] = {ErrorKind::kInvalidRead, ErrorKind::kInvalidWrite,
                                  ErrorKind::kWriteOutsideBlock};
  for (uint8_t i = 0; i < 3; ++i) {
    ErrorRecord r = double_free_record();
    r.kind = heap_kinds[i];
    r.detail = i % 2;
    RawError e = read_one(r);
    EXPECT_EQ(e.kind, heap_kinds[i]);
    EXPECT_EQ(e.detail, i % 2 == 1);
  }
  const std::pair<uint8_t, AllocCall> allocs[] = {{0, AllocCall::kMalloc},
                                                  {1, AllocCall::kNew},
                                                  {2, AllocCall::kNewArray},
                                                  {255, AllocCall::kNone}};
  for (auto [value, call] : allocs) {
    ErrorRecord r = double_free_record();
    r.alloc_call = AllocCall{value};
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
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.kind = ErrorKind{0}; }),
            prefix + "unknown error kind 0)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.kind = ErrorKind{9}; }),
            prefix + "unknown error kind 9)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.detail = 2; }),
            prefix + "detail of error 0 is not 0 or 1)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.where = ErrorWhere{4}; }),
            prefix + "unknown error location 4)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.alloc_call = AllocCall{3}; }),
            prefix + "unknown allocation call 3)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.alloc_call = AllocCall{254}; }),
            prefix + "unknown allocation call 254)");
  EXPECT_EQ(error_with([](ErrorRecord& r) { r.free_call = FreeCall{4}; }),
            prefix + "unknown free call 4)");
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
  third.errors[2].reserved = 0x80;
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
    spec.resources[1].kind = ResourceKind{kind};
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
    spec.resources[1].call = result::ResourceCall{call};
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
  EXPECT_EQ(error_with([](ResourceRecord& r) { r.kind = ResourceKind{11}; }),
            prefix + " has an unknown kind 11)");
  EXPECT_EQ(error_with([](ResourceRecord& r) { r.call = result::ResourceCall{0}; }),
            prefix + " has an unknown call 0)");
  EXPECT_EQ(error_with([](ResourceRecord& r) { r.call = result::ResourceCall{25}; }),
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

TEST(ResultReaderTest, RoundTripsTheProgramsLsanDefaults) {
  FileSpec spec;
  spec.with_lsan_section = true;
  spec.lsan_options = "use_stacks=0:suppressions=/tmp/x.supp";
  spec.lsan_suppressions = "leak:libfoo\nleak:bar\n";
  ResultFile file = parse_result(make_file(spec), "f.mtr");
  EXPECT_EQ(file.lsan_default_options, "use_stacks=0:suppressions=/tmp/x.supp");
  EXPECT_EQ(file.lsan_default_suppressions, "leak:libfoo\nleak:bar\n");
  EXPECT_EQ(parse_result(make_file(), "f.mtr").lsan_default_options, "");
}

TEST(ResultReaderTest, RejectsAnLsanSectionWhoseTextIsCutOff) {
  FileSpec spec;
  spec.with_lsan_section = true;
  spec.lsan_suppressions = "leak:x";
  spec.lsan_declared_extra = 1;
  EXPECT_THROW(parse_result(make_file(spec), "f.mtr"), Error);
}

TEST(ResultReaderTest, RoundTripsTheRuntimesNotesAndSkipsUnknownKinds) {
  FileSpec spec;
  spec.with_notes_section = true;
  spec.notes = {{1, "the program defines malloc itself"},
                {7, "a kind of tomorrow"},
                {2, "jemalloc is linked into the program"}};
  ResultFile file = parse_result(make_file(spec), "f.mtr");
  ASSERT_EQ(file.notes.size(), 2u);
  EXPECT_EQ(file.notes[0].kind, result::NoteKind::kMallocUnseen);
  EXPECT_EQ(file.notes[0].text, "the program defines malloc itself");
  EXPECT_EQ(file.notes[1].kind, result::NoteKind::kAllocatorUnseen);
  EXPECT_EQ(file.notes[1].text, "jemalloc is linked into the program");
  EXPECT_TRUE(parse_result(make_file(), "f.mtr").notes.empty());
  expect_every_truncation_rejected(make_file(spec));
}

TEST(ResultReaderTest, RejectsBadNotesSections) {
  FileSpec spec;
  spec.with_notes_section = true;
  spec.notes = {{1, "x"}};
  FileSpec cut = spec;
  cut.note_declared_extra = 1;
  EXPECT_EQ(error_of(make_file(cut)), "f.mtr: corrupt result file (notes section: truncated)");
  FileSpec too_many = spec;
  too_many.notes_declared_count = 17;
  EXPECT_EQ(error_of(make_file(too_many)),
            "f.mtr: corrupt result file (notes section: more than 16 notes)");
  FileSpec too_long = spec;
  too_long.notes = {{1, std::string(513, 'n')}};
  EXPECT_EQ(error_of(make_file(too_long)),
            "f.mtr: corrupt result file (notes section: note longer than 512 bytes)");
}

}  // namespace
}  // namespace memtrack::report
