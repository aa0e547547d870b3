// The per-thread memo of the stacks the fast unwinder captured (fast_unwind.cpp), so the
// same frames are never unwound twice while they are unchanged.
//
// Why a memo hit is the stack a walk would give: the walk is a function of its starting
// registers (pc, sp, and the frame pointer where a rule reads it), of the rules of the pcs it
// meets (fixed until a module is unloaded: the rule generation), of the wrapper-of-main frame
// it compares against, of `max`, and of the values of the memory words it loads (return
// address slots, saved frame pointers). An entry keeps all of these: the registers and `max`
// as its key, the rest as the words it loaded, in order, each an address and the value it
// held (the starting frame pointer and the wrapper-of-main frame are words too, read from
// where the memo and the unwinder keep them). A lookup re-reads the words in the order the
// walk loaded them and stops at the first that differs. A word's address is computed from the
// registers and earlier words only, so when those are equal the walk would load that address
// next: the check reads nothing the walk would not read (a stack that was switched or
// unmapped meanwhile is never touched beyond what the unwind itself would touch). If every
// word is equal, every step of the walk would be equal, and so are its frames and its stack
// id. The loads do not depend on one another, so the CPU overlaps them: no chain of dependent
// loads per frame as in the walk.
//
// The entries of one key form a tree. Since the address of each word follows from the
// earlier words, two stacks of one key load the same addresses up to their first different
// value: the tree branches there. The first stack of a key is its root; a later one is the
// child of the entry the lookup last compared, at the word where that entry differed
// (`diverge`): it equals its parent before that word, and its value there is its own among
// the parent's children that branch at that word. A lookup compares the root from its first
// word; at a difference it goes on in the child that branches there with the value now in
// memory, from the next word, and so on: each word is read once however many stacks share
// the key, where a list of entries compared each from its first word (the program whose
// hundreds of call paths all end in one function at a few depths compared every entry of
// its set, and evicted them, before this tree).
//
// A saved frame pointer that no later rule reads (code built without frame pointers uses the
// register for data) is not recorded: its value cannot change the result. Walks that went to
// libgcc, recorded the frames below main, or need more words or frames than an entry holds
// are not kept.
// Runtime-safe: one mapping per thread (fast_unwind.cpp); never shared between threads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::rt {

constexpr int kMemoWords = 40;  // memory words one walk may load and still be kept
// The check compares words four at a time: the three slots after an entry's last word hold
// kMemoPadWord's address and value (static, always mapped, always 0), so the last round of
// a comparison that starts at any word needs no loop for its last one to three.
constexpr int kMemoWordsPerRound = 4;
constexpr int kMemoWordSlots = kMemoWords + kMemoWordsPerRound - 1;
inline constexpr uintptr_t kMemoPadWord = 0;
constexpr int kMemoFrames = 32;  // deepest stack kept (the default max_frames)

// 1,024 entries per thread (720 KiB of address space, its pages touched as entries are
// used): more stacks than one thread of the 806-call-path workload makes (bench/workloads/
// many_sites.c). The trees' roots sit in 64 sets of 8 ways, a set chosen by (pc, sp); a
// set's pcs fill one cache line, so a lookup reads only the root of its own pc.
// Measured: see docs/performance.md ("Many call paths").
constexpr int kMemoEntries = 1024;
constexpr int kMemoSetBits = 6;
constexpr int kMemoWays = 8;
static_assert(kMemoWays * sizeof(uintptr_t) <= 64, "a set's pcs fill at most one line");

using MemoIndex = uint16_t;
constexpr MemoIndex kMemoNone = 0xFFFF;
static_assert(kMemoEntries < kMemoNone);
static_assert(kMemoWords < 256, "diverge is a byte");

