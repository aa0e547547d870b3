// Live and peak byte counts without a shared counter on every allocation call. Each thread
// adds its net change to a thread-local delta and publishes it to one process-wide atomic
// only when it passes ±kPublishBytes, together with the highest value the delta reached since
// its last publication. The peak is therefore exact while one thread allocates, and within
// kPublishBytes per thread otherwise. Runtime-safe: no malloc (pthread_setspecific with an
// early key stores into the thread descriptor).
#include "runtime/record/peak.h"

#include <pthread.h>

#include "core/sys_linux.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {
namespace {

pthread_key_t g_exit_key;
bool g_have_exit_key = false;

void raise_peak(int64_t candidate) {
  if (candidate <= 0) return;
  auto value = static_cast<uint64_t>(candidate);
  uint64_t peak = g_stats.peak_live_bytes.load(std::memory_order_relaxed);
  while (value > peak &&
         !g_stats.peak_live_bytes.compare_exchange_weak(peak, value, std::memory_order_relaxed)) {
  }
}

void publish() {
  int64_t before =
      g_stats.published_live_bytes.fetch_add(t_thread.live_delta, std::memory_order_relaxed);
  raise_peak(before + t_thread.live_high);
  t_thread.live_delta = 0;
  t_thread.live_high = 0;
}

void publish_at_thread_exit(void*) {
  publish();
}

}  // namespace

void init_peak_tracking() {
  g_have_exit_key = pthread_key_create(&g_exit_key, publish_at_thread_exit) == 0;
}

void publish_when_thread_exits() {
  if (!t_thread.exit_hook_set && g_have_exit_key) {
    // Any non-null value makes the key's destructor run when this thread exits.
    t_thread.exit_hook_set = pthread_setspecific(g_exit_key, &t_thread.exit_hook_set) == 0;
  }
}

void publish_live_bytes() {
  publish_when_thread_exits();
  publish();
}

StatsSnapshot snapshot_stats() {
  core::AllocTotals totals = g_allocs.totals();
  // The calling thread's unpublished change counts too (at exit it is usually the last).
  raise_peak(g_stats.published_live_bytes.load(std::memory_order_relaxed) + t_thread.live_high);
  StatsSnapshot s{};
  s.untracked_allocations = g_stats.untracked_allocations.load(std::memory_order_relaxed);
  s.untracked_bytes = g_stats.untracked_bytes.load(std::memory_order_relaxed);
  s.allocations = totals.inserted + s.untracked_allocations;
  s.frees = totals.erased;
  s.bytes_allocated = totals.inserted_bytes + s.untracked_bytes;
  s.live_bytes = totals.live_bytes;
  s.peak_bytes = g_stats.peak_live_bytes.load(std::memory_order_relaxed);
  if (attached()) {
    uint64_t since = core::sys::monotonic_ns() - g_stats.attach_ns.load(std::memory_order_relaxed);
    s.attached_ms = since / 1000000 > 0 ? since / 1000000 : 1;  // 0 means "not attached"
    s.preexisting_bytes = g_stats.preexisting_bytes.load(std::memory_order_relaxed);
    s.preexisting_frees = g_stats.preexisting_frees.load(std::memory_order_relaxed);
    s.preexisting_freed_bytes = g_stats.preexisting_freed_bytes.load(std::memory_order_relaxed);
  }
  // Unpublished deltas of other threads can leave the peak below the live bytes.
  if (s.peak_bytes < s.live_bytes) s.peak_bytes = s.live_bytes;
  return s;
}

}  // namespace memtrack::rt
