// Tests for build_process_report with a fake symbolizer: stack expansion (inlined frames),
// runtime-internal blocks, suppressions, ordering and totals, allocator misuse errors.
#include "report/build_report.h"

#include <map>
#include <utility>

#include <gtest/gtest.h>

#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

using testing::debug_frame;
using testing::symbol_frame;

// Addresses -> frames; unknown addresses give one "??" frame, as the real symbolizer does.
class FakeSymbolizer {
 public:
  void add(uint64_t address, std::vector<Frame> frames) { frames_[address] = std::move(frames); }

  SymbolizeFn fn() {
    return [this](uint64_t address, bool is_return_address) -> const std::vector<Frame>& {
      calls_.emplace_back(address, is_return_address);
      auto it = frames_.find(address);
      if (it != frames_.end()) return it->second;
      unknown_ = {Frame{}};
      unknown_[0].address = address;
      return unknown_;
    };
  }
  const std::vector<std::pair<uint64_t, bool>>& calls() const { return calls_; }

 private:
  std::map<uint64_t, std::vector<Frame>> frames_;
  std::vector<Frame> unknown_;
  std::vector<std::pair<uint64_t, bool>> calls_;
};

RawLeak raw(uint32_t stack_id, uint64_t bytes, uint64_t blocks, bool internal = false,
            LeakKind kind = LeakKind::kUnclassified) {
  RawLeak r;
  r.stack_id = stack_id;
  r.bytes = bytes;
  r.blocks = blocks;
  r.runtime_internal = internal;
  r.kind = kind;
  return r;
}

ResultFile base_file() {
  ResultFile f;
  f.path = "/tmp/memtrack.42";
  f.pid = 42;
  f.ppid = 7;
  f.command = {"./prog", "-x"};
  f.exit.how = ExitInfo::How::kSignal;
  f.exit.signal = 6;
  f.stats.allocations = 100;
  f.stats.frees = 90;
  f.stats.bytes_allocated = 5000;
  f.stats.peak_bytes = 3000;
  f.stats.live_bytes = 999;
  f.stats.untracked_allocations = 3;
  f.stats.untracked_bytes = 30;
  return f;
}

std::vector<uint64_t> first_addresses(const std::vector<LeakGroup>& groups) {
  std::vector<uint64_t> out;
  for (const LeakGroup& g : groups) out.push_back(g.stack.empty() ? 0 : g.stack[0].address);
  return out;
}

TEST(BuildReport, ExpandsInlinedFramesAndMarksReturnAddresses) {
  ResultFile file = base_file();
  file.stacks[1] = {0x100, 0x200, 0x300};
  file.leaks = {raw(1, 64, 2, false, LeakKind::kDefinite)};
  FakeSymbolizer sym;
  sym.add(0x100, {debug_frame(0x100, "alloc_here", "a.c", 1, 2)});
  sym.add(0x200, {debug_frame(0x200, "inner", "a.c", 5, 0, true),
                  debug_frame(0x200, "outer", "a.c", 9, 3)});
  ProcessReport p = build_process_report(file, sym.fn(), {}, Suppressions{});

  EXPECT_EQ(sym.calls(),
            (std::vector<std::pair<uint64_t, bool>>{{0x100, true}, {0x200, true}, {0x300, true}}));
  ASSERT_EQ(p.leaks.size(), 1u);
  const LeakGroup& g = p.leaks[0];
  EXPECT_EQ(g.kind, LeakKind::kDefinite);
  EXPECT_EQ(g.bytes, 64u);
  EXPECT_EQ(g.blocks, 2u);
  EXPECT_FALSE(g.runtime_internal);
  ASSERT_EQ(g.stack.size(), 4u);
  EXPECT_EQ(g.stack[0].function, "alloc_here");
  EXPECT_EQ(g.stack[1].function, "inner");
  EXPECT_TRUE(g.stack[1].inlined);
  EXPECT_EQ(g.stack[2].function, "outer");
  EXPECT_FALSE(g.stack[2].inlined);
  EXPECT_EQ(g.stack[3].function, "");
  EXPECT_EQ(g.stack[3].address, 0x300u);
}

