// The leak model after symbolization: processes, their summaries, leak groups and allocator
// misuse errors with frames. Shared by the result-file reader, the symbolizer, suppressions
// and every renderer.
// Ordinary C++ (may allocate, may throw memtrack::Error).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace memtrack {

// The one exception type of the tools. what() is a complete one-line message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace memtrack

namespace memtrack::report {

// memcheck's categories (docs/format.md, section 5). kUnclassified: the runtime did no
// reachability scan, so the block was merely still allocated at exit.
enum class LeakKind { kDefinite, kIndirect, kPossible, kReachable, kUnclassified };

// "definite", "indirect", "possible", "reachable", "unclassified" (the JSON spelling).
const char* kind_name(LeakKind kind);

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

// True for the kinds that count as leaked (Summary::leaked_*): all but kReachable.
constexpr bool is_leak(LeakKind kind) {
  return kind != LeakKind::kReachable;
}

// Allocator misuse seen while the program ran (docs/format.md, section 7).
enum class ErrorKind { kDoubleFree, kInvalidFree, kMismatchedFree, kReallocAfterFree };
// For invalid frees: what the pointer points into.
enum class ErrorWhere { kUnknown, kHeap, kStack, kGlobal };
// How the block was allocated; kNone: not known (no block, or the runtime did not know it).
enum class AllocCall { kMalloc, kNew, kNewArray, kNone };
// The bad call.
enum class FreeCall { kFree, kDelete, kDeleteArray, kRealloc };

// "double_free", "invalid_free", "mismatched_free", "realloc_after_free" (the JSON spelling).
const char* error_kind_name(ErrorKind kind);
// "malloc", "new", "new[]", "none" (the JSON spelling; the aligned flags are not part of it).
const char* alloc_call_name(AllocCall call);
// "free", "delete", "delete[]", "realloc" (the JSON spelling).
const char* free_call_name(FreeCall call);

// What a descriptor open at exit refers to (docs/format.md, section 8).
enum class ResourceKind {
  kOther,
  kFile,
  kDirectory,
  kSocket,
  kPipe,
  kEventfd,
  kTimerfd,
  kSignalfd,
  kEpoll,
  kInotify,
  kMemfd
};

// "file", "directory", "socket", "pipe", "eventfd", "timerfd", "signalfd", "epoll",
// "inotify", "memfd", "other" (the JSON spelling).
const char* resource_kind_name(ResourceKind kind);

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

// ---- As stored in a result file (raw addresses) ----

struct RawModule {
  std::string path;
  uint64_t load_bias = 0;  // l_addr: file vaddr + load_bias = runtime address
  uint64_t start = 0;      // mapped range [start, end)
  uint64_t end = 0;
  std::vector<uint8_t> build_id;  // GNU build-id note, empty if none
  bool unloaded = false;          // dlclose'd before the process exited
};

struct RawLeak {
  uint32_t stack_id = 0;
  LeakKind kind = LeakKind::kUnclassified;
  bool runtime_internal = false;  // kept by ld.so/stdio/libstdc++ for their own use
  uint64_t bytes = 0;
  uint64_t blocks = 0;
  // kDefinite only (indirect section): the indirectly lost blocks hanging off this group.
  // They are also leak records of their own (kind kIndirect), so never add them to totals.
  uint64_t indirect_bytes = 0, indirect_blocks = 0;
};

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
  uint64_t occurrences = 0;    // how many times it happened at this stack
  uint64_t address = 0;        // the pointer passed to the bad call (first occurrence)
  uint64_t block_start = 0;    // the block it belongs to, 0 if none
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
  enum class How { kUnknown, kExit, kUnderscoreExit, kSignal, kRunning };
  How how = How::kUnknown;
  int code = 0;    // exit status for kExit and kUnderscoreExit
  int signal = 0;  // for kSignal
};

struct Stats {
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t bytes_allocated = 0;
  uint64_t peak_bytes = 0;
  uint64_t live_bytes = 0;
  uint64_t untracked_allocations = 0;
  uint64_t untracked_bytes = 0;
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
};

