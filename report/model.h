// The leak report after symbolization: processes, their summaries, leak groups, allocator
// misuse errors and descriptor sites with frames. Built from result files (report/raw_model.h)
// by build_report; read by suppressions and every renderer.
// Ordinary C++ (may allocate, may throw memtrack::Error).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/raw_model.h"
#include "symbolize/frame.h"

namespace memtrack::report {

// A set of leak kinds (--show-leak-kinds, --errors-for-leak-kinds). A value type.
class LeakKinds {
 public:
  constexpr LeakKinds() = default;
  constexpr LeakKinds(std::initializer_list<LeakKind> kinds) {
    for (LeakKind kind : kinds) bits_ |= bit(kind);
  }
  static constexpr LeakKinds all() {
    return {LeakKind::kDefinite, LeakKind::kIndirect, LeakKind::kPossible, LeakKind::kReachable,
            LeakKind::kUnclassified};
  }
  constexpr bool contains(LeakKind kind) const { return (bits_ & bit(kind)) != 0; }
  constexpr LeakKinds with(LeakKind kind) const {
    LeakKinds out = *this;
    out.bits_ |= bit(kind);
    return out;
  }
  constexpr bool operator==(const LeakKinds&) const = default;

 private:
  static constexpr uint8_t bit(LeakKind kind) {
    return static_cast<uint8_t>(1u << static_cast<unsigned>(kind));
  }
  uint8_t bits_ = 0;
};

// What the reports list unless told otherwise: everything but still reachable blocks.
inline constexpr LeakKinds kDefaultShownKinds = {LeakKind::kDefinite, LeakKind::kIndirect,
                                                 LeakKind::kPossible, LeakKind::kUnclassified};

struct LeakGroup {
  LeakKind kind = LeakKind::kUnclassified;
  uint64_t bytes = 0;  // the group's own (direct) blocks
  uint64_t blocks = 0;
  // kDefinite only: what hangs off this group, as in memcheck's "X (Y direct, Z indirect)
  // bytes". Informational: those blocks are listed and totalled as kIndirect groups.
  uint64_t indirect_bytes = 0, indirect_blocks = 0;
  bool runtime_internal = false;
  std::vector<Frame> stack;  // innermost first; frame 0 is the allocator's caller
  // The sampled mode (docs/sampling.md). kEstimated: `bytes` and `blocks` are the site's
  // sampled blocks, and estimated_* what the site holds in all. kNotSampled: the blocks that
  // were not sampled, of every site (exact, no stack).
  enum class Sampling : uint8_t { kFull, kEstimated, kNotSampled };
  Sampling sampling = Sampling::kFull;
  uint64_t estimated_bytes = 0, estimated_blocks = 0;
};

// What one allocation stack allocated since the start (memtrack run --pprof-http: pprof's
// alloc_objects and alloc_space); in the sampled mode, estimates.
struct AllocationTotal {
  std::vector<Frame> stack;  // innermost first
  uint64_t blocks = 0;
  uint64_t bytes = 0;
};

// Descriptors open at exit that were opened at one stack.
struct ResourceSite {
  std::vector<Frame> stack;              // innermost first; frame 0 called open, fopen, ...
  std::vector<ResourceFacts> resources;  // by fd
};

// One allocator misuse error after symbolization (RawError with frames for its stack ids).
struct ErrorReport : ErrorFacts {
  std::vector<Frame> stack;        // the bad call, innermost first; frame 0 is its caller
  std::vector<Frame> alloc_stack;  // where the block was allocated; empty if not known
  std::vector<Frame> free_stack;   // where it was freed first; empty if not known
};

struct CrashReport : CrashFacts {
  std::vector<Frame> stack;  // the crashing thread, innermost first; frame 0 faulted
};

// The bytes and blocks of a set of leak groups.
struct Amount {
  uint64_t bytes = 0;
  uint64_t blocks = 0;
  void add(uint64_t more_bytes, uint64_t more_blocks) {
    bytes += more_bytes;
    blocks += more_blocks;
  }
  bool empty() const { return bytes == 0 && blocks == 0; }
  bool operator==(const Amount&) const = default;
};

inline constexpr size_t kLeakKindCount = static_cast<size_t>(LeakKind::kUnclassified) + 1;

struct Summary {
  // The process's counters as its stats section has them (core/stats.inc): allocations,
  // frees, bytes_allocated, peak_bytes, untracked_allocations, ...
#define MEMTRACK_COUNTER(Enumerator, name, description) uint64_t name = 0;
#include "core/stats.inc"
#undef MEMTRACK_COUNTER
  // Unsuppressed groups, excluding runtime-internal ones, by kind (of_kind).
  std::array<Amount, kLeakKindCount> kinds{};
  Amount suppressed;                    // matched by a suppression, groups of every kind
  Amount runtime_internal;              // kept by the C/C++ runtime for its own use, every kind
  uint64_t errors = 0;                  // distinct allocator misuse errors (ProcessReport::errors)
  uint64_t error_occurrences = 0;       // the sum of their occurrences
  uint64_t open_descriptors = 0;        // in ProcessReport::resource_sites
  uint64_t suppressed_descriptors = 0;  // open at exit, at sites matched by a suppression
  uint64_t untracked_descriptors = 0;   // opened, but beyond what the runtime could record