TEST(BuildReport, MissingStackIdGivesEmptyStack) {
  ResultFile file = base_file();
  file.leaks = {raw(77, 10, 1)};
  FakeSymbolizer sym;
  ProcessReport p = build_process_report(file, sym.fn(), {}, Suppressions{});
  ASSERT_EQ(p.leaks.size(), 1u);
  EXPECT_TRUE(p.leaks[0].stack.empty());
  EXPECT_TRUE(sym.calls().empty());
}

TEST(BuildReport, RuntimeInternalIsCountedNotListedNorSymbolized) {
  ResultFile file = base_file();
  file.stacks[1] = {0x100};
  file.stacks[2] = {0x200};
  file.leaks = {raw(1, 288, 1, true), raw(2, 16, 1), raw(1, 12, 2, true)};
  FakeSymbolizer sym;
  ProcessReport p = build_process_report(file, sym.fn(), {}, Suppressions{});
  EXPECT_EQ(sym.calls(), (std::vector<std::pair<uint64_t, bool>>{{0x200, true}}));
  ASSERT_EQ(p.leaks.size(), 1u);
  EXPECT_EQ(p.leaks[0].bytes, 16u);
  EXPECT_TRUE(p.suppressed.empty());
  EXPECT_EQ(p.summary.runtime_internal.bytes, 300u);
  EXPECT_EQ(p.summary.runtime_internal.blocks, 3u);
  EXPECT_EQ(p.summary.leaked().bytes, 16u);
  EXPECT_EQ(p.summary.leaked().blocks, 1u);
}

TEST(BuildReport, KindsOutsideStackKindsAreCountedWithoutSymbolizing) {
  ResultFile file = base_file();
  file.stacks[1] = {0x100};
  file.stacks[2] = {0x200};
  file.leaks = {raw(1, 500, 5, false, LeakKind::kReachable),
                raw(2, 16, 1, false, LeakKind::kDefinite)};
  FakeSymbolizer sym;
  ProcessReport p = build_process_report(file, sym.fn(), {}, Suppressions{}, kDefaultShownKinds);
  EXPECT_EQ(sym.calls(), (std::vector<std::pair<uint64_t, bool>>{{0x200, true}}));
  ASSERT_EQ(p.leaks.size(), 2u);
  EXPECT_EQ(p.leaks[0].kind, LeakKind::kReachable);  // still listed by size, stack left empty
  EXPECT_TRUE(p.leaks[0].stack.empty());
  EXPECT_EQ(p.leaks[1].stack.size(), 1u);
  EXPECT_EQ(p.summary.of_kind(LeakKind::kReachable).bytes, 500u);
  EXPECT_EQ(p.summary.of_kind(LeakKind::kReachable).blocks, 5u);
  EXPECT_EQ(p.summary.leaked().bytes, 16u);

  // A suppression may match any kind: then every stack is symbolized.
  FakeSymbolizer with_supp;
  Suppressions supp = Suppressions::parse("leak:^nothing$", "s");
  ProcessReport q = build_process_report(file, with_supp.fn(), {}, supp, kDefaultShownKinds);
  EXPECT_EQ(with_supp.calls(),
            (std::vector<std::pair<uint64_t, bool>>{{0x100, true}, {0x200, true}}));
  EXPECT_EQ(q.leaks[0].stack.size(), 1u);
}