struct RawLive {
  uint32_t sequence = 0;  // 1, 2, ... per process
  uint64_t uptime_ms = 0;
  uint64_t expire_ms = 0;
  uint64_t interval_ms = 0;
  uint64_t live_blocks = 0;
  uint64_t live_bytes = 0;
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
  std::vector<RawError> errors;  // in file order; empty without an errors section
  std::optional<RawLive> live;   // a live report (its leaks section is absent)
  // Descriptors open at exit. tracks_resources: the file has a resources section (the
  // runtime tracked descriptors; false with track_fds=0 and for older files).
  bool tracks_resources = false;
  std::vector<RawResource> resources;  // in file order
  uint64_t untracked_resources = 0;    // opened, but beyond what the runtime could record
  std::optional<RawCrash> crash;       // the process crashed (SIGSEGV, SIGABRT, ...)
};

// ---- After symbolization ----

struct Frame {
  uint64_t address = 0;
  std::string module;  // path of the module, "" if unknown
  uint64_t module_offset = 0;
  std::string function;  // demangled; "" if unknown
  std::string file;      // source file, "" without debug info
  int line = 0;
  int column = 0;
  bool inlined = false;  // an inlined call inside the next frame's function
};

struct LeakGroup {
  LeakKind kind = LeakKind::kUnclassified;
  uint64_t bytes = 0;  // the group's own (direct) blocks
  uint64_t blocks = 0;
  // kDefinite only: what hangs off this group, as in memcheck's "X (Y direct, Z indirect)
  // bytes". Informational: those blocks are listed and totalled as kIndirect groups.
  uint64_t indirect_bytes = 0, indirect_blocks = 0;
  bool runtime_internal = false;
  std::vector<Frame> stack;  // innermost first; frame 0 is the allocator's caller
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

struct Summary {
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t bytes_allocated = 0;
  uint64_t peak_bytes = 0;
  // Unsuppressed groups, excluding runtime-internal ones, of every kind but kReachable:
  // definite + indirect + possible + unclassified.
  uint64_t leaked_bytes = 0;
  uint64_t leaked_blocks = 0;
  // The same groups per kind (unclassified ones are leaked_* minus the other three).
  uint64_t definite_bytes = 0, definite_blocks = 0;
  uint64_t indirect_bytes = 0, indirect_blocks = 0;
  uint64_t possible_bytes = 0, possible_blocks = 0;
  uint64_t reachable_bytes = 0, reachable_blocks = 0;  // not part of leaked_*
  uint64_t suppressed_bytes = 0;  // matched by a suppression, groups of every kind
  uint64_t suppressed_blocks = 0;
  uint64_t runtime_internal_bytes = 0;
  uint64_t runtime_internal_blocks = 0;
  uint64_t untracked_allocations = 0;
  uint64_t untracked_bytes = 0;
  uint64_t errors = 0;                  // distinct allocator misuse errors (ProcessReport::errors)
  uint64_t error_occurrences = 0;       // the sum of their occurrences
  uint64_t open_descriptors = 0;        // in ProcessReport::resource_sites
  uint64_t suppressed_descriptors = 0;  // open at exit, at sites matched by a suppression
  uint64_t untracked_descriptors = 0;   // opened, but beyond what the runtime could record
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
  std::vector<ErrorReport> errors;    // allocator misuse, in file order; never suppressed
  std::optional<CrashReport> crash;   // the signal that crashed the process, if one did
  // Descriptors open at exit, unsuppressed, by site: most descriptors first, then by the
  // first frame's address. tracks_resources: the runtime tracked descriptors at all.
  bool tracks_resources = false;
  std::vector<ResourceSite> resource_sites;
  std::vector<std::string> notes;  // e.g. "no debug info for /lib/.../libc.so.6"
  bool has_leak_data = true;       // false: the process left no result file (notes say why)
  // Why a report of a running process was made ("on-demand leak check 2"); "" for the
  // report at exit.
  std::string occasion;
  // Without leak data: why, as a stable word for scripts (docs/json-schema.md): "killed",
  // "report_at_exit_off", "exec_not_followed", "not_trackable", "still_running",
  // "no_result_file".
  std::string no_data_reason;
};

struct Report {
  std::vector<ProcessReport> processes;  // in pid order of appearance
  // On-demand leak checks (memtrack_do_leak_check) made while the processes ran, in the
  // order they were made; each says so in `occasion`.
  std::vector<ProcessReport> checks;
};

}  // namespace memtrack::report