struct StackMemoEntry {
  uint32_t stack_id = 0;
  uint16_t words = 0;  // loaded, without the padding
  uint16_t depth = 0;
  uint16_t limit = 0;            // memo_limit(max, is_return_address) of its walk
  uint8_t diverge = 0;           // a child: the first word it differs from its parent in
  MemoIndex parent = kMemoNone;  // kMemoNone: the root of its key's tree, in way `root_way`
  MemoIndex first_child = kMemoNone;
  MemoIndex next_sibling = kMemoNone;  // also the free list's link
  uint16_t root_way = 0;
  uintptr_t sp = 0;  // the key: with the root's way_pc and limit
  uintptr_t address[kMemoWordSlots] = {};
  uintptr_t value[kMemoWordSlots] = {};
  // No frames: a hit that wants them copies the depot's (StackDepot::get takes no lock).
};

// One per thread, in zeroed memory (an empty memo: `used` 0, no roots).
struct StackMemo {
  uint64_t hits = 0;
  uint64_t rejected = 0;  // lookups that found their key's tree but not their stack
  uint64_t stored = 0;
  uint32_t generation = 0;          // the rule generation every entry was walked in
  uint16_t used = 0;                // entries handed out at least once: [0, used)
  uint16_t clock = 0;               // where the search for a leaf to evict goes on
  MemoIndex free_head = kMemoNone;  // entries of evicted trees
  // The frame pointer the lookup started with: the word a rule that reads the starting
  // register loads (walks record its address, here, like any other word's).
  uintptr_t start_bp = 0;
  uint8_t next_way[1 << kMemoSetBits] = {};  // the way each set replaces next (round robin)
  // The pc of each way's root, a set's eight in one cache line (0: empty): a lookup compares
  // its pc with the line and reads only the root whose pc matches.
  alignas(64) uintptr_t way_pc[(1 << kMemoSetBits) * kMemoWays] = {};
  MemoIndex way_root[(1 << kMemoSetBits) * kMemoWays] = {};
  StackMemoEntry entries[kMemoEntries];
};

// The rest of a walk's key, in one compare: its depth limit and whether its first pc is a
// return address.
inline uint16_t memo_limit(int max, bool is_return_address) {
  return static_cast<uint16_t>(max * 2 + (is_return_address ? 1 : 0));
}

// The set (pc, sp) belongs to: its first way's index in memo.way_pc.
inline size_t memo_set(uintptr_t pc, uintptr_t sp) {
  uint64_t key =
      (static_cast<uint64_t>(pc) ^ (static_cast<uint64_t>(sp) << 9)) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(key >> (64 - kMemoSetBits)) * kMemoWays;
}

// Records what a walk reads into the entry it will fill. The frame pointer is tracked lazily:
// a loaded one is recorded only when a rule (or the wrapper-of-main test) reads it; the
// starting one as a word at `start_bp_slot` (StackMemo::start_bp).
struct WalkTrace {
  StackMemoEntry* entry;
  uintptr_t start_bp_slot;
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
    load(bp_slot != 0 ? bp_slot : start_bp_slot, bp);
  }
  void drop() { keep = false; }
  // After the walk: the padding after the last word (see kMemoWordsPerRound).
  void pad() {
    for (int i = 0; i < kMemoWordsPerRound - 1; ++i) {
      entry->address[entry->words + i] = reinterpret_cast<uintptr_t>(&kMemoPadWord);
      entry->value[entry->words + i] = kMemoPadWord;
    }
  }
};

// ---- Lookup (inline: every capture makes one) ------------------------------------------------

inline bool memo_word_unchanged(const StackMemoEntry& entry, int i) {
  return *reinterpret_cast<const volatile uintptr_t*>(entry.address[i]) == entry.value[i];
}