TEST(BuildReport, SuppressedGroupsAreMovedAndTotalled) {
  ResultFile file = base_file();
  file.stacks[1] = {0x100, 0x900};
  file.stacks[2] = {0x200, 0x900};
  file.stacks[3] = {0x300};
  file.leaks = {raw(1, 10, 1), raw(2, 20, 2), raw(3, 40, 4), raw(2, 25, 1)};
  FakeSymbolizer sym;
  sym.add(0x100, {symbol_frame(0x100, "/usr/lib/libvendor.so.1", 0x100, "vendor_alloc")});
  sym.add(0x200, {debug_frame(0x200, "mine", "m.c", 1, 1)});
  sym.add(0x300, {debug_frame(0x300, "mine_too", "m.c", 2, 1)});
  sym.add(0x900, {debug_frame(0x900, "main", "m.c", 3, 1)});
  Suppressions supp = Suppressions::parse("leak:^libvendor.so.1$\nleak:^mine$", "s");
  ProcessReport p = build_process_report(file, sym.fn(), {}, supp);

  ASSERT_EQ(p.leaks.size(), 1u);
  EXPECT_EQ(p.leaks[0].stack[0].function, "mine_too");
  ASSERT_EQ(p.suppressed.size(), 3u);
  EXPECT_EQ(p.suppressed[0].bytes, 25u);  // sorted like leaks
  EXPECT_EQ(p.suppressed[1].bytes, 20u);
  EXPECT_EQ(p.suppressed[2].bytes, 10u);
  EXPECT_EQ(p.summary.suppressed.bytes, 55u);
  EXPECT_EQ(p.summary.suppressed.blocks, 4u);
  EXPECT_EQ(p.summary.leaked().bytes, 40u);
  EXPECT_EQ(p.summary.leaked().blocks, 4u);
  // -v: what each entry took, in the order of the file.
  ASSERT_EQ(p.used_suppressions.size(), 2u);
  EXPECT_EQ(p.used_suppressions[0].name, "leak:^libvendor.so.1$");
  EXPECT_EQ(p.used_suppressions[0].origin, "s:1");
  EXPECT_EQ(p.used_suppressions[0].groups, 1u);
  EXPECT_EQ(p.used_suppressions[0].bytes, 10u);
  EXPECT_EQ(p.used_suppressions[0].blocks, 1u);
  EXPECT_EQ(p.used_suppressions[1].name, "leak:^mine$");
  EXPECT_EQ(p.used_suppressions[1].origin, "s:2");
  EXPECT_EQ(p.used_suppressions[1].groups, 2u);
  EXPECT_EQ(p.used_suppressions[1].bytes, 45u);
  EXPECT_EQ(p.used_suppressions[1].blocks, 3u);
  EXPECT_EQ(p.used_suppressions[1].descriptors, 0u);
}

TEST(BuildReport, SortsByBytesThenBlocksThenFirstAddress) {
  ResultFile file = base_file();
  for (uint32_t id = 1; id <= 6; ++id) file.stacks[id] = {0x1000u * (7 - id)};
  file.leaks = {
      raw(1, 100, 1),   // 0x6000
      raw(2, 100, 1),   // 0x5000: same size, lower address first
      raw(3, 100, 5),   // 0x4000: more blocks first
      raw(4, 500, 1),   // 0x3000: most bytes first
      raw(99, 100, 1),  // no stack: after the equal groups with stacks
      raw(5, 1, 1),     // 0x2000
  };
  FakeSymbolizer sym;
  ProcessReport p = build_process_report(file, sym.fn(), {}, Suppressions{});
  EXPECT_EQ(first_addresses(p.leaks),
            (std::vector<uint64_t>{0x3000, 0x4000, 0x5000, 0x6000, 0, 0x2000}));
  EXPECT_EQ(p.leaks[4].bytes, 100u);
  EXPECT_TRUE(p.leaks[4].stack.empty());
}

TEST(BuildReport, CopiesProcessFieldsStatsAndNotes) {
  ResultFile file = base_file();
  file.stacks[1] = {0x100};
  file.leaks = {raw(1, 7, 1), raw(1, 9, 3)};
  FakeSymbolizer sym;
  std::vector<std::string> notes = {"no debug info for /lib/libc.so.6", "second"};
  ProcessReport p = build_process_report(file, sym.fn(), notes, Suppressions{});
  EXPECT_EQ(p.pid, 42u);
  EXPECT_EQ(p.ppid, 7u);
  EXPECT_EQ(p.command, (std::vector<std::string>{"./prog", "-x"}));
  EXPECT_EQ(p.exit.how, ExitInfo::How::kSignal);
  EXPECT_EQ(p.exit.signal, 6);
  EXPECT_EQ(p.notes, notes);
  const Summary& s = p.summary;
  EXPECT_EQ(s.allocations, 100u);
  EXPECT_EQ(s.frees, 90u);
  EXPECT_EQ(s.bytes_allocated, 5000u);
  EXPECT_EQ(s.peak_bytes, 3000u);
  EXPECT_EQ(s.untracked_allocations, 3u);
  EXPECT_EQ(s.untracked_bytes, 30u);
  EXPECT_EQ(s.leaked().bytes, 16u);
  EXPECT_EQ(s.leaked().blocks, 4u);
  EXPECT_EQ(s.suppressed.bytes, 0u);
  EXPECT_EQ(s.suppressed.blocks, 0u);
  EXPECT_EQ(s.runtime_internal.bytes, 0u);
  EXPECT_EQ(s.runtime_internal.blocks, 0u);
  ASSERT_EQ(p.leaks.size(), 2u);
  EXPECT_EQ(p.leaks[0].bytes, 9u);
}

