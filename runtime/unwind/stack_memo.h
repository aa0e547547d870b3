// The per-thread memo of the last stacks the fast unwinder captured (fast_unwind.cpp), so the
// same frames are never unwound twice while they are unchanged.
//
// Why a memo hit is the stack a walk would give: the walk is a function of its starting
// registers (pc, sp, and the frame pointer where a rule reads it), of the rules of the pcs it
// meets (fixed until a module is unloaded: the rule generation), of the wrapper-of-main frame
// it compares against, of `max`, and of the values of the memory words it loads (return
// address slots, saved frame pointers). An entry keeps all of these; a lookup compares the
// registers, then re-reads the words in the order the walk loaded them and stops at the first
// that differs. A word's address is computed from the registers and earlier words only, so
// when those are equal the walk would load that address next: the check reads nothing the
// walk would not read (a stack that was switched or unmapped meanwhile is never touched beyond
// what the unwind itself would touch). If every word is equal, every step of the walk would be
// equal, and so are its frames and its stack id. The loads do not depend on one another, so
// the CPU overlaps them: no chain of dependent loads per frame as in the walk.
//
// A saved frame pointer that no later rule reads (code built without frame pointers uses the
// register for data) is not recorded: its value cannot change the result. Walks that went to
// libgcc, recorded the frames below main, or need more words than an entry holds are not kept.
// Runtime-safe: one mapping per thread (fast_unwind.cpp); never shared between threads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::rt {

constexpr int kMemoWords = 40;  // memory words one walk may load and still be kept
// The check compares words four at a time: an entry's words are padded to a multiple of four
// with reads of kMemoPadWord (static, always mapped, always 0), so it needs no loop for the
// last one to three.
constexpr int kMemoWordsPerRound = 4;
static_assert(kMemoWords % kMemoWordsPerRound == 0);
inline constexpr uintptr_t kMemoPadWord = 0;
constexpr int kMemoFrames = 32;  // deepest stack kept (the default max_frames)
// 512 entries per thread: 64 sets of 8, a set chosen by (pc, sp). Direct-mapped, 64 entries
// reused 81-90% of the python3 workload's stacks (8 entries 65-73%, 128 entries 90%), but
// only a third of cc1plus's and git's: there half the lookups found the entry of their pc and
// sp holding another stack (another caller of the same function, at the same depth), which
// evicted it however many entries there were. Ways keep such callers side by side. Stacks
// reused (cc1plus / git log -p): 16 sets of 4: 47% / 55%; 64 sets of 4: 58% / 81%; 32 sets of
// 8: 61% / 99.6%; 16 sets of 16: 61% / 99.7%; 64 sets of 8: 69% / 99.7%. 256 entries are
// where git stops gaining; cc1plus gains up to 512: its runtime does 10% fewer instructions
// with 64 sets of 8 than with 32 (each walk saved is a chain of rule cache misses too), for
// 476 KiB of address space a thread instead of 238 (on x86-64; its pages are touched only as
// entries are used). A lookup reads its set's line of pcs (StackMemo::way_pc) and then only
// the entries of its own pc.
constexpr int kMemoSetBits = 6;
constexpr int kMemoWays = 8;
static_assert(kMemoWays * sizeof(uintptr_t) <= 64, "a set's pcs fill at most one line");

struct StackMemoEntry {
  uint32_t generation = 0;  // the rule generation it was walked in; 0: empty
  uint32_t stack_id = 0;
  int16_t max = 0;
  uint16_t words = 0;
  uint16_t depth = 0;
  bool is_return_address = false;
  bool uses_start_bp = false;       // a rule read the starting frame pointer register
  bool uses_wrapper_frame = false;  // the walk compared a frame pointer with main's wrapper
  uintptr_t sp = 0;                 // its pc is the set's way_pc (StackMemo)
  uintptr_t start_bp = 0;
  uintptr_t wrapper_frame = 0;
  uintptr_t address[kMemoWords] = {};
  uintptr_t value[kMemoWords] = {};
  uintptr_t frames[kMemoFrames] = {};
};

// One per thread, in zeroed memory (an empty memo).
struct StackMemo {
  uint64_t hits = 0;
  uint64_t rejected = 0;  // entries with the same registers, but a loaded word differed
  uint64_t stored = 0;
  uint8_t next_way[1 << kMemoSetBits] = {};  // the way each set replaces next (round robin)
  // The pc of each entry, a set's eight in one cache line, indexed like entries (0: empty).
  // A lookup compares its pc with the line and reads only the entry whose pc matches: the
  // entries of other callers in the set stay untouched, where comparing each entry's own pc
  // read the first line of every way before the matching one (in perf, the costliest
  // instruction of a memo hit on git and python3).
  alignas(64) uintptr_t way_pc[(1 << kMemoSetBits) * kMemoWays] = {};
  StackMemoEntry entries[(1 << kMemoSetBits) * kMemoWays];
};

// The set (pc, sp) belongs to: its first way's index in memo.entries.
inline size_t memo_set(uintptr_t pc, uintptr_t sp) {
  uint64_t key =
      (static_cast<uint64_t>(pc) ^ (static_cast<uint64_t>(sp) << 9)) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(key >> (64 - kMemoSetBits)) * kMemoWays;
}

// Records what a walk reads into the entry it will fill. The frame pointer is tracked lazily:
// a loaded one is recorded only when a rule (or the wrapper-of-main test) reads it.
struct WalkTrace {
  StackMemoEntry* entry;
  bool keep = true;
  bool bp_recorded = false;
  uintptr_t bp_slot = 0;  // where the current frame pointer was loaded from; 0: a register

  void load(uintptr_t address, uintptr_t value) {
    if (entry->words == kMemoWords) {
      keep = false;
      return;
    }
    entry->address[entry->words] = address;
    entry->value[entry->words] = value;
    ++entry->words;
  }
  void bp_loaded(uintptr_t slot) {
    bp_slot = slot;
    bp_recorded = false;
  }
  void use_bp(uintptr_t bp) {
    if (bp_recorded) return;
    bp_recorded = true;
    if (bp_slot != 0) {
      load(bp_slot, bp);
    } else {
      entry->uses_start_bp = true;
      entry->start_bp = bp;
    }
  }
  void use_wrapper_frame(uintptr_t frame) {
    entry->uses_wrapper_frame = true;
    entry->wrapper_frame = frame;
  }
  void drop() { keep = false; }
  // After the walk: pads the words to a whole number of rounds (see kMemoWordsPerRound).
  void pad() {
    while (entry->words % kMemoWordsPerRound != 0) {
      entry->address[entry->words] = reinterpret_cast<uintptr_t>(&kMemoPadWord);
      entry->value[entry->words] = kMemoPadWord;
      ++entry->words;
    }
  }
};

// The walk without a memo.
struct NoTrace {
  void load(uintptr_t, uintptr_t) {}
  void bp_loaded(uintptr_t) {}
  void use_bp(uintptr_t) {}
  void use_wrapper_frame(uintptr_t) {}
  void drop() {}
};

}  // namespace memtrack::rt
