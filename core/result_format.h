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
  kProcess = 1,   // pid, ppid, exit, command line, executable
  kStats = 2,     // counters
  kModules = 3,   // module map
  kStacks = 4,    // stacks referenced by leaks
  kLeaks = 5,     // leak groups
  kIndirect = 6,  // for definitely lost groups: the indirectly lost blocks hanging off them
  kErrors = 7,    // allocator misuse: double/invalid/mismatched free, realloc after free
  kLive = 9,      // live report: allocation sites holding blocks older than the age threshold
  kEnd = 0xffff   // checksum of everything before this section; always last
};

// ExitInfo::How as stored.
// kRunning: the process had not ended (a live report or a snapshot).
enum class ExitHow : uint32_t {
  kUnknown = 0,
  kExit = 1,
  kUnderscoreExit = 2,
  kSignal = 3,
  kRunning = 4
};

// Live report (section 9): a header, then one record per allocation site.
inline constexpr uint32_t kLiveHeaderSize = 56;
inline constexpr uint32_t kLiveSiteSize = 32;
inline constexpr uint32_t kLiveSiteRuntimeInternal = 1;  // live site flag

// The counters of the stats section, in this order. Readers ignore extra counters and
// treat missing ones as zero, so counters can be appended without a version change.
enum class Counter : uint32_t {
  kAllocations,
  kFrees,
  kBytesAllocated,
  kPeakLiveBytes,
  kLiveBytes,
  kUntrackedAllocations,
  kUntrackedBytes,
  kCount
};

// Error records (section 7).
enum class ErrorKind : uint8_t {
  kDoubleFree = 1,
  kInvalidFree = 2,
  kMismatchedFree = 3,
  kReallocAfterFree = 4
};
enum class ErrorWhere : uint8_t { kUnknown = 0, kHeap = 1, kStack = 2, kGlobal = 3 };
enum class AllocCall : uint8_t { kMalloc = 0, kNew = 1, kNewArray = 2, kNone = 255 };
enum class FreeCall : uint8_t { kFree = 0, kDelete = 1, kDeleteArray = 2, kRealloc = 3 };
inline constexpr uint32_t kErrorRecordSize = 48;

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