  Amount& of_kind(LeakKind kind) {
    return kinds[static_cast<size_t>(kind)];
  }
  const Amount& of_kind(LeakKind kind) const {
    return kinds[static_cast<size_t>(kind)];
  }
  // What leaked: the groups of every kind that is_leak (all but kReachable).
  Amount leaked() const {
    Amount sum;
    for (size_t i = 0; i < kLeakKindCount; ++i) {
      if (is_leak(static_cast<LeakKind>(i))) sum.add(kinds[i].bytes, kinds[i].blocks);
    }
    return sum;
  }
};

// A suppression entry that matched something in one process (valgrind -v's
// "used_suppression", LeakSanitizer's "Suppressions used").
struct UsedSuppression {
  std::string name;     // "leak:PATTERN" or a valgrind-style block's name
  std::string origin;   // where it is written, "FILE:LINE"
  uint64_t groups = 0;  // leak groups it suppressed
  uint64_t bytes = 0;   // their bytes and blocks
  uint64_t blocks = 0;
  uint64_t descriptors = 0;  // descriptors open at exit at the sites it suppressed
};

// Where the variable at a data address is declared (symbolize::Symbolizer::variable_location):
// names the retention report's roots. An empty function names none.
using LocateVariableFn = std::function<VariableLocation(uint64_t address)>;

// What keeps still-reachable memory alive (memtrack run --show-retainers; result file
// section 14): the roots by the bytes they alone keep, and each site's blocks by what holds
// them in the heap's dominator tree (docs/retention.md).
struct Retainer {
  core::result::RootKind kind = core::result::RootKind::kData;
  uint32_t tid = 0;  // the thread of a stack, TLS or registers
  // A stack's frame (0 innermost) and the function it was in (innermost inlined call first),
  // or core::result::kNoFrame for a whole stack.
  uint32_t frame = core::result::kNoFrame;
  std::vector<Frame> function;
  uint64_t address = 0;
  uint64_t size = 0;
  std::string symbol;  // the variable, demangled; "" if no symbol covers it
  std::string module;  // the file it lies in; "" outside modules
  uint64_t module_offset = 0;
  VariableLocation declared;  // a variable's definition, from DWARF; file "" if not known
  uint64_t retained_bytes = 0, retained_blocks = 0;
};

struct RetentionGroup {
  uint32_t stack_id = 0;  // the blocks' site: a key of Retention::sites
  core::result::HolderKind holder_kind = core::result::HolderKind::kSite;
  uint32_t holder = 0;                        // a site's stack id, or a retainer's index
  uint32_t root = core::result::kNoRetainer;  // the retainer at the top, if one alone holds them
  uint64_t bytes = 0, blocks = 0;
  uint64_t retained_bytes = 0, retained_blocks = 0;  // what they keep alive, themselves included
  // holder_kind kSite: the index in Retention::groups of the group whose blocks dominate these
  // (the groups form the dominator tree summed by site); else, or if that group is the C/C++
  // runtime's own, core::result::kNoGroup.
  uint32_t parent = core::result::kNoGroup;
};

struct Retention {
  std::vector<Retainer> retainers;     // as the file lists them (groups refer by index)
  std::vector<RetentionGroup> groups;  // most bytes first; the C/C++ runtime's own left out
  std::map<uint32_t, std::vector<Frame>> sites;  // the groups' and holders' stacks
  bool approximate = false;                      // some holders may be too deep (result file flag)
  uint32_t passes = 0;
  uint64_t shared_bytes = 0, shared_blocks = 0;  // reachable from several roots, none alone
};

// One block as memtrack snapshot --retainers ADDR describes it (result file section 15).
struct BlockLink {
  core::result::LinkKind kind = core::result::LinkKind::kBlock;
  uint64_t start = 0, size = 0;
  std::vector<Frame> stack;  // a block's allocation stack
  std::string root;          // a retainer's name (retention_text.h), "several roots"
  uint64_t offset = 0;       // a referrer block: where its pointer lies; a root: the word's address
};
struct BlockRetention {
  uint64_t address = 0;
  bool found = false;  // a live block holds the address
  LeakKind kind = LeakKind::kReachable;
  uint64_t start = 0, size = 0;
  std::vector<Frame> stack;
  uint64_t retained_bytes = 0, retained_blocks = 0;
  std::vector<BlockLink> chain;  // its dominators, nearest first, the root last
  std::vector<BlockLink> referrers;
};

struct ProcessReport {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::vector<std::string> command;
  ExitInfo exit;
  Summary summary;
  // Unsuppressed groups of every kind (renderers pick the kinds they show), sorted by bytes
  // (largest first).
  std::vector<LeakGroup> leaks;
  std::vector<LeakGroup> suppressed;  // groups matched by a suppression, every kind
  // The suppression entries that matched, in the order of the suppression files.
  std::vector<UsedSuppression> used_suppressions;
  std::vector<ErrorReport> errors;   // allocator misuse, in file order; never suppressed
  std::optional<CrashReport> crash;  // the signal that crashed the process, if one did
  // Descriptors open at exit, unsuppressed, by site: most descriptors first, then by the
  // first frame's address. tracks_resources: the runtime tracked descriptors at all.
  bool tracks_resources = false;
  std::vector<ResourceSite> resource_sites;
  std::vector<RawModule> modules;  // the module map, for formats that carry it (pprof)
  std::vector<std::string> notes;  // e.g. "no debug info for /lib/.../libc.so.6"
  // The first notes that are the runtime's own (what it could not see, result file section
  // 16): even a report with nothing else to say shows them.
  size_t runtime_notes = 0;
  // The sampled mode's mean interval in bytes (docs/sampling.md); 0: the full mode.
  uint64_t sample_interval = 0;
  uint64_t sampled_allocations = 0;  // of the process's allocations
  // With alloc_totals only (result file section 13); incomplete: some could not be counted.
  std::vector<AllocationTotal> allocation_totals;
  bool allocation_totals_incomplete = false;
  std::optional<Retention> retention;             // with retainers only
  std::optional<BlockRetention> block_retention;  // memtrack snapshot --retainers ADDR
  bool has_leak_data = true;  // false: the process left no result file (notes say why)
  // The runtime's note (result file section 16): the program's malloc is not memtrack's, so
  // the leak data leave out its blocks; --error-exitcode applies as for no leak data.
  bool malloc_unseen = false;
  // Why a report of a running process was made ("on-demand leak check 2"); "" for the
  // report at exit.
  std::string occasion;
  // Without leak data: why, as a stable word for scripts (docs/json-schema.md): "killed",
  // "report_at_exit_off", "exec_not_followed", "not_trackable", "still_running",
  // "no_result_file", "forked_copy".
  std::string no_data_reason;
  // Without leak data, and no failure for --error-exitcode: a forked copy of its parent that
  // never exec'd and ended without its report (killed by SIGKILL, as debuggers kill their
  // probes). memcheck reports nothing for such a process either.
  bool no_data_expected = false;
};

struct Report {
  std::vector<ProcessReport> processes;  // in pid order of appearance
  // On-demand leak checks (memtrack_do_leak_check) made while the processes ran, in the
  // order they were made; each says so in `occasion`.
  std::vector<ProcessReport> checks;
};

}  // namespace memtrack::report
