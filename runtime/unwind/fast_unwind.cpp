// The fast unwinder: walks the stack with DWARF unwind rules computed once per return
// address (core/unwind_rule.h) and cached in a lock-free table, so a step is one cache
// lookup and two loads: correct without frame pointers, at a fraction of the cost of
// interpreting CFI on every call. Also the reference unwinder (libgcc_s's _Unwind_Backtrace)
// it is checked against and falls back to.
// Runtime-safe: no malloc, no lock; _dl_find_object takes no loader lock. Must be built
// with frame pointers (leave_skipped_frames follows them).
#include "runtime/unwind/fast_unwind.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <unwind.h>

#include <atomic>

#include "core/flags.h"
#include "core/metadata_budget.h"
#include "core/stack_depot.h"
#include "core/unwind_rule.h"
#include "runtime/unwind/stack_memo.h"

namespace memtrack::rt {
namespace {

uintptr_t g_skip_start = 0;
uintptr_t g_skip_end = 0;

struct CaptureState {
  uintptr_t* frames;
  int max;
  int count;
  uintptr_t runtime_caller;  // 32-bit ARM: where the last runtime frame met returns to
};

_Unwind_Reason_Code on_frame(_Unwind_Context* context, void* arg) {
  auto* state = static_cast<CaptureState*>(arg);
  uintptr_t pc = _Unwind_GetIP(context);
  if (pc == 0) return _URC_END_OF_STACK;
  state->runtime_caller = 0;
  if (in_skipped_code(pc)) {
#if defined(__arm__)
    // Built -marm with frame pointers, a runtime frame that made a call keeps its return
    // address where fp points (gcc's ARM-mode frame: push {..., fp, lr}; fp = &saved lr).
    // Without its Thumb bit, as _Unwind_GetIP gives the others.
    state->runtime_caller =
        *reinterpret_cast<const uintptr_t*>(_Unwind_GetGR(context, 11)) & ~uintptr_t{1};
#endif
    return _URC_NO_REASON;
  }
  state->frames[state->count++] = pc;
  return state->count == state->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

}  // namespace

__attribute__((noinline)) int reference_unwind(uintptr_t* frames, int max) {
  CaptureState state{frames, max, 0, 0};
  _Unwind_Backtrace(on_frame, &state);
  // EHABI: libgcc reports no frame it has no unwind entry for, so a caller without tables
  // (C built without -funwind-tables, most of ld.so) would leave the stack empty. Its
  // address at least is known: the runtime frame that called into it says where it returns.
  if (state.runtime_caller != 0 && state.count < max && !in_skipped_code(state.runtime_caller)) {
    frames[state.count++] = state.runtime_caller;
  }
  return state.count;
}

// 32-bit ARM describes frames with EHABI tables (.ARM.exidx), not DWARF CFI: its fast_unwind
// is the frame-pointer walk of fast_unwind_arm.cpp.
#if !defined(__arm__)
namespace {

// ---- Rule cache ---------------------------------------------------------------------------

// Open addressing keyed by code address. An entry is claimed by a CAS on `pc`, then its
// rule is published with a release store; a reader that finds the pc but a zero rule
// computes the rule itself. 2^17 entries (2 MiB of .bss, touched as used) hold every
// return address of programs as large as cc1plus; beyond that, rules are computed uncached.
struct CacheEntry {
  std::atomic<uintptr_t> pc;
  std::atomic<uint64_t> rule;
};
constexpr int kCacheBits = 17;
constexpr size_t kCacheSize = size_t{1} << kCacheBits;
constexpr int kMaxProbes = 8;
CacheEntry g_rule_cache[kCacheSize];

// Return addresses are spread over code, so their low bits index well enough; linear
// probing absorbs code a multiple of the table size apart. Nothing more: this is on the
// critical path of every unwind step (load return address, index, load rule, add, load).
size_t cache_slot(uintptr_t pc) {
  return static_cast<size_t>(pc) & (kCacheSize - 1);
}

// Where the unwind tables of `object` may be read: the loaded segment that holds its
// .eh_frame_hdr (the loader mapped it from the program headers, which it parsed itself; the
// tables' own offsets and lengths may be anything in a broken module). The program headers are
// found through the ELF header at the module's start; if that does not look like one, the
// module's whole mapped range bounds the reads instead.
core::ReadableRange eh_frame_segment(const dl_find_object& object) {
  uintptr_t start = reinterpret_cast<uintptr_t>(object.dlfo_map_start);
  core::ReadableRange module{start, reinterpret_cast<uintptr_t>(object.dlfo_map_end)};
  const auto* elf = reinterpret_cast<const ElfW(Ehdr)*>(start);
  const ElfW(Phdr)* phdrs = nullptr;
  int phnum = 0;
  if (object.dlfo_link_map == nullptr) return module;
  if (elf->e_ident[EI_MAG0] == ELFMAG0 && elf->e_ident[EI_MAG1] == ELFMAG1 &&
      elf->e_ident[EI_MAG2] == ELFMAG2 && elf->e_ident[EI_MAG3] == ELFMAG3 &&
      elf->e_phentsize == sizeof(ElfW(Phdr)) &&
      elf->e_phoff + uint64_t{elf->e_phnum} * sizeof(ElfW(Phdr)) <= module.end - start) {
    phdrs = reinterpret_cast<const ElfW(Phdr)*>(start + elf->e_phoff);
    phnum = elf->e_phnum;
  } else if (object.dlfo_link_map->l_name == nullptr || object.dlfo_link_map->l_name[0] == '\0') {
    // A static program: glibc's map of it starts at its first executable segment, not at
    // the ELF header; the kernel's auxiliary vector has its program headers.
    phdrs = reinterpret_cast<const ElfW(Phdr)*>(getauxval(AT_PHDR));
    phnum = static_cast<int>(getauxval(AT_PHNUM));
  }
  if (phdrs == nullptr) return module;
  uintptr_t bias = object.dlfo_link_map->l_addr;
  uintptr_t hdr = reinterpret_cast<uintptr_t>(object.dlfo_eh_frame);
  for (int i = 0; i < phnum; ++i) {
    const ElfW(Phdr)& ph = phdrs[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t begin = bias + ph.p_vaddr;
    if (hdr >= begin && hdr - begin < ph.p_filesz)
      return core::ReadableRange{begin, begin + ph.p_filesz};
  }
  return module;
}

// Computes a rule; *cacheable is false when the answer may change as modules are loaded.
core::UnwindRule compute_rule(uintptr_t pc, bool is_return_address, bool* /*out*/ cacheable) {
  core::UnwindRule rule;
  dl_find_object object{};
  uintptr_t lookup = is_return_address ? pc - 1 : pc;
  if (_dl_find_object(reinterpret_cast<void*>(lookup), &object) != 0) {
    // Not in any module (JIT code, or a corrupt return address): libgcc would consult
    // frames registered with __register_frame, so let it decide.
    *cacheable = false;
    rule.kind = core::UnwindRuleKind::kUnsupported;
    return rule;
  }
  *cacheable = true;
  if (object.dlfo_eh_frame == nullptr) {
    rule.kind = core::UnwindRuleKind::kOutermost;  // no unwind tables: libgcc stops too
    return rule;
  }
  return core::compute_unwind_rule(static_cast<const uint8_t*>(object.dlfo_eh_frame), pc,
                                   is_return_address, eh_frame_segment(object));
}

// The probe that missed: computes the rule and claims an empty entry for it.
__attribute__((noinline)) core::UnwindRule find_rule_slow(uintptr_t pc, bool is_return_address,
                                                          int probe) {
  size_t slot = cache_slot(pc);
  for (; probe < kMaxProbes; ++probe) {
    CacheEntry& entry = g_rule_cache[(slot + probe) & (kCacheSize - 1)];
    uintptr_t key = entry.pc.load(std::memory_order_acquire);
    if (key == pc) {
      uint64_t word = entry.rule.load(std::memory_order_acquire);
      if (word != 0) return core::UnwindRule::unpack(word);
      break;  // another thread is publishing it
    }
    if (key == 0) {
      bool cacheable = false;
      core::UnwindRule rule = compute_rule(pc, is_return_address, &cacheable);
      if (cacheable && entry.pc.compare_exchange_strong(key, pc, std::memory_order_acq_rel)) {
        entry.rule.store(rule.pack(), std::memory_order_release);
      }
      return rule;
    }
  }
  bool cacheable = false;
  return compute_rule(pc, is_return_address, &cacheable);
}

// Inlined into the walk (its fields stay in registers): the hit in the first probes.
__attribute__((always_inline)) inline core::UnwindRule find_rule(uintptr_t pc,
                                                                 bool is_return_address) {
  size_t slot = cache_slot(pc);
  int probe = 0;
  for (; probe < kMaxProbes; ++probe) {
    CacheEntry& entry = g_rule_cache[(slot + probe) & (kCacheSize - 1)];
    uintptr_t key = entry.pc.load(std::memory_order_acquire);
    if (key != pc) {
      if (key == 0) break;
      continue;
    }
    uint64_t word = entry.rule.load(std::memory_order_acquire);
    if (word == 0) break;
    return core::UnwindRule::unpack(word);
  }
  return find_rule_slow(pc, is_return_address, probe);
}

// ---- Fast walk ----------------------------------------------------------------------------

// A frame bigger than this is taken for a corrupt rule and the stack goes to libgcc.
constexpr uintptr_t kMaxFrameBytes = uintptr_t{1} << 30;

struct Registers {
  uintptr_t pc;
  uintptr_t sp;
  uintptr_t bp;
};

// x86-64: the runtime is built with frame pointers, so its own frames (the hook,
// record_allocation, capture_stack, ...) are left by following rbp, without a rule lookup, up
// to the first return address outside the runtime: that caller's pc, CFA (its rsp) and rbp
// (pushed by the runtime frame's prologue). Returns false if the chain does not look like one.
[[maybe_unused]] __attribute__((always_inline)) inline bool leave_runtime_frames(Registers* regs) {
  uintptr_t bp = regs->bp;
  uintptr_t sp = regs->sp;
  for (int depth = 0; depth < 32; ++depth) {
    if (bp < sp || bp - sp > kMaxFrameBytes || (bp & 7) != 0) return false;
    const auto* frame = reinterpret_cast<const uintptr_t*>(bp);
    uintptr_t return_address = frame[1];
    sp = bp + 16;
    bp = frame[0];
    if (!in_skipped_code(return_address)) {
      *regs = Registers{return_address, sp, bp};
      return true;
    }
  }
  return false;
}

// The frames below the program's main never change while main runs. The runtime wraps main
// (process_info.cpp) and publishes the wrapper's frame pointer; a return address into
// the runtime reached with that rbp (callee-saved, so the unwind restores it) is the
// wrapper's. The first complete unwind through it records what lies below (libc's start
// code), and later unwinds append that instead of walking it.
constexpr int kMaxBaseFrames = 8;
struct BaseOfMain {
  std::atomic<int> state{0};  // 0: not known, 1: being recorded, 2: known
  uintptr_t wrapper_pc = 0;
  int count = 0;
  uintptr_t frames[kMaxBaseFrames] = {};
};
BaseOfMain g_base_of_main;
std::atomic<uintptr_t> g_main_wrapper_frame{0};

void record_base_of_main(uintptr_t wrapper_pc, const uintptr_t* frames, int count) {
  if (count > kMaxBaseFrames) return;
  int expected = 0;
  if (!g_base_of_main.state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
    return;
  }
  g_base_of_main.wrapper_pc = wrapper_pc;
  g_base_of_main.count = count;
  for (int i = 0; i < count; ++i) g_base_of_main.frames[i] = frames[i];
  g_base_of_main.state.store(2, std::memory_order_release);
}

// The walk from the first frame to unwind: `regs` is its pc, sp and frame pointer. `trace`
// sees every memory word the walk loads and every use of the frame pointer (stack_memo.h).
template <class Trace>
__attribute__((always_inline)) inline int walk(Registers regs, bool is_return_address,
                                               uintptr_t* frames, int max, uint64_t* /*out*/ hash,
                                               Trace& trace) {
  core::StackDepot::StackHash stack_hash;
  int count = 0;
  if (is_return_address) {
    frames[count++] = regs.pc;
    stack_hash.add(regs.pc);
  }
  uintptr_t pc = regs.pc;
  uintptr_t sp = regs.sp;
  uintptr_t bp = regs.bp;
  trace.bp_loaded(0);        // the starting register
  uintptr_t wrapper_pc = 0;  // the wrapper of main, once met
  int base_start = 0;        // frames[base_start..] lie below it
  bool complete = false;     // reached the outermost frame
  // Bounded even if every frame were the runtime's own.
  for (int step = 0; count < max && step < max + 64; ++step) {
    core::UnwindRule rule = find_rule(pc, is_return_address);
    if (rule.kind == core::UnwindRuleKind::kOutermost) {
      complete = true;
      break;
    }
    if (rule.kind != core::UnwindRuleKind::kFrame) return -1;
    if (rule.cfa_from_bp) trace.use_bp(bp);
    uintptr_t cfa = (rule.cfa_from_bp ? bp : sp) + static_cast<intptr_t>(rule.cfa_offset);
    if (cfa <= sp || cfa - sp > kMaxFrameBytes || (cfa & 7) != 0) return -1;
    uintptr_t ra_slot = cfa + rule.ra_offset;
    pc = *reinterpret_cast<const uintptr_t*>(ra_slot);
    trace.load(ra_slot, pc);
    if (rule.bp_saved) {
      uintptr_t slot = cfa + rule.bp_offset;
      bp = *reinterpret_cast<const uintptr_t*>(slot);
      trace.bp_loaded(slot);
    }
    sp = cfa;
    is_return_address = true;
    if (pc == 0) {
      complete = true;
      break;
    }
    if (in_skipped_code(pc)) {
      if (count > 0 && wrapper_pc == 0) {
        uintptr_t wrapper_frame = g_main_wrapper_frame.load(std::memory_order_relaxed);
        trace.use_bp(bp);
        trace.load(reinterpret_cast<uintptr_t>(&g_main_wrapper_frame), wrapper_frame);
        if (bp != 0 && bp == wrapper_frame) {
          if (g_base_of_main.state.load(std::memory_order_acquire) == 2 &&
              g_base_of_main.wrapper_pc == pc) {
            for (int i = 0; i < g_base_of_main.count && count < max; ++i) {
              frames[count++] = g_base_of_main.frames[i];
              stack_hash.add(g_base_of_main.frames[i]);
            }
            break;
          }
          wrapper_pc = pc;
          base_start = count;
        }
      }
      continue;
    }
    frames[count++] = pc;
    stack_hash.add(pc);
  }
  if (wrapper_pc != 0) {
    // Walked below main while its frames were not known yet: the next walk appends them
    // instead, so this one is not a result to reuse.
    trace.drop();
    if (complete) record_base_of_main(wrapper_pc, frames + base_start, count - base_start);
  }
  *hash = stack_hash.finish(static_cast<uint32_t>(count));
  return count;
}

// Bumped by forget_unwind_rules: memo entries of an older generation are never used.
std::atomic<uint32_t> g_rule_generation{1};

// Each thread's memo is a mapping of its own, made at its first capture and unmapped by a
// thread key's destructor when the thread exits: in thread-local storage its 476 KiB would
// come out of every thread's stack, which programs that size their threads' stacks tightly
// would feel. A thread whose memo is gone or could not be mapped goes without.
StackMemo* const kNoMemo = reinterpret_cast<StackMemo*>(uintptr_t{1});
__thread StackMemo* t_stack_memo = nullptr;
// Set while this thread is inside the memo: a signal handler that captures a stack then
// neither reads nor writes it (it could see a half-written entry).
__thread bool t_stack_memo_busy = false;
std::atomic<int> g_memo_key_state{0};  // 0: not created, 1: being created, 2: ready, 3: none
pthread_key_t g_memo_key;

// The counters of threads that have exited.
std::atomic<uint64_t> g_memo_hits{0};
std::atomic<uint64_t> g_memo_rejected{0};
std::atomic<uint64_t> g_memo_stored{0};

void release_stack_memo(void* mem) {
  const auto* memo = static_cast<const StackMemo*>(mem);
  g_memo_hits.fetch_add(memo->hits, std::memory_order_relaxed);
  g_memo_rejected.fetch_add(memo->rejected, std::memory_order_relaxed);
  g_memo_stored.fetch_add(memo->stored, std::memory_order_relaxed);
  t_stack_memo = kNoMemo;
  core::unmap_metadata(mem, sizeof(StackMemo));
}

bool memo_key_ready() {
  int state = g_memo_key_state.load(std::memory_order_acquire);
  if (state != 0) return state == 2;
  if (!g_memo_key_state.compare_exchange_strong(state, 1, std::memory_order_acq_rel)) {
    return false;
  }
  bool ready = pthread_key_create(&g_memo_key, release_stack_memo) == 0;
  // glibc keeps the values of the first 32 keys in the thread itself; a later key's
  // pthread_setspecific would call calloc.
  if (ready && g_memo_key >= 32) {
    pthread_key_delete(g_memo_key);
    ready = false;
  }
  g_memo_key_state.store(ready ? 2 : 3, std::memory_order_release);
  return ready;
}

StackMemo* thread_stack_memo() {
  StackMemo* memo = t_stack_memo;
  if (memo != nullptr) return memo == kNoMemo ? nullptr : memo;
  if (!memo_key_ready()) return nullptr;
  void* mem = core::map_metadata(sizeof(StackMemo));  // zeroed: an empty memo
  if (mem != nullptr && pthread_setspecific(g_memo_key, mem) != 0) {
    core::unmap_metadata(mem, sizeof(StackMemo));
    mem = nullptr;
  }
  t_stack_memo = mem != nullptr ? static_cast<StackMemo*>(mem) : kNoMemo;
  return static_cast<StackMemo*>(mem);
}

// The starting registers, read at one instruction of the (noinline) caller: the rule row for
// that address describes exactly this sp and frame pointer. On x86-64 the runtime's own
// frames are then left through their frame pointers.
#if defined(__x86_64__)
#define MEMTRACK_READ_START_REGISTERS(regs) \
  __asm__ volatile(                         \
      "leaq 0(%%rip), %0\n\t"               \
      "movq %%rsp, %1\n\t"                  \
      "movq %%rbp, %2"                      \
      : "=&r"((regs).pc), "=&r"((regs).sp), "=&r"((regs).bp))
#elif defined(__aarch64__)
#define MEMTRACK_READ_START_REGISTERS(regs) \
  __asm__ volatile(                         \
      "adr %0, .\n\t"                       \
      "mov %1, sp\n\t"                      \
      "mov %2, x29"                         \
      : "=&r"((regs).pc), "=&r"((regs).sp), "=&r"((regs).bp))
#endif

// Leaves the runtime's frames (x86-64). Returns is_return_address. The first frame's
// registers are the memo's key, its frame pointer included where a rule reads it: the slot
// it was loaded from belongs to the runtime's frames, whose layout differs between hooks.
__attribute__((always_inline)) inline bool start_of_walk(Registers* regs) {
#if defined(__x86_64__)
  return leave_runtime_frames(regs);
#else
  // aarch64 keeps its frame record {x29, x30} at the bottom of the frame, so the frame
  // pointer chain does not give a caller's sp (its CFA): the runtime's own frames are walked
  // with their rules like any other (they are cached after the first stacks).
  (void)regs;
  return false;
#endif
}

}  // namespace

__attribute__((noinline)) int fast_unwind(uintptr_t* frames, int max, uint64_t* /*out*/ hash) {
  Registers regs{0, 0, 0};
  MEMTRACK_READ_START_REGISTERS(regs);
  bool is_return_address = start_of_walk(&regs);
  NoTrace trace;
  return walk(regs, is_return_address, frames, max, hash, trace);
}

namespace {

// The walk of a stack the memo did not have (or of any stack, when this thread has no memo:
// `memo` null), kept where the lookup stopped (`miss`). Out of line, so that a memo hit, the
// common case, pays neither the walk's registers nor its frame (the start registers stay
// valid: they describe the caller's frames, which outlive this call).
__attribute__((noinline)) int walk_and_remember(const Registers& regs, bool is_return_address,
                                                uintptr_t* frames, int max, core::StackDepot* depot,
                                                uint32_t* /*out*/ id, StackMemo* memo,
                                                MemoMiss miss) {
  uintptr_t own[core::kMaxFramesLimit];
  if (frames == nullptr) frames = own;
  uint64_t hash = 0;
  size_t way = 0;
  MemoIndex index = memo != nullptr ? take_memo_entry(*memo, miss, &way) : kMemoNone;
  if (index == kMemoNone) {
    NoTrace none;
    int depth = walk(regs, is_return_address, frames, max, &hash, none);
    if (depth >= 0) *id = depot->intern_hashed(frames, static_cast<uint32_t>(depth), hash);
    return depth;
  }
  StackMemoEntry& entry = memo->entries[index];
  entry.words = 0;
  WalkTrace trace{&entry, reinterpret_cast<uintptr_t>(&memo->start_bp)};
  int depth = walk(regs, is_return_address, frames, max, &hash, trace);
  if (depth >= 0) {
    *id = depot->intern_hashed(frames, static_cast<uint32_t>(depth), hash);
    if (trace.keep && depth <= kMemoFrames && *id != core::StackDepot::kInvalidId) {
      trace.pad();
      entry.stack_id = *id;
      entry.depth = static_cast<uint16_t>(depth);
      entry.limit = memo_limit(max, is_return_address);
      entry.sp = regs.sp;
      if (keep_memo_entry(*memo, index, miss, way, regs.pc)) return depth;
    }
  }
  free_memo_entry(*memo, index);
  return depth;
}

}  // namespace

__attribute__((noinline)) int fast_unwind_interned(uintptr_t* frames, int max,
                                                   core::StackDepot* depot, uint32_t* /*out*/ id,
                                                   uintptr_t hook_frame) {
  Registers regs{0, 0, 0};
  MEMTRACK_READ_START_REGISTERS(regs);
#if defined(__x86_64__)
  // The hook's frame lies above this one on the stack: the walk out of the runtime starts
  // there (and goes on through frame pointers as usual if its caller is the runtime too).
  if (hook_frame > regs.sp && hook_frame - regs.sp < kMaxFrameBytes) {
    regs.sp = hook_frame;
    regs.bp = hook_frame;
  }
#else
  (void)hook_frame;
#endif
  bool is_return_address = start_of_walk(&regs);
  StackMemo* memo_or_null = nullptr;
  // Not in a signal handler that interrupted this thread inside the memo.
  if (!t_stack_memo_busy) {
    t_stack_memo_busy = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    memo_or_null = thread_stack_memo();
    if (memo_or_null == nullptr) t_stack_memo_busy = false;
  }
  MemoMiss miss;
  if (memo_or_null == nullptr) {
    return walk_and_remember(regs, is_return_address, frames, max, depot, id, nullptr,
                             MemoMiss{0, kMemoNone, 0});
  }
  StackMemo& memo = *memo_or_null;
  uint32_t generation = g_rule_generation.load(std::memory_order_acquire);
  if (memo.generation != generation) reset_memo(memo, generation);
  memo.start_bp = regs.bp;
  miss.set = memo_set(regs.pc, regs.sp);
  MemoIndex root = find_root(memo, miss.set, regs.pc, regs.sp, memo_limit(max, is_return_address));
  if (root == kMemoNone) {
    miss.parent = kMemoNone;
    miss.diverge = 0;
  } else {
    const StackMemoEntry* found = find_in_tree(memo, root, &miss);
    if (found != nullptr) {
      const StackMemoEntry& entry = *found;
      int depth = entry.depth;
      // The frames are the depot's (the memo keeps the id), wanted only by the cross-check;
      // a depot that does not have them (not the one the memo's ids are of) gets a walk.
      if (frames != nullptr) {
        core::StackView stack = depot->get(entry.stack_id);
        if (stack.size != entry.depth) {
          std::atomic_signal_fence(std::memory_order_seq_cst);
          t_stack_memo_busy = false;
          return walk_and_remember(regs, is_return_address, frames, max, depot, id, nullptr,
                                   MemoMiss{0, kMemoNone, 0});
        }
        for (uint32_t i = 0; i < stack.size; ++i) frames[i] = stack.frames[i];
      }
      *id = entry.stack_id;
      ++memo.hits;
      std::atomic_signal_fence(std::memory_order_seq_cst);
      t_stack_memo_busy = false;
      return depth;
    }
    ++memo.rejected;
  }
  int depth = walk_and_remember(regs, is_return_address, frames, max, depot, id, &memo, miss);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_stack_memo_busy = false;
  return depth;
}

StackMemoStats stack_memo_stats() {
  const StackMemo* memo = t_stack_memo;
  if (memo == nullptr || memo == kNoMemo) return StackMemoStats{};
  return StackMemoStats{memo->hits, memo->rejected, memo->stored};
}

StackMemoStats stack_memo_totals() {
  StackMemoStats totals = stack_memo_stats();
  totals.hits += g_memo_hits.load(std::memory_order_relaxed);
  totals.rejected += g_memo_rejected.load(std::memory_order_relaxed);
  totals.stored += g_memo_stored.load(std::memory_order_relaxed);
  return totals;
}

#endif  // !defined(__arm__)

#if !defined(__arm__)
void set_main_wrapper_frame(uintptr_t frame) {
  g_main_wrapper_frame.store(frame, std::memory_order_relaxed);
}

int walk_frames_from(uintptr_t pc, uintptr_t sp, uintptr_t bp, uintptr_t stack_end,
                     FrameSpan* frames, int max, bool* complete) {
  *complete = false;
  bool is_return_address = false;
  int count = 0;
  while (count < max) {
    core::UnwindRule rule = find_rule(pc, is_return_address);
    if (rule.kind == core::UnwindRuleKind::kOutermost) {
      *complete = true;
      break;
    }
    if (rule.kind != core::UnwindRuleKind::kFrame) break;
    uintptr_t cfa = (rule.cfa_from_bp ? bp : sp) + static_cast<intptr_t>(rule.cfa_offset);
    if (cfa <= sp || cfa > stack_end || (cfa & 7) != 0) break;
    const uintptr_t ra_slot = cfa + rule.ra_offset;
    if (ra_slot < sp || ra_slot + sizeof(uintptr_t) > stack_end) break;
    frames[count++] = FrameSpan{pc, cfa};
    uintptr_t next = *reinterpret_cast<const uintptr_t*>(ra_slot);
    if (rule.bp_saved) {
      const uintptr_t slot = cfa + rule.bp_offset;
      if (slot < sp || slot + sizeof(uintptr_t) > stack_end) break;
      bp = *reinterpret_cast<const uintptr_t*>(slot);
    }
    sp = cfa;
    pc = next;
    is_return_address = true;
    if (pc == 0) {
      *complete = true;
      break;
    }
  }
  return count;
}

__attribute__((noinline)) int walk_own_frames(uintptr_t stack_end, FrameSpan* frames, int max,
                                              bool* complete) {
  Registers regs{0, 0, 0};
  MEMTRACK_READ_START_REGISTERS(regs);
  return walk_frames_from(regs.pc, regs.sp, regs.bp, stack_end, frames, max, complete);
}

void forget_unwind_rules() {
  for (CacheEntry& entry : g_rule_cache) {
    if (entry.pc.load(std::memory_order_relaxed) == 0) continue;
    entry.rule.store(0, std::memory_order_relaxed);
    entry.pc.store(0, std::memory_order_release);
  }
  // After the cache is empty: a walk that reads the new generation uses no old rule.
  g_rule_generation.fetch_add(1, std::memory_order_acq_rel);
}
#endif

void set_skipped_code(uintptr_t start, uintptr_t end) {
  g_skip_start = start;
  g_skip_end = end;
}

void skipped_code_range(uintptr_t* start, uintptr_t* end) {
  *start = g_skip_start;
  *end = g_skip_end;
}

bool in_skipped_code(uintptr_t pc) {
  return pc >= g_skip_start && pc < g_skip_end;
}

}  // namespace memtrack::rt
