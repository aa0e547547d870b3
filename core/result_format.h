// The binary result file a process writes at exit (format documented in docs/format.md).
// Shared by the runtime's writer and the CLI's reader. Header-only constants and layout.
#pragma once

#include <cstdint>

namespace memtrack::core::result {

inline constexpr char kMagic[8] = {'M', 'E', 'M', 'T', 'R', 'A', 'C', 'K'};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kHeaderSize = 16;         // magic, version, header size
inline constexpr uint32_t kSectionHeaderSize = 16;  // type, reserved, payload size
inline constexpr uint64_t kMaxSectionSize = uint64_t{1} << 36;

enum class Section : uint32_t {
  kProcess = 1,       // pid, ppid, exit, command line, executable
  kStats = 2,         // counters
  kModules = 3,       // module map
  kStacks = 4,        // stacks referenced by leaks
  kLeaks = 5,         // leak groups
  kIndirect = 6,      // for definitely lost groups: the indirectly lost blocks hanging off them
  kErrors = 7,        // allocator misuse: double/invalid/mismatched free, realloc after free
  kResources = 8,     // descriptors the program opened and left open (fd tracking)
  kLive = 9,          // live report: allocation sites holding blocks older than the age threshold
  kCrash = 10,        // the signal that crashed the process, and the crashing thread's stack
  kLsan = 11,         // the program's __lsan_default_options() and __lsan_default_suppressions()
  kSampling = 12,     // the sampled mode: its interval and each leak group's estimates
  kStackTotals = 13,  // what each allocation stack allocated since the start (alloc_totals)
  kRetention = 14,    // what holds the still-reachable blocks (retainers)
  kBlockRetention = 15,  // one block's holders and referrers (memtrack snapshot --retainers)
  kNotes = 16,           // what the runtime could not see (runtime/output/blind_spots.h)
  kEnd = 0xffff          // checksum of everything before this section; always last
};

// Section 11: each string is cut at this many bytes.
inline constexpr uint32_t kMaxLsanText = 65536;

// Section 16: one note's kind, and its text's longest and the notes' most.
enum class NoteKind : uint8_t {
  kMallocUnseen = 1,     // malloc is not memtrack's: the leak data leave its blocks out
  kAllocatorUnseen = 2,  // an allocator of the program's own names is not seen
};
inline constexpr uint32_t kMaxNoteText = 512;
inline constexpr uint32_t kMaxNotes = 16;

// ExitInfo::How as stored.
// kRunning: the process had not ended (a live report or a snapshot).
enum class ExitHow : uint32_t {
  kUnknown = 0,
  kExit = 1,
  kUnderscoreExit = 2,
  kSignal = 3,
  kRunning = 4
};

// Leak records (section 5): memcheck's categories (docs/design.md, "Leak semantics").
// kUnclassified: the runtime did no reachability scan (classify_leaks=0), so the block was
// merely still allocated at exit. Names and wording: core/result_names.h.
enum class LeakKind : uint8_t {
  kDefinite = 0,
  kIndirect = 1,
  kPossible = 2,
  kReachable = 3,
  kUnclassified = 4
};

// The records' layouts: core/result_records.inc.
inline constexpr uint32_t kCrashHasAddress = 1;  // crash flag: the address is si_addr

inline constexpr uint32_t kLiveSiteRuntimeInternal = 1;  // live site flag
// Live site flag, the sampled mode's: the site (stack id 0) counts the old blocks that have no
// stack because the sampler passed them by.
inline constexpr uint32_t kLiveSiteNotSampled = 2;

// The counters of the stats section (declared in core/stats.inc), in this order; kCount:
// how many this version writes.
enum class Counter : uint32_t {
#define MEMTRACK_COUNTER(Enumerator, name, description) Enumerator,
#include "core/stats.inc"
#undef MEMTRACK_COUNTER
  kCount
};

// Error records (section 7). Names: core/result_names.h.
// Section 14: what a root range is, for naming the roots in it.
enum class RootKind : uint8_t {
  kData = 0,       // a module's writable data, or another writable mapping: named by symbol
  kStack = 1,      // a thread's stack
  kRegisters = 2,  // a thread's registers
  kRegion = 3,     // a region the program registered (__lsan_register_root_region)
  kIgnored = 4,    // blocks the program asked to ignore (__lsan_ignore_object, disabled)
  kStream = 5,     // glibc's list of open FILE streams
  kOldHeap = 6,    // heap memory allocated before memtrack attached
  kTls = 7,        // a thread's static TLS and descriptor (above its outermost frame)
};
inline constexpr uint8_t kMaxRootKind = 7;
inline constexpr uint32_t kNoFrame = UINT32_MAX;  // RetainerRecord::frame

// Section 15: one link of a block's dominator chain, or one referrer.
enum class LinkKind : uint8_t { kBlock = 0, kRetainer = 1, kSeveral = 2 };
inline constexpr uint8_t kMaxLinkKind = 2;
// Section 15: at most this many links of a chain (the nearest ones and the root) and referrers.
inline constexpr uint16_t kMaxBlockLinks = 64;

// Section 14: what holds the still-reachable blocks of a retention group. A block of another
// site that dominates them, or a root when no such block lies between, or several roots at
// once (none alone dominates them), or only the C runtime's roots.
enum class HolderKind : uint8_t { kSite = 0, kRetainer = 1, kSeveral = 2, kRuntime = 3 };
inline constexpr uint8_t kMaxHolderKind = 3;
inline constexpr uint32_t kRetentionApproximate = 1;  // RetentionHead::flags
inline constexpr uint32_t kNoRetainer = UINT32_MAX;   // RetentionGroupRecord::root
inline constexpr uint32_t kNoGroup = UINT32_MAX;      // RetentionGroupRecord::parent

enum class ErrorKind : uint8_t {
  kDoubleFree = 1,
  kInvalidFree = 2,
  kMismatchedFree = 3,
  kReallocAfterFree = 4,
  // Heap memory errors (--check-heap; docs/heap-errors.md): a read or a write outside a
  // block or of a freed block, caught at the instruction; bytes beside a block overwritten,
  // found when it was freed or at exit; bytes of a freed block overwritten, found when it
  // left the quarantine or at exit.
  kInvalidRead = 5,
  kInvalidWrite = 6,
  kWriteOutsideBlock = 7,
  kWriteAfterFree = 8
};
// For invalid frees: what the pointer points into.
enum class ErrorWhere : uint8_t { kUnknown = 0, kHeap = 1, kStack = 2, kGlobal = 3 };
// How the block was allocated; kNone: not known (no block, or the runtime did not know it).
enum class AllocCall : uint8_t { kMalloc = 0, kNew = 1, kNewArray = 2, kNone = 255 };
// The bad call.
enum class FreeCall : uint8_t { kFree = 0, kDelete = 1, kDeleteArray = 2, kRealloc = 3 };

// Resource records (section 8): the object a descriptor open at exit refers to, and the
// function that opened it. Flags are open(2) flags with Linux x86-64 values. Names:
// core/fd_names.h.
enum class ResourceKind : uint8_t {
  kOther = 0,
  kFile = 1,
  kDirectory = 2,
  kSocket = 3,
  kPipe = 4,
  kEventfd = 5,
  kTimerfd = 6,
  kSignalfd = 7,
  kEpoll = 8,
  kInotify = 9,
  kMemfd = 10,
  kLast = kMemfd
};
// 64-bit and fortified variants (open64, __open_2, fopen64, fcntl64, ...) are stored as the
// plain function.
enum class ResourceCall : uint8_t {
  kOpen = 1,
  kOpenat = 2,
  kCreat = 3,
  kDup = 4,
  kDup2 = 5,
  kDup3 = 6,
  kFcntl = 7,  // F_DUPFD, F_DUPFD_CLOEXEC
  kPipe = 8,
  kPipe2 = 9,
  kSocket = 10,
  kSocketpair = 11,
  kAccept = 12,
  kAccept4 = 13,
  kEventfd = 14,
  kTimerfdCreate = 15,
  kSignalfd = 16,
  kEpollCreate = 17,
  kEpollCreate1 = 18,
  kInotifyInit = 19,
  kInotifyInit1 = 20,
  kMemfdCreate = 21,
  kFopen = 22,
  kFdopen = 23,
  kFreopen = 24,
  kLast = kFreopen
};
inline constexpr uint32_t kMaxStreamModeSize = 6;  // the runtime keeps this much of a mode

inline constexpr uint16_t kModuleUnloaded = 1;      // module flag: dlclose'd before exit
inline constexpr uint8_t kLeakRuntimeInternal = 1;  // leak flag

// FNV-1a, 64-bit, over every byte before the end section. Catches truncation and
// corruption; it is not meant to resist tampering.
inline constexpr uint64_t kChecksumSeed = 0xcbf29ce484222325ull;
inline uint64_t checksum_update(uint64_t h, const unsigned char* data, uint64_t size) {
  for (uint64_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace memtrack::core::result
