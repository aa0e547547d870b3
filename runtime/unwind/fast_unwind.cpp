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
#include <sys/auxv.h>
#include <unwind.h>

#include <atomic>

#include "core/stack_depot.h"
#include "core/unwind_rule.h"

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

core::UnwindRule find_rule(uintptr_t pc, bool is_return_address) {
  size_t slot = cache_slot(pc);
  for (int probe = 0; probe < kMaxProbes; ++probe) {
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

}  // namespace

__attribute__((noinline)) int fast_unwind(uintptr_t* frames, int max, uint64_t* /*out*/ hash) {
  Registers regs{0, 0, 0};
  // pc, sp and frame pointer at one instruction of this function: the rule row for that
  // address describes exactly this sp and frame pointer.
#if defined(__x86_64__)
  __asm__ volatile(
      "leaq 0(%%rip), %0\n\t"
      "movq %%rsp, %1\n\t"
      "movq %%rbp, %2"
      : "=&r"(regs.pc), "=&r"(regs.sp), "=&r"(regs.bp));
  bool is_return_address = leave_runtime_frames(&regs);
#elif defined(__aarch64__)
  __asm__ volatile(
      "adr %0, .\n\t"
      "mov %1, sp\n\t"
      "mov %2, x29"
      : "=&r"(regs.pc), "=&r"(regs.sp), "=&r"(regs.bp));
  // aarch64 keeps its frame record {x29, x30} at the bottom of the frame, so the frame
  // pointer chain does not give a caller's sp (its CFA): the runtime's own frames are walked
  // with their rules like any other (they are cached after the first stacks).
  bool is_return_address = false;
#endif
  core::StackDepot::StackHash stack_hash;
  int count = 0;
  if (is_return_address) {
    frames[count++] = regs.pc;
    stack_hash.add(regs.pc);
  }
  uintptr_t pc = regs.pc;
  uintptr_t sp = regs.sp;
  uintptr_t bp = regs.bp;
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
    uintptr_t cfa = (rule.cfa_from_bp ? bp : sp) + static_cast<intptr_t>(rule.cfa_offset);
    if (cfa <= sp || cfa - sp > kMaxFrameBytes || (cfa & 7) != 0) return -1;
    pc = *reinterpret_cast<const uintptr_t*>(cfa + rule.ra_offset);
    if (rule.bp_saved) bp = *reinterpret_cast<const uintptr_t*>(cfa + rule.bp_offset);
    sp = cfa;
    is_return_address = true;
    if (pc == 0) {
      complete = true;
      break;
    }
    if (in_skipped_code(pc)) {
      if (count > 0 && wrapper_pc == 0 && bp != 0 &&
          bp == g_main_wrapper_frame.load(std::memory_order_relaxed)) {
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
      continue;
    }
    frames[count++] = pc;
    stack_hash.add(pc);
  }
  if (complete && wrapper_pc != 0) {
    record_base_of_main(wrapper_pc, frames + base_start, count - base_start);
  }
  *hash = stack_hash.finish(static_cast<uint32_t>(count));
  return count;
}
#endif  // !defined(__arm__)

#if !defined(__arm__)
void set_main_wrapper_frame(uintptr_t frame) {
  g_main_wrapper_frame.store(frame, std::memory_order_relaxed);
}

void forget_unwind_rules() {
  for (CacheEntry& entry : g_rule_cache) {
    if (entry.pc.load(std::memory_order_relaxed) == 0) continue;
    entry.rule.store(0, std::memory_order_relaxed);
    entry.pc.store(0, std::memory_order_release);
  }
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
