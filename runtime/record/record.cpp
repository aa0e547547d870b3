// Recording of allocations and frees: stack capture, stack depot, allocation table, counters.
// Runtime-safe: no malloc; the unwinder runs with no runtime lock held.
#include "runtime/record/record.h"

#include "core/sys_linux.h"
#include "runtime/diag.h"
#include "runtime/leakcheck/leak_report.h"
#include "runtime/record/guard_state.h"
#include "runtime/record/peak.h"
#include "runtime/record/profile.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"
#include "runtime/unwind/unwind.h"

namespace memtrack::rt {

std::atomic<uint32_t> g_epoch{0};
std::atomic<uint32_t>* g_freed_after_report = nullptr;
core::StackTotals g_stack_totals;
std::atomic<bool> g_stack_totals_incomplete{false};

namespace {

std::atomic<bool> g_warned_table_full{false};

void count_by_stack(uint32_t stack_id, uint64_t size) {
  uint64_t blocks = 1;
  uint64_t bytes = size;
  if (g_sampling.interval != 0) {  // as the leak report's estimates (leak_report.h)
    EstimateShare share = estimate_share(
        size,
        sample_weight(size, g_sampling.interval, g_stacks.get(stack_id), g_sampling.runtime_code));
    blocks = share.scaled_blocks;
    bytes = share.bytes;
  }
  if (t_thread.totals_shard == 0) t_thread.totals_shard = 1 + g_stack_totals.next_shard();
  if (!g_stack_totals.add(t_thread.totals_shard - 1, stack_id, blocks, bytes)) {
    g_stack_totals_incomplete.store(true, std::memory_order_relaxed);
  }
}

}  // namespace

Sampling g_sampling;

uint64_t run_seed() {
  if (g_flags.sample_seed != 0) return static_cast<uint64_t>(g_flags.sample_seed);
  // A different seed each run: the clock and the pid, mixed.
  uint64_t state =
      core::sys::monotonic_ns() ^ (uint64_t{static_cast<uint32_t>(core::sys::current_pid())} << 32);
  return core::split_mix64(state) | 1;
}

void init_sampling() {
  g_sampling.interval = static_cast<uint64_t>(g_flags.sample_bytes);
  if (g_sampling.interval == 0) return;
  g_sampling.runtime_code = find_system_runtime_code();
  g_sampling.seed = run_seed();
  g_sampling.fast_path = !kAttachRuntime && g_allocs.heap().enabled();
}

uint32_t capture_allocation_stack(uintptr_t hook_frame) {
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  int depth = 0;
  uint32_t stack_id = capture_stack_id(nullptr, g_flags.max_frames, &depth, hook_frame);
  core::sys::set_errno(saved_errno);
  return stack_id;
}

void record_allocation(void* ptr, size_t size, core::AllocFamily family, bool aligned,
                       uint32_t stack_id) {
  RuntimeScope scope;
  // A hook entered before the detach and returning after it: nobody tracks the block now,
  // and a record left behind would outlive its block.
  if (kAttachRuntime && !attached()) return;
  int saved_errno = core::sys::get_errno();
  core::AllocRecord rec;
  rec.ptr = reinterpret_cast<uintptr_t>(ptr);
  rec.size = size;
  rec.stack_id = stack_id;
  rec.family = family;
  rec.aligned = aligned ? 1 : 0;
  // Between __lsan_disable and __lsan_enable this thread's blocks are not leaks.
  rec.ignored = t_thread.lsan_disabled > 0 ? 1 : 0;
  rec.epoch = static_cast<uint16_t>(g_epoch.load(std::memory_order_relaxed));
  if (g_flags.alloc_totals && stack_id != core::StackDepot::kInvalidId) {
    count_by_stack(stack_id, size);
  }
  if (guarded_owns(ptr)) {
    note_guarded_stack(rec.ptr, stack_id);
  } else if (g_heap_check.full) {
    note_redzoned_stack(rec.ptr, stack_id);
  }
  if (g_allocs.try_insert(rec, thread_heap())) {
    note_live_bytes(static_cast<int64_t>(size));
    if (profiling()) profile_alloc(rec.ptr, size, stack_id);
  } else {
    g_stats.untracked_allocations.fetch_add(1, std::memory_order_relaxed);
    g_stats.untracked_bytes.fetch_add(size, std::memory_order_relaxed);
    warn_once(g_warned_table_full,
              "warning: the allocation table cannot grow (max_metadata_mb reached or mmap "
              "failed); allocations that do not fit are not tracked and the report counts them");
  }
  core::sys::set_errno(saved_errno);
}

// The runtime scope also covers signal handlers that interrupt us while a shard lock is held:
// their allocation calls go straight to the real allocator instead of waiting on that lock.
bool record_free(void* ptr, core::AllocRecord* out, uint64_t* erase_sequence, bool* deallocated) {
  RuntimeScope scope;
  auto address = reinterpret_cast<uintptr_t>(ptr);
  bool erased = deallocated != nullptr
                    ? g_allocs.try_erase_and_deallocate(address, out, erase_sequence, thread_heap(),
                                                        deallocated)
                    : g_allocs.try_erase(address, out, erase_sequence, thread_heap());
  if (!erased) return false;
  note_live_bytes(-static_cast<int64_t>(out->size));
  if (profiling()) profile_free(out->ptr);
  if (out->reported) note_freed_after_report(out->stack_id);
  return true;
}

void* allocate_unsampled(size_t size, size_t alignment, core::AllocFamily family, bool aligned) {
  RuntimeScope scope;  // a signal handler's allocation must not enter this thread's lists
  core::AllocRecord rec;
  rec.size = size;
  rec.family = family;
  rec.aligned = aligned ? 1 : 0;
  rec.ignored = t_thread.lsan_disabled > 0 ? 1 : 0;
  rec.epoch = static_cast<uint16_t>(g_epoch.load(std::memory_order_relaxed));
  // Keeps errno, as try_allocate.
  void* p = g_allocs.heap().try_allocate_recorded(size, alignment, rec, thread_heap());
  if (p == nullptr) return nullptr;
  note_live_bytes(static_cast<int64_t>(size));
  if (profiling()) profile_alloc(reinterpret_cast<uintptr_t>(p), size, 0);
  return p;
}

bool free_unsampled(void* ptr, core::AllocFamily family, bool aligned) {
  RuntimeScope scope;
  uint64_t size = 0;
  auto address = reinterpret_cast<uintptr_t>(ptr);
  if (!g_allocs.heap().try_free_unstacked(address, family, aligned, thread_heap(), &size)) {
    return false;
  }
  note_live_bytes(-static_cast<int64_t>(size));
  if (profiling()) profile_free(address);
  return true;
}

void restore_record(const core::AllocRecord& rec) {
  RuntimeScope scope;
  // Re-inserting a record that was just erased needs no new slot in practice; if the shard
  // shrank its free space meanwhile and mmap fails, count the block as untracked.
  if (g_allocs.try_restore(rec, thread_heap())) {
    note_live_bytes(static_cast<int64_t>(rec.size));
    if (profiling()) profile_alloc(rec.ptr, rec.size, rec.stack_id);
  } else {
    g_stats.untracked_allocations.fetch_add(1, std::memory_order_relaxed);
    g_stats.untracked_bytes.fetch_add(rec.size, std::memory_order_relaxed);
  }
}

void note_freed_after_report(uint32_t stack_id) {
  if (g_freed_after_report != nullptr && stack_id <= core::StackDepot::kMaxStacks) {
    g_freed_after_report[stack_id].fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace memtrack::rt