TEST(BuildReport, TotalsPerKindAndLeakedExcludesReachable) {
  ResultFile file = base_file();
  file.stacks[1] = {0x100};
  file.leaks = {
      raw(1, 16, 1, false, LeakKind::kDefinite),    raw(1, 32, 2, false, LeakKind::kDefinite),
      raw(1, 64, 4, false, LeakKind::kIndirect),    raw(1, 8, 1, false, LeakKind::kPossible),
      raw(1, 1024, 1, false, LeakKind::kReachable), raw(1, 5, 5, false, LeakKind::kUnclassified),
      raw(1, 288, 1, true, LeakKind::kReachable),  // runtime-internal: counted apart
      raw(1, 77, 7, true, LeakKind::kDefinite)};
  file.leaks[1].indirect_bytes = 64;
  file.leaks[1].indirect_blocks = 4;
  FakeSymbolizer sym;
  ProcessReport p = build_process_report(file, sym.fn(), {}, Suppressions{});
  const Summary& s = p.summary;
  EXPECT_EQ(std::pair(s.of_kind(LeakKind::kDefinite).bytes, s.of_kind(LeakKind::kDefinite).blocks),
            std::pair(48ul, 3ul));
  EXPECT_EQ(std::pair(s.of_kind(LeakKind::kIndirect).bytes, s.of_kind(LeakKind::kIndirect).blocks),
            std::pair(64ul, 4ul));
  EXPECT_EQ(std::pair(s.of_kind(LeakKind::kPossible).bytes, s.of_kind(LeakKind::kPossible).blocks),
            std::pair(8ul, 1ul));
  EXPECT_EQ(
      std::pair(s.of_kind(LeakKind::kReachable).bytes, s.of_kind(LeakKind::kReachable).blocks),
      std::pair(1024ul, 1ul));
  // definite + indirect + possible + unclassified; the indirect totals of the definite group
  // are not added again.
  EXPECT_EQ(std::pair(s.leaked().bytes, s.leaked().blocks), std::pair(125ul, 13ul));
  EXPECT_EQ(std::pair(s.runtime_internal.bytes, s.runtime_internal.blocks), std::pair(365ul, 8ul));

  // Every unsuppressed group of every kind is listed, sorted by its total bytes (a definite
  // group counts what hangs off it, as memcheck ranks loss records).
  ASSERT_EQ(p.leaks.size(), 6u);
  EXPECT_EQ(p.leaks[0].kind, LeakKind::kReachable);
  EXPECT_EQ(p.leaks[1].kind, LeakKind::kDefinite);
  EXPECT_EQ(p.leaks[1].bytes, 32u);
  EXPECT_EQ(p.leaks[1].indirect_bytes, 64u);
  EXPECT_EQ(p.leaks[1].indirect_blocks, 4u);
  EXPECT_EQ(p.leaks[2].kind, LeakKind::kIndirect);
  EXPECT_EQ(p.leaks[3].indirect_bytes, 0u);
  EXPECT_EQ(p.leaks[5].kind, LeakKind::kUnclassified);
}

