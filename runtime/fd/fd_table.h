// The descriptors the program opened through memtrack's hooks and has not closed: one entry
// per fd number in an array indexed by the fd, reserved (MAP_NORESERVE) on first use, so an
// entry costs address space only until its fd is used. Runtime-safe: no malloc, no libc
// (memory through core::sys).
//
// Ordering against the kernel, which hands out the lowest free number at once:
//   - an opening hook records fd N *after* the real call returned it (before that, N was
//     not the program's);
//   - a closing hook erases N *before* the real close (once the kernel has freed N, another
//     thread's open may get N and record it, and an erase after our close would delete
//     that new record).
// So each fd's records and erases follow the kernel's opens and closes, except when a thread
// closes a number that another thread's open was just given and has not recorded yet (a
// program closing a descriptor it does not own); then the late record wins. A descriptor
// closed behind the hooks' back (a raw syscall, glibc-internal closes such as closedir) keeps
// its entry: the exit report checks that the fd is still open, but cannot tell if the number
// was reused by another untracked open.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/result_format.h"

namespace memtrack::rt {

// What is known about one open descriptor.
struct FdInfo {
  uint32_t stack_id = 0;  // where it was opened (core::StackDepot id)
  uint32_t flags = 0;     // open(2) flags (Linux x86-64 values, core/fd_names.h)
  core::result::ResourceCall call = core::result::ResourceCall::kOpen;
  // fopen's mode for a FILE stream (fopen, fdopen, freopen), "" otherwise. NUL-terminated.
  char mode[core::result::kMaxStreamModeSize + 1] = {};
  // A stream's FILE object as glibc allocated it, when known (0 otherwise): not a block of
  // the allocation table, but a root of the leak scan (fd_tracking.h).
  uintptr_t stream_object = 0;
  uint32_t stream_size = 0;

  bool stream() const {
    return call == core::result::ResourceCall::kFopen ||
           call == core::result::ResourceCall::kFdopen ||
           call == core::result::ResourceCall::kFreopen;
  }
};

// Thread safe: every entry has its own spin lock, held for a few loads and stores only.
// Zero-initialised memory is a valid empty table, so it can live in .bss.
class FdTable {
 public:
  // fds 0 .. kCapacity-1 can be tracked: the kernel's default limit (fs.nr_open) is 2^20.
  static constexpr int kCapacity = 1 << 20;

  // Records (or overwrites) `fd`. Returns false, counting it as untracked, if fd is beyond
  // the capacity or the table cannot be mapped; a negative fd is ignored (false, uncounted).
  bool record(int fd, const FdInfo& info);

  // Removes `fd`, copying its entry to *out if out is not null. False if it was not tracked.
  bool erase(int fd, FdInfo* /*out*/ out);

  // Records `fd` only if it has no entry: puts back what erase() removed when the call that
  // was to close it failed, unless another thread has recorded the number since.
  bool restore(int fd, const FdInfo& info);

  // Copies the entry of `fd` to *out. False if it is not tracked.
  bool lookup(int fd, FdInfo* /*out*/ out);

  // Erases every fd from first to last, both included (close_range, closefrom).
  void erase_range(unsigned first, unsigned last);

  // Calls fn(int fd, const FdInfo&) for each tracked fd in increasing order, copying each
  // entry under its lock; fn runs with no lock held.
  template <typename Fn>
  void for_each(Fn&& fn) {
    Entry* entries = entries_.load(std::memory_order_acquire);
    if (entries == nullptr) return;
    int end = high_water_.load(std::memory_order_acquire);
    for (int fd = 0; fd < end; ++fd) {
      FdInfo info;
      if (copy_entry(entries[fd], &info)) fn(fd, info);
    }
  }

  // Descriptors opened through the hooks that could not be recorded.
  uint64_t untracked() const { return untracked_.load(std::memory_order_relaxed); }

  // fork() child: the other threads are gone, so whatever entry locks they held are free.
  void reset_after_fork();

  // Unmaps the table and forgets everything. Not thread safe.
  void test_only_reset();

 private:
  // 32 bytes (28 on 32-bit ARM). call == 0 marks a free entry. mode holds at most
  // kMaxStreamModeSize characters, NUL-padded (not terminated when full).
  struct Entry {
    std::atomic<uint8_t> lock;
    uint8_t call;
    char mode[core::result::kMaxStreamModeSize];
    uint32_t stack_id;
    uint32_t flags;
    uintptr_t stream_object;
    uint32_t stream_size;
    uint32_t reserved;
  };
  static_assert(sizeof(Entry) == 24 + sizeof(uintptr_t));  // 28 bytes on 32-bit ARM

  class EntryLock;
  Entry* entries_or_map();
  static bool copy_entry(Entry& entry, FdInfo* out);

  std::atomic<Entry*> entries_{nullptr};
  std::atomic<int> high_water_{0};  // 1 + the highest fd ever recorded
  std::atomic<bool> map_failed_{false};
  std::atomic<uint64_t> untracked_{0};
};

}  // namespace memtrack::rt
