// The raw result-file model: one process's result file as the reader decodes it (raw
// addresses, stack ids), and the facts about leaks, errors, descriptors and crashes that the
// symbolized report (report/model.h) shares with it.
// Ordinary C++ (may allocate, may throw memtrack::Error).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/result_records.h"
#include "symbolize/frame.h"

namespace memtrack::report {

// The result file's enumerations, used as they are stored (core/result_format.h); their
// JSON spelling is in core/result_names.h and core/fd_names.h.
using core::result::AllocCall;
using core::result::ErrorKind;
using core::result::ErrorWhere;
using core::result::FreeCall;
using core::result::LeakKind;
using core::result::ResourceKind;

// True for the kinds that count as leaked (Summary::leaked): all but kReachable.
constexpr bool is_leak(LeakKind kind) {
  return kind != LeakKind::kReachable;
}

// A descriptor the program opened and left open, apart from its stack: shared by the raw
// record and the report.
struct ResourceFacts {
  int32_t fd = 0;
  ResourceKind kind = ResourceKind::kOther;
  std::string call;         // the function that opened it: "open", "fopen", "accept4", ...
  bool stream = false;      // a FILE stream (fopen, fdopen, freopen)
  uint32_t flags = 0;       // open(2) flags, Linux x86-64 values (core/fd_names.h)
  std::string mode;         // a stream's fopen mode ("w+"); "" for other descriptors
  std::string description;  // "/tmp/x", "pipe:[1234]", "TCP 127.0.0.1:40000 -> 127.0.0.1:80"
};

// A leak group as the runtime wrote it (the leaks record with its indirect record).
using RawLeak = core::result::LeakGroup;

// One error record: one per distinct (kind, stack of the bad call). Stack ids are in
// ResultFile::stacks: bad_stack always, alloc_stack and free_stack unless 0 (not known).
// What an allocator misuse error is, apart from its stacks: shared by the raw record and the
// symbolized report.
struct ErrorFacts {
  ErrorKind kind = ErrorKind::kInvalidFree;
  ErrorWhere where = ErrorWhere::kUnknown;
  AllocCall alloc_call = AllocCall::kNone;
  FreeCall free_call = FreeCall::kFree;
  bool alloc_aligned = false;  // the block came from an aligned operator new
  bool free_aligned = false;   // the bad call was an aligned operator delete
  // invalid_read/invalid_write: the block had been freed; write_outside_block: found at
  // exit (else at the block's free); write_after_free: found at exit (else when the block
  // left the quarantine).
  bool detail = false;
  uint64_t occurrences = 0;  // how many times it happened at this stack
  uint64_t address = 0;      // the pointer passed, or the address accessed (first occurrence)
  uint64_t block_start = 0;  // the block it belongs to, 0 if none
  uint64_t block_size = 0;
};

struct RawError : ErrorFacts {
  uint32_t bad_stack = 0;
  uint32_t alloc_stack = 0;  // 0: not known
  uint32_t free_stack = 0;   // the first free (double free, realloc after free); 0: not known
};

struct RawResource : ResourceFacts {
  uint32_t stack_id = 0;  // where it was opened; in ResultFile::stacks
};

// The crash that ended the process (result-file section 10): the signal memtrack's handler
// caught, and the crashing thread's stack.
struct CrashFacts {
  int signal = 0;
  int code = 0;              // siginfo's si_code
  bool has_address = false;  // `address` is the faulting address (si_addr)
  uint64_t address = 0;
  uint32_t tid = 0;
};

struct RawCrash : CrashFacts {
  uint32_t stack_id = 0;  // in ResultFile::stacks; frame 0 is the faulting pc + 1
};

struct ExitInfo {
  // kRunning: the report was made while the process ran (live report, snapshot).
  using How = core::result::ExitHow;
  How how = How::kUnknown;
  int code = 0;    // exit status for kExit and kUnderscoreExit
  int signal = 0;  // for kSignal
};

// The stats section: one field per counter of core/stats.inc.
struct Stats {
#define MEMTRACK_COUNTER(Enumerator, name, description) uint64_t name = 0;
#include "core/stats.inc"
#undef MEMTRACK_COUNTER
};

// A live report's allocation site (result-file section 9): blocks older than the age
// threshold, and the blocks of this site freed after a live report had counted them (a
// running total since the process started).
struct RawLiveSite {
  uint32_t stack_id = 0;
  bool runtime_internal = false;
  uint64_t old_blocks = 0;
  uint64_t old_bytes = 0;
  uint64_t freed_after_report = 0;
  bool not_sampled = false;  // the sampled mode's old blocks without a stack (stack id 0)
  // The sampled mode's estimates of the old blocks the site stands for (section 12).
  uint64_t estimated_bytes = 0;
  uint64_t estimated_blocks = 0;
};

// The live section: its head as stored (sequence, uptime_ms, expire_ms, interval_ms,
// live_blocks, live_bytes; core/result_records.inc) and its sites.
struct RawLive : core::result::LiveHead {
  std::vector<RawLiveSite> sites;  // by old bytes, largest first
};

// One process's result file, decoded and validated.
struct ResultFile {
  std::string path;  // where it was read from, for messages
  uint32_t version = 0;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::vector<std::string> command;  // argv
  std::string executable;            // /proc/self/exe at start
  ExitInfo exit;
  Stats stats;
  std::vector<RawModule> modules;
  std::map<uint32_t, std::vector<uint64_t>> stacks;  // stack id -> return addresses
  std::vector<RawLeak> leaks;
  // The sampled mode (docs/sampling.md): its mean interval in bytes (0: the full mode, or a
  // live report) and seed. Each leak's estimated_bytes and estimated_blocks are then set.
  uint64_t sample_interval = 0;
  uint64_t sample_seed = 0;
  uint64_t sampled_allocations = 0;
  std::vector<RawError> errors;  // in file order; empty without an errors section
  std::optional<RawLive> live;   // a live report (its leaks section is absent)
  // Descriptors open at exit. tracks_resources: the file has a resources section (the
  // runtime tracked descriptors; false with track_fds=0 and for older files).
  bool tracks_resources = false;
  std::vector<RawResource> resources;  // in file order
  uint64_t untracked_resources = 0;    // opened, but beyond what the runtime could record
  std::optional<RawCrash> crash;       // the process crashed (SIGSEGV, SIGABRT, ...)
  // Section 13 (alloc_totals, memtrack run --pprof-http): what each stack allocated since
  // the start, in stack id order; estimates in the sampled mode.
  std::vector<core::result::StackTotalRecord> stack_totals;
  bool stack_totals_incomplete = false;
  // Section 14 (retainers, memtrack run --show-retainers): what holds the still-reachable
  // blocks. Strings of a retainer are its symbol (mangled) and module, "" if none.
  struct RawRetainer : core::result::RetainerRecord {
    std::string symbol;
    std::string module;
  };
  struct RawRetention {
    core::result::RetentionHead head;
    std::vector<RawRetainer> retainers;                      // in file order
    std::vector<core::result::RetentionGroupRecord> groups;  // in file order
  };
  std::optional<RawRetention> retention;
  // Section 15 (memtrack snapshot --retainers ADDR): the block asked about, its dominator
  // chain (nearest first, the root last) and its referrers.
  struct RawBlockRetention {
    core::result::BlockRetentionHead head;
    std::vector<core::result::BlockLinkRecord> chain;
    std::vector<core::result::BlockLinkRecord> referrers;
  };
  std::optional<RawBlockRetention> block_retention;
  // What the program's __lsan_default_options() and __lsan_default_suppressions() returned
  // ("" when it defines neither or the file has no lsan section).
  std::string lsan_default_options;
  std::string lsan_default_suppressions;
  // What the runtime could not see (section 16), in its order; kinds this reader does not
  // know are left out.
  struct RuntimeNote {
    core::result::NoteKind kind;
    std::string text;
  };
  std::vector<RuntimeNote> notes;
};

}  // namespace memtrack::report
