// The fast unwinder on 32-bit ARM: walks the stack with EHABI rules (core/ehabi_rule.h)
// computed once per return address and cached in a lock-free table, as fast_unwind.cpp does
// with DWARF rules elsewhere, and so gives the stacks libgcc's EHABI unwinder gives.
// Runtime-safe: no malloc, no lock; _dl_find_object takes no loader lock.
#include "runtime/unwind/fast_unwind.h"

#if defined(__arm__)
#include <dlfcn.h>

#include <atomic>

#include "core/ehabi_rule.h"
#include "core/flags.h"
#include "core/stack_depot.h"
#endif

namespace memtrack::rt {

#if defined(__arm__)
namespace {

// Open addressing keyed by code address, as in fast_unwind.cpp: an entry is claimed by a CAS
// on `pc`, then its rule published with a release store.
struct CacheEntry {
  std::atomic<uintptr_t> pc;
  std::atomic<uint64_t> rule;
};
constexpr size_t kCacheSize = size_t{1} << 16;
constexpr int kMaxProbes = 8;
CacheEntry g_rule_cache[kCacheSize];

core::EhabiRule compute_rule(uintptr_t pc, bool is_return_address, bool* /*out*/ cacheable) {
  dl_find_object object{};
  uintptr_t lookup = is_return_address ? pc - 2 : pc;
  *cacheable = false;
  core::EhabiRule rule;
  rule.kind = core::EhabiRuleKind::kUnsupported;
  if (_dl_find_object(reinterpret_cast<void*>(lookup), &object) != 0) return rule;
  *cacheable = true;
  return core::compute_ehabi_rule(static_cast<const uint32_t*>(object.dlfo_eh_frame),
                                  object.dlfo_eh_count, pc, is_return_address,
                                  reinterpret_cast<uintptr_t>(object.dlfo_map_start),
                                  reinterpret_cast<uintptr_t>(object.dlfo_map_end));
}

core::EhabiRule find_rule(uintptr_t pc, bool is_return_address) {
  size_t slot = (pc >> 1) & (kCacheSize - 1);
  for (int probe = 0; probe < kMaxProbes; ++probe) {
    CacheEntry& entry = g_rule_cache[(slot + probe) & (kCacheSize - 1)];
    uintptr_t key = entry.pc.load(std::memory_order_acquire);
    if (key == pc) {
      uint64_t word = entry.rule.load(std::memory_order_acquire);
      if (word != 0) return core::EhabiRule::unpack(word);
      break;  // another thread is publishing it
    }
    if (key == 0) {
      bool cacheable = false;
      core::EhabiRule rule = compute_rule(pc, is_return_address, &cacheable);
      if (cacheable && entry.pc.compare_exchange_strong(key, pc, std::memory_order_acq_rel)) {
        entry.rule.store(rule.pack(), std::memory_order_release);
      }
      return rule;
    }
  }
  bool cacheable = false;
  return compute_rule(pc, is_return_address, &cacheable);
}

constexpr uintptr_t kMaxFrameBytes = uintptr_t{1} << 24;

}  // namespace

__attribute__((noinline)) int fast_unwind(uintptr_t* frames, int max, uint64_t* /*out*/ hash) {
  uintptr_t pc = 0;
  uintptr_t sp = 0;
  uintptr_t r7 = 0;
  uintptr_t r11 = 0;
  // pc, sp and both frame pointers at one instruction of this function (ARM code: `adr`
  // gives that instruction's address), which the rule for that address describes.
  __asm__ volatile(
      "adr %0, .\n\t"
      "mov %1, sp\n\t"
      "mov %2, r7\n\t"
      "mov %3, r11"
      : "=&r"(pc), "=&r"(sp), "=&r"(r7), "=&r"(r11));
  core::StackDepot::StackHash stack_hash;
  int count = 0;
  bool is_return_address = false;
  // A frame is recorded once its own entry is found, as libgcc reports it only then (an
  // EXIDX_CANTUNWIND frame such as _start is not reported).
  bool after_runtime = false;  // the last frame stepped through was the runtime's
  for (int step = 0; step < max + 64; ++step) {
    core::EhabiRule rule = find_rule(pc, is_return_address);
    if (rule.kind == core::EhabiRuleKind::kOutermost) {
      // libgcc does not report this frame, but reference_unwind adds the address a runtime
      // frame returns to when libgcc stops right there: do the same.
      if (after_runtime && !in_skipped_code(pc) && count < max) {
        frames[count++] = pc;
        stack_hash.add(pc);
      }
      break;
    }
    if (rule.kind != core::EhabiRuleKind::kFrame) return -1;
    after_runtime = in_skipped_code(pc);
    if (is_return_address && !after_runtime) {
      frames[count++] = pc;
      stack_hash.add(pc);
      if (count == max) break;
    }
    uintptr_t base = rule.base == core::EhabiBase::kR7    ? r7
                     : rule.base == core::EhabiBase::kR11 ? r11
                                                          : sp;
    uintptr_t caller_sp = base + static_cast<intptr_t>(rule.cfa_offset);
    if (caller_sp <= sp || caller_sp - sp > kMaxFrameBytes || (base & 3) != 0) return -1;
    const auto* at = reinterpret_cast<const uintptr_t*>(base);
    // libgcc reports addresses without the Thumb bit (_Unwind_GetIP).
    pc = at[rule.ra_offset / 4] & ~uintptr_t{1};
    if (rule.r7_saved) r7 = at[rule.r7_offset / 4];
    if (rule.r11_saved) r11 = at[rule.r11_offset / 4];
    sp = caller_sp;
    is_return_address = true;
    if (pc == 0) break;
  }
  *hash = stack_hash.finish(static_cast<uint32_t>(count));
  return count;
}

// No memo here: each EHABI step is one cache lookup and a frame-pointer walk.
int fast_unwind_interned(uintptr_t* frames, int max, core::StackDepot* depot, uint32_t* /*out*/ id,
                         uintptr_t /*hook_frame*/) {
  uintptr_t own[core::kMaxFramesLimit];
  if (frames == nullptr) frames = own;
  uint64_t hash = 0;
  int depth = fast_unwind(frames, max, &hash);
  if (depth >= 0) *id = depot->intern_hashed(frames, static_cast<uint32_t>(depth), hash);
  return depth;
}

StackMemoStats stack_memo_stats() {
  return StackMemoStats{};
}

StackMemoStats stack_memo_totals() {
  return StackMemoStats{};
}

// The wrapper of main's frames are not learnt here: each step is one cache lookup anyway.
void set_main_wrapper_frame(uintptr_t) {}

// EHABI tables give no CFA per frame in the form the leak scan's naming needs: stacks are
// named whole on 32-bit ARM.
int walk_frames_from(uintptr_t, uintptr_t, uintptr_t, uintptr_t, FrameSpan*, int, bool* complete) {
  *complete = false;
  return 0;
}

int walk_own_frames(uintptr_t, FrameSpan*, int, bool* complete) {
  *complete = false;
  return 0;
}

void forget_unwind_rules() {
  for (CacheEntry& entry : g_rule_cache) {
    if (entry.pc.load(std::memory_order_relaxed) == 0) continue;
    entry.rule.store(0, std::memory_order_relaxed);
    entry.pc.store(0, std::memory_order_release);
  }
}
#endif  // defined(__arm__)

}  // namespace memtrack::rt