TEST(BuildReport, SuppressionsMatchEachGroupOnItsOwnStack) {
  ResultFile file = base_file();
  file.stacks[1] = {0x100};
  file.stacks[2] = {0x200};
  file.leaks = {raw(1, 16, 1, false, LeakKind::kDefinite),
                raw(2, 64, 4, false, LeakKind::kIndirect),
                raw(1, 100, 1, false, LeakKind::kReachable)};
  file.leaks[0].indirect_bytes = 64;
  file.leaks[0].indirect_blocks = 4;
  FakeSymbolizer sym;
  sym.add(0x100, {debug_frame(0x100, "make_list", "l.c", 1, 1)});
  sym.add(0x200, {debug_frame(0x200, "make_node", "l.c", 2, 1)});
  Suppressions supp = Suppressions::parse("leak:^make_list$", "s");
  ProcessReport p = build_process_report(file, sym.fn(), {}, supp);
  // The list head and the reachable group of the same stack are suppressed; the nodes
  // hanging off the head have a stack of their own and stay.
  ASSERT_EQ(p.suppressed.size(), 2u);
  EXPECT_EQ(p.suppressed[0].kind, LeakKind::kReachable);
  EXPECT_EQ(p.suppressed[1].kind, LeakKind::kDefinite);
  EXPECT_EQ(p.suppressed[1].indirect_bytes, 64u);
  EXPECT_EQ(std::pair(p.summary.suppressed.bytes, p.summary.suppressed.blocks),
            std::pair(116ul, 2ul));
  ASSERT_EQ(p.leaks.size(), 1u);
  EXPECT_EQ(p.leaks[0].kind, LeakKind::kIndirect);
  EXPECT_EQ(std::pair(p.summary.of_kind(LeakKind::kIndirect).bytes,
                      p.summary.of_kind(LeakKind::kIndirect).blocks),
            std::pair(64ul, 4ul));
  EXPECT_EQ(p.summary.of_kind(LeakKind::kDefinite).bytes, 0u);
  EXPECT_EQ(p.summary.of_kind(LeakKind::kReachable).bytes, 0u);
  EXPECT_EQ(std::pair(p.summary.leaked().bytes, p.summary.leaked().blocks), std::pair(64ul, 4ul));
}

RawError raw_error(ErrorKind kind, uint32_t occurrences, uint32_t bad, uint32_t alloc,
                   uint32_t free) {
  RawError e;
  e.kind = kind;
  e.occurrences = occurrences;
  e.bad_stack = bad;
  e.alloc_stack = alloc;
  e.free_stack = free;
  return e;
}

TEST(BuildReport, ErrorsGetThreeSymbolizedStacks) {
  ResultFile file = base_file();
  file.stacks[1] = {0x100, 0x900};
  file.stacks[2] = {0x200};
  file.stacks[3] = {0x300, 0x900};
  RawError e = raw_error(ErrorKind::kDoubleFree, 3, 1, 2, 3);
  e.where = ErrorWhere::kHeap;
  e.alloc_call = AllocCall::kNewArray;
  e.free_call = FreeCall::kDeleteArray;
  e.alloc_aligned = true;
  e.free_aligned = true;
  e.address = 0x4a5b040;
  e.block_start = 0x4a5b000;
  e.block_size = 256;
  file.errors = {e};
  FakeSymbolizer sym;
  sym.add(0x100, {debug_frame(0x100, "inlined_free", "e.c", 3, 1, true),
                  debug_frame(0x100, "free_twice", "e.c", 9, 3)});
  sym.add(0x200, {debug_frame(0x200, "make", "e.c", 1, 1)});
  sym.add(0x300, {debug_frame(0x300, "free_once", "e.c", 5, 3)});
  sym.add(0x900, {debug_frame(0x900, "main", "e.c", 20, 3)});
  ProcessReport p = build_process_report(file, sym.fn(), {}, Suppressions{});

  // Every address is a return address, frame 0 included.
  EXPECT_EQ(sym.calls(),
            (std::vector<std::pair<uint64_t, bool>>{
                {0x100, true}, {0x900, true}, {0x200, true}, {0x300, true}, {0x900, true}}));
  ASSERT_EQ(p.errors.size(), 1u);
  const ErrorReport& r = p.errors[0];
  EXPECT_EQ(r.kind, ErrorKind::kDoubleFree);
  EXPECT_EQ(r.where, ErrorWhere::kHeap);
  EXPECT_EQ(r.alloc_call, AllocCall::kNewArray);
  EXPECT_EQ(r.free_call, FreeCall::kDeleteArray);
  EXPECT_TRUE(r.alloc_aligned);
  EXPECT_TRUE(r.free_aligned);
  EXPECT_EQ(r.occurrences, 3u);
  EXPECT_EQ(r.address, 0x4a5b040u);
  EXPECT_EQ(r.block_start, 0x4a5b000u);
  EXPECT_EQ(r.block_size, 256u);
  ASSERT_EQ(r.stack.size(), 3u);
  EXPECT_EQ(r.stack[0].function, "inlined_free");
  EXPECT_TRUE(r.stack[0].inlined);
  EXPECT_EQ(r.stack[1].function, "free_twice");
  EXPECT_EQ(r.stack[2].function, "main");
  ASSERT_EQ(r.alloc_stack.size(), 1u);
  EXPECT_EQ(r.alloc_stack[0].function, "make");
  ASSERT_EQ(r.free_stack.size(), 2u);
  EXPECT_EQ(r.free_stack[0].function, "free_once");
  EXPECT_EQ(p.summary.errors, 1u);
  EXPECT_EQ(p.summary.error_occurrences, 3u);
  // Errors are no leaks.
  EXPECT_TRUE(p.leaks.empty());
  EXPECT_EQ(p.summary.leaked().bytes, 0u);
}

