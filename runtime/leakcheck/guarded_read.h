// Reading memory the program may have made unreadable (unmapped, PROT_NONE, a truncated
// file's pages, guard pages) without faulting, and a quiet thread for the leak scan.
// Runtime-safe: no malloc; the fault handler is async-signal-safe.
#pragma once

#include <setjmp.h>

#include <cstdint>

#include "runtime/thread_state.h"

namespace memtrack::rt {

// While one lives on a thread (the one running a leak scan):
// - a SIGSEGV or SIGBUS raised by a guarded read on this thread is caught (read_words,
//   try_read_word); a fault on any other thread goes to the program's own handler or
//   default action, as before;
// - every other signal is blocked on this thread, so no handler of the program (a timer's)
//   runs in the middle of the scan and changes what it reads; signals that arrive meanwhile
//   stay pending and are delivered when the guard ends.
// One per thread at a time; not nestable across threads (the handler is process-wide,
// installed and restored by whichever guard is outermost). Not thread safe: the leak scan
// holds the report lock.
class ScanGuard {
 public:
  ScanGuard();
  ~ScanGuard();
  ScanGuard(const ScanGuard&) = delete;
  ScanGuard& operator=(const ScanGuard&) = delete;

 private:
  bool outermost_ = false;
};

// The size of a pointer, and so of the words the scan reads: 8 bytes, 4 on 32-bit ARM.
inline constexpr uintptr_t kWord = sizeof(uintptr_t);

// The first address after the page holding `address`.
uintptr_t next_page_after(uintptr_t address);

// Calls visit(address, word) for every aligned word (kWord bytes) of [begin, end), in order.
// Under a ScanGuard, a fault (in the read or inside `visit`) is caught: a word that cannot be
// read makes the walk go on at the next page, a fault inside `visit` skips that one word.
// Without a ScanGuard it reads directly (the memory must then be readable).
template <typename Visit>
__attribute__((noinline)) void read_words_at(uintptr_t begin, uintptr_t end, Visit&& visit) {
  sigjmp_buf jump;
  constexpr uintptr_t kMask = kWord - 1;
  volatile uintptr_t cursor = (begin + kMask) & ~kMask;  // volatile: survives the jump
  sigjmp_buf* outer = t_thread.fault_jump;
  if (sigsetjmp(jump, 0) != 0) {
    uintptr_t fault = t_thread.fault_address;
    uintptr_t at = cursor;
    cursor =
        fault >= at && fault < at + kWord ? (next_page_after(fault) + kMask) & ~kMask : at + kWord;
  }
  t_thread.fault_jump = &jump;
  for (uintptr_t p = cursor; p + kWord <= end && p >= begin; p += kWord) {
    cursor = p;
    visit(p, *reinterpret_cast<const volatile uintptr_t*>(p));
  }
  t_thread.fault_jump = outer;
}

// read_words_at for a visit that needs only the word.
template <typename Visit>
void read_words(uintptr_t begin, uintptr_t end, Visit&& visit) {
  read_words_at(begin, end, [&visit](uintptr_t, uintptr_t word) { visit(word); });
}

// Like read_words over a series of ranges, under one sigsetjmp: next_range(&begin, &end)
// hands out the next range, or returns false when there is none. For scans of many small
// ranges (a million blocks), where a sigsetjmp per range would cost more than the reads.
// What next_range and visit change must be in memory when a read can fault: next_range is
// followed by a compiler barrier, and visit should do its work in calls that are not inlined.
template <typename NextRange, typename Visit>
__attribute__((noinline)) void read_ranges(NextRange&& next_range, Visit&& visit) {
  sigjmp_buf jump;
  constexpr uintptr_t kMask = kWord - 1;
  volatile uintptr_t cursor = 0;  // volatile: survive the jump
  volatile uintptr_t end = 0;
  sigjmp_buf* outer = t_thread.fault_jump;
  if (sigsetjmp(jump, 0) != 0) {
    uintptr_t fault = t_thread.fault_address;
    uintptr_t at = cursor;
    uintptr_t after_page = (next_page_after(fault) + kMask) & ~kMask;
    if (fault < at || fault >= at + kWord) {
      cursor = at + kWord;  // a fault inside visit: skip that one word
    } else {
      cursor = after_page > at ? after_page : end;  // the last page wraps: the range is done
    }
  }
  t_thread.fault_jump = &jump;
  for (;;) {
    const uintptr_t range_end = end;
    for (uintptr_t p = cursor; p + kWord <= range_end && p + kWord > p; p += kWord) {
      cursor = p;
      visit(*reinterpret_cast<const volatile uintptr_t*>(p));
    }
    uintptr_t begin = 0;
    uintptr_t next_end = 0;
    bool more = next_range(&begin, &next_end);
    asm volatile("" ::: "memory");  // next_range's stores happen before a read can fault
    if (!more) break;
    cursor = (begin + kMask) & ~kMask;
    end = next_end;
  }
  t_thread.fault_jump = outer;
}

// Reads one word (kWord bytes); false if it cannot be read (under a ScanGuard; without one, it must
// be readable).
[[nodiscard]] bool try_read_word(uintptr_t address, uint64_t* /*out*/ value);

}  // namespace memtrack::rt