// The first of the entry's words from `start` on that no longer holds its value, or
// entry.words if none: re-read in the walk's order, stopping at the first difference. Four
// words a round, each with its own exit, so that the loop's own count and branch are paid
// once for four (a memo hit on churn at depth 10 compares 13 words: 8 instructions a word in
// a one-word loop); the slots after the last word are padding (WalkTrace::pad), so no loop is
// needed for the rest.
inline int first_changed_word(const StackMemoEntry& entry, int start) {
  const int words = entry.words;
  for (int i = start; i < words; i += kMemoWordsPerRound) {
    if (!memo_word_unchanged(entry, i) || !memo_word_unchanged(entry, i + 1) ||
        !memo_word_unchanged(entry, i + 2) || !memo_word_unchanged(entry, i + 3)) {
      while (i < words && memo_word_unchanged(entry, i)) ++i;
      return i;
    }
  }
  return words;
}

// Where a lookup that found no stack stopped: the walk's entry becomes the child of `parent`
// at word `diverge`, or (parent kMemoNone: the key has no tree) the root of a way of `set`.
struct MemoMiss {
  size_t set;
  MemoIndex parent;
  int diverge;
};

// The root of the key (pc, sp, limit) in `set`, or kMemoNone.
inline MemoIndex find_root(const StackMemo& memo, size_t set, uintptr_t pc, uintptr_t sp,
                           uint16_t limit) {
  // The pc first, from the set's line of pcs: it tells most of a set's roots apart, so a way
  // that holds another caller's tree costs one compare and no read of its root.
  const uintptr_t* way_pc = &memo.way_pc[set];
  for (int way = 0; way < kMemoWays; ++way) {
    if (way_pc[way] != pc) continue;
    MemoIndex root = memo.way_root[set + static_cast<size_t>(way)];
    const StackMemoEntry& entry = memo.entries[root];
    if (entry.sp == sp && entry.limit == limit) return root;
  }
  return kMemoNone;
}

// The entry of the key's tree whose every word holds its value, or null, with where the
// lookup stopped in *miss (parent and diverge).
inline const StackMemoEntry* find_in_tree(const StackMemo& memo, MemoIndex root,
                                          MemoMiss* /*out*/ miss) {
  const StackMemoEntry* entry = &memo.entries[root];
  int start = 0;
  for (;;) {
    int changed = first_changed_word(*entry, start);
    if (changed == entry->words) return entry;
    uintptr_t now = *reinterpret_cast<const volatile uintptr_t*>(entry->address[changed]);
    MemoIndex child = entry->first_child;
    while (child != kMemoNone &&
           (memo.entries[child].diverge != changed || memo.entries[child].value[changed] != now)) {
      child = memo.entries[child].next_sibling;
    }
    if (child == kMemoNone) {
      miss->parent = static_cast<MemoIndex>(entry - memo.entries);
      miss->diverge = changed;
      return nullptr;
    }
    entry = &memo.entries[child];
    start = changed + 1;
  }
}

// ---- Keeping a walk (stack_memo.cpp: after a miss only) -------------------------------------

// Empties the memo for a new rule generation: its stacks may have been walked with rules of
// a module since unloaded.
void reset_memo(StackMemo& memo, uint32_t generation);
// An entry for the walk after `miss`: a freed one, one never used, or else a leaf in clock
// order (evicting a leaf leaves the rest of its tree whole), never miss.parent. A new key also
// gets a way of miss.set in *way: an empty one, else the set's next in turn, whose tree is
// freed. kMemoNone if no leaf but the parent is left.
MemoIndex take_memo_entry(StackMemo& memo, const MemoMiss& miss, size_t* /*out*/ way);
// Hangs the filled entry where the lookup stopped (a new key's root in `way`, with `pc`),
// unless the walk's words do not fit there (a stack that changed between lookup and walk):
// then false, and the caller frees it.
bool keep_memo_entry(StackMemo& memo, MemoIndex index, const MemoMiss& miss, size_t way,
                     uintptr_t pc);
void free_memo_entry(StackMemo& memo, MemoIndex index);

// The walk without a memo.
struct NoTrace {
  void load(uintptr_t, uintptr_t) {}
  void bp_loaded(uintptr_t) {}
  void use_bp(uintptr_t) {}
  void drop() {}
};

}  // namespace memtrack::rt