TEST(BuildReport, ErrorStackIdZeroIsNotKnown) {
  ResultFile file = base_file();
  file.stacks[0] = {0x999};  // not written by the runtime; even so, 0 means "not known"
  file.stacks[1] = {0x100};
  file.errors = {raw_error(ErrorKind::kInvalidFree, 1, 1, 0, 0)};
  FakeSymbolizer sym;
  ProcessReport p = build_process_report(file, sym.fn(), {}, Suppressions{});
  EXPECT_EQ(sym.calls(), (std::vector<std::pair<uint64_t, bool>>{{0x100, true}}));
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].stack.size(), 1u);
  EXPECT_TRUE(p.errors[0].alloc_stack.empty());
  EXPECT_TRUE(p.errors[0].free_stack.empty());
}

TEST(BuildReport, ErrorsAreNeverSuppressedAndKeepFileOrder) {
  ResultFile file = base_file();
  file.stacks[1] = {0x100};
  file.stacks[2] = {0x200};
  file.leaks = {raw(1, 8, 1, false, LeakKind::kDefinite)};
  file.errors = {raw_error(ErrorKind::kMismatchedFree, 1, 2, 1, 0),
                 raw_error(ErrorKind::kDoubleFree, 7, 1, 1, 2),
                 raw_error(ErrorKind::kReallocAfterFree, 2, 2, 0, 1)};
  FakeSymbolizer sym;
  sym.add(0x100, {symbol_frame(0x100, "/usr/lib/libvendor.so.1", 0x100, "vendor_alloc")});
  sym.add(0x200, {debug_frame(0x200, "mine", "m.c", 1, 1)});
  Suppressions supp = Suppressions::parse("leak:^libvendor.so.1$\nleak:^mine$", "s");
  ProcessReport p = build_process_report(file, sym.fn(), {}, supp);
  EXPECT_EQ(p.suppressed.size(), 1u);  // the leak is
  ASSERT_EQ(p.errors.size(), 3u);      // the errors are not
  EXPECT_EQ(p.errors[0].kind, ErrorKind::kMismatchedFree);
  EXPECT_EQ(p.errors[1].kind, ErrorKind::kDoubleFree);
  EXPECT_EQ(p.errors[2].kind, ErrorKind::kReallocAfterFree);
  EXPECT_EQ(p.errors[2].free_stack[0].function, "vendor_alloc");
  EXPECT_EQ(p.summary.errors, 3u);
  EXPECT_EQ(p.summary.error_occurrences, 10u);
}

TEST(BuildReport, EmptyFile) {
  ResultFile file;
  FakeSymbolizer sym;
  ProcessReport p = build_process_report(file, sym.fn(), {}, Suppressions{});
  EXPECT_TRUE(p.leaks.empty());
  EXPECT_TRUE(p.suppressed.empty());
  EXPECT_EQ(p.exit.how, ExitInfo::How::kUnknown);
  EXPECT_EQ(p.summary.leaked().bytes, 0u);
  EXPECT_TRUE(p.errors.empty());
  EXPECT_EQ(p.summary.errors, 0u);
  EXPECT_EQ(p.summary.error_occurrences, 0u);
}

RawResource raw_resource(int32_t fd, uint32_t stack_id, ResourceKind kind = ResourceKind::kFile) {
  RawResource r;
  r.fd = fd;
  r.stack_id = stack_id;
  r.kind = kind;
  r.call = "open";
  r.description = "/tmp/f" + std::to_string(fd);
  return r;
}

TEST(BuildReport, ResourcesGroupedBySiteSortedAndSuppressed) {
  ResultFile f = base_file();
  f.stacks[1] = {0x1000};
  f.stacks[2] = {0x2000, 0x2100};
  f.stacks[3] = {0x3000};
  f.stacks[4] = {0x0500};
  f.tracks_resources = true;
  f.untracked_resources = 9;
  // Site 2 has three descriptors (listed first), sites 1 and 4 one each (4's first frame has
  // the lower address), site 3 is suppressed.
  f.resources = {raw_resource(9, 2),
                 raw_resource(4, 1),
                 raw_resource(5, 2),
                 raw_resource(6, 3),
                 raw_resource(3, 2, ResourceKind::kSocket),
                 raw_resource(8, 4)};
  FakeSymbolizer symbolizer;
  symbolizer.add(0x1000, {debug_frame(0x1000, "one", "a.c", 1, 1)});
  symbolizer.add(0x2000, {debug_frame(0x2000, "inner", "a.c", 2, 1, true),
                          debug_frame(0x2000, "two", "a.c", 3, 1)});
  symbolizer.add(0x2100, {debug_frame(0x2100, "main", "a.c", 9, 1)});
  symbolizer.add(0x3000, {symbol_frame(0x3000, "/usr/lib/libvendor.so", 0x30, "vendor_open")});
  symbolizer.add(0x0500, {debug_frame(0x0500, "four", "a.c", 4, 1)});
  ProcessReport p =
      build_process_report(f, symbolizer.fn(), {}, Suppressions::parse("leak:libvendor.so", "s"));
  EXPECT_TRUE(p.tracks_resources);
  EXPECT_EQ(p.summary.open_descriptors, 5u);
  EXPECT_EQ(p.summary.suppressed_descriptors, 1u);
  EXPECT_EQ(p.summary.untracked_descriptors, 9u);
  ASSERT_EQ(p.resource_sites.size(), 3u);
  const ResourceSite& most = p.resource_sites[0];
  ASSERT_EQ(most.stack.size(), 3u);
  EXPECT_EQ(most.stack[0].function, "inner");
  EXPECT_EQ(most.stack[2].function, "main");
  ASSERT_EQ(most.resources.size(), 3u);
  EXPECT_EQ(most.resources[0].fd, 3);
  EXPECT_EQ(most.resources[0].kind, ResourceKind::kSocket);
  EXPECT_EQ(most.resources[1].fd, 5);
  EXPECT_EQ(most.resources[2].fd, 9);
  EXPECT_EQ(most.resources[2].description, "/tmp/f9");
  EXPECT_EQ(p.resource_sites[1].stack[0].function, "four");
  EXPECT_EQ(p.resource_sites[2].stack[0].function, "one");
  EXPECT_EQ(p.resource_sites[2].resources[0].fd, 4);
}

TEST(BuildReport, NoResourcesSectionMeansNotTracked) {
  ResultFile f = base_file();
  FakeSymbolizer symbolizer;
  ProcessReport p = build_process_report(f, symbolizer.fn(), {}, Suppressions{});
  EXPECT_FALSE(p.tracks_resources);
  EXPECT_TRUE(p.resource_sites.empty());
  EXPECT_EQ(p.summary.open_descriptors, 0u);
}

}  // namespace
}  // namespace memtrack::report
