// The runtime's own thread, for work done while the program runs: live reports of the
// allocation sites holding blocks older than expire_ms, every report_interval_ms, and
// snapshots (a full leak report) when `memtrack snapshot` sends core::snapshot_signal(). The signal
// handler only records the request and wakes this thread.
// Calls libc (pthread, sigaction, futex) but never malloc; the thread's stack is memtrack's
// own mapping, so leak scans never take its contents for the program's pointers, and it is
// never stopped by them (stop_threads skips it).
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/flags.h"
#include "core/mmap_array.h"
#include "core/result_format.h"
#include "core/snapshot_signal.h"
#include "core/spin_lock.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/alloc_guard.h"
#include "runtime/diag.h"
#include "runtime/leakcheck/leak_report.h"
#include "runtime/leakcheck/runtime_roots.h"
#include "runtime/leakcheck/stop_threads.h"
#include "runtime/link/got_patch.h"
#include "runtime/live/live_thread.h"
#include "runtime/output/profile_output.h"
#include "runtime/output/report.h"
#include "runtime/output/report_text.h"
#include "runtime/output/result_file.h"
#include "runtime/output/settings_file.h"
#include "runtime/record/profile.h"
#include "runtime/record/record.h"
#include "runtime/runtime.h"
#include "runtime/signal_table.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

core::SpinLock g_report_lock;

namespace {

constexpr size_t kThreadStackBytes = size_t{1} << 20;
constexpr uint64_t kNsPerMs = 1000000;
// Ages are kept in ticks of 1/64 of the longer of expire_ms and report_interval_ms, so an
// age is exact to within that tick and 14-bit epochs wrap only after 256 such periods.
constexpr uint64_t kTicksPerPeriod = 64;
namespace result = core::result;

std::atomic<uint32_t> g_wake{0};              // futex word: changed to wake the thread
std::atomic<uint32_t> g_snapshot_request{0};  // latest request id; 0 = none yet
std::atomic<bool> g_stopping{false};          // the process is ending: no new report
bool g_thread_wanted = false;
uint32_t g_handled_request = 0;
uint32_t g_live_sequence = 0;
uint64_t g_start_ns = 0;
uint64_t g_tick_ns = 0;
uint32_t g_threshold_ticks = 0;
// An attached runtime's watcher (the CLI) and diagnostics file; the stack and handle of the
// thread of the attach before, joined and unmapped when attached again.
int g_watcher = 0;
int g_attach_log_fd = -1;
void* g_previous_stack = nullptr;
size_t g_previous_stack_size = 0;
pthread_t g_previous_thread;
core::SpinLock g_previous_lock;  // a CLI's after-detach call may meet the next attach
constexpr uint64_t kWatchNs = 250 * 1000000ull;

void wake_thread() {
  g_wake.fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_wake), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr,
          0);
}

void sleep_until_woken(uint32_t seen, uint64_t timeout_ns) {
  timespec timeout{static_cast<time_t>(timeout_ns / 1000000000),
                   static_cast<long>(timeout_ns % 1000000000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_wake), FUTEX_WAIT_PRIVATE, seen,
          timeout_ns == 0 ? nullptr : &timeout, nullptr, 0);
}

// Async-signal-safe: records the request (sigqueue's value, or 1 for a plain kill).
void on_snapshot_signal(int, siginfo_t* info, void*) {
  int saved_errno = core::sys::get_errno();
  uint32_t request = 1;
  if (info != nullptr && info->si_code == SI_QUEUE) {
    request = static_cast<uint32_t>(info->si_value.sival_int);
  }
  g_snapshot_request.store(request == 0 ? 1 : request, std::memory_order_release);
  wake_thread();
  core::sys::set_errno(saved_errno);
}

// Where a snapshot goes without the CLI's result directory: $TMPDIR or /tmp, where
// `memtrack snapshot` looks (it reads the target's environment).
const char* snapshot_dir() {
  if (g_flags.result_dir[0] != '\0') return g_flags.result_dir;
  const char* tmp = getenv("TMPDIR");
  return tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp";
}

// The address memtrack snapshot --retainers ADDR asks about, which it writes in hex into
// <dir>/snapshot.<pid>.<request>.retainers before it signals; 0 when there is no such file.
uintptr_t requested_block(uint32_t request) {
  core::FixedText<core::kMaxFlagStringLength + 96> path;
  path.str(snapshot_dir()).str("/snapshot.").i64(core::sys::current_pid()).chr('.');
  path.u64(request).str(".retainers");
  int fd = open(path.data(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return 0;
  char text[32] = {};
  ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  unlink(path.data());
  uintptr_t address = 0;
  for (ssize_t i = n > 2 && text[0] == '0' && text[1] == 'x' ? 2 : 0; i < n; ++i) {
    const char c = text[i];
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
    if (digit < 0) break;
    address = address * 16 + static_cast<uintptr_t>(digit);
  }
  return address;
}

void take_snapshot(uint32_t request) {
  core::SpinLockGuard guard(g_report_lock);
  if (g_stopping.load(std::memory_order_acquire)) return;
  LeakReport report;
  report.block().address = requested_block(request);
  if (!build_leak_report(report, 0)) return;
  write_snapshot_file(snapshot_dir(), report, request);
}

struct SiteCounts {
  uint64_t blocks;
  uint64_t bytes;
  // The sampled mode's estimates of what the site's blocks stand for (leak_report.h).
  uint64_t estimated_bytes;
  uint64_t estimated_blocks;  // in kEstimateScale units
};

struct SiteWithEstimate {
  LiveSite site;
  result::EstimateRecord estimate;
  uint64_t sort_bytes;  // the estimate in the sampled mode, the site's bytes otherwise
};

// One pass over the allocation table, one shard lock at a time: the program's allocation
// calls wait at most for the walk of one shard. In the sampled mode each site also estimates
// the old blocks it stands for, and the old blocks without a stack form a site of their own
// (stack id 0, kLiveSiteNotSampled); sites are ordered by their estimates then.
void live_report(uint64_t now_ns) {
  core::SpinLockGuard guard(g_report_lock);
  if (g_stopping.load(std::memory_order_acquire)) return;
  uint32_t now_epoch = g_epoch.load(std::memory_order_relaxed);
  uint32_t stack_count = g_stacks.size();
  uint64_t interval = g_sampling.interval;
  core::MmapArray<SiteCounts> counts;
  core::MmapArray<SiteWithEstimate> sites;
  LiveReport live;
  if (!counts.try_resize(size_t{stack_count} + 1)) {
    diag("warning: cannot map memory for a live report; skipped");
    return;
  }
  g_allocs.for_each_marking_reported([&](const core::AllocRecord& rec) {
    ++live.head.live_blocks;
    live.head.live_bytes += rec.size;
    if (rec.ignored) return false;
    uint32_t age = (now_epoch - rec.epoch) % core::kEpochModulus;
    bool old = rec.reported != 0 || age >= g_threshold_ticks;
    if (!old || rec.stack_id > stack_count) return false;
    SiteCounts& site = counts[rec.stack_id];
    ++site.blocks;
    site.bytes += rec.size;
    if (interval != 0 && rec.stack_id != core::StackDepot::kInvalidId) {
      EstimateShare share = estimate_share(
          rec.size,
          sample_weight(rec.size, interval, g_stacks.get(rec.stack_id), g_sampling.runtime_code));
      site.estimated_bytes += share.bytes;
      site.estimated_blocks += share.scaled_blocks;
    }
    return rec.reported == 0;
  });
  bool ok = true;
  for (uint32_t id = interval != 0 ? 0 : 1; id <= stack_count && ok; ++id) {
    uint64_t freed = g_freed_after_report[id].load(std::memory_order_relaxed);
    if (counts[id].blocks == 0 && freed == 0) continue;
    uint32_t flags = 0;
    if (id == core::StackDepot::kInvalidId) {
      flags = result::kLiveSiteNotSampled;
    } else if (is_runtime_internal(g_stacks.get(id))) {
      flags = result::kLiveSiteRuntimeInternal;
    }
    SiteWithEstimate entry{LiveSite{id, flags, counts[id].blocks, counts[id].bytes, freed},
                           result::EstimateRecord{0, 0}, counts[id].bytes};
    if (interval != 0 && id != core::StackDepot::kInvalidId) {
      entry.estimate.estimated_bytes = counts[id].estimated_bytes;
      entry.estimate.estimated_blocks =
          (counts[id].estimated_blocks + kEstimateScale / 2) / kEstimateScale;
      entry.sort_bytes = entry.estimate.estimated_bytes;
    }
    ok = sites.try_push_back(entry);
  }
  core::heap_sort(sites.data(), sites.size(),
                  [](const SiteWithEstimate& a, const SiteWithEstimate& b) {
                    // The blocks not sampled last, as in the report at exit.
                    bool a_unsampled = a.site.stack_id == core::StackDepot::kInvalidId;
                    bool b_unsampled = b.site.stack_id == core::StackDepot::kInvalidId;
                    if (a_unsampled != b_unsampled) return b_unsampled;
                    return a.sort_bytes != b.sort_bytes ? a.sort_bytes > b.sort_bytes
                                                        : a.site.stack_id < b.site.stack_id;
                  });
  for (size_t i = 0; i < sites.size() && ok; ++i) {
    ok = live.sites.try_push_back(sites[i].site) &&
         (interval == 0 || live.estimates.try_push_back(sites[i].estimate));
  }
  if (!ok) {
    diag("warning: cannot map memory for a live report; skipped");
    return;
  }
  live.head.sequence = ++g_live_sequence;
  live.head.uptime_ms = (now_ns - g_start_ns) / kNsPerMs;
  live.head.expire_ms = static_cast<uint64_t>(g_flags.expire_ms);
  live.head.interval_ms = static_cast<uint64_t>(report_interval_ms());
  if (silenced()) return;
  if (g_flags.result_dir[0] != '\0') {
    // With retainers, each live report also says what holds the blocks: a leak scan, as a
    // snapshot makes (the threads stop for it).
    LeakReport held;
    const bool retained = g_flags.retainers && build_leak_report(held, 0);
    write_live_file(g_flags.result_dir, live, retained ? &held.retention() : nullptr);
  } else {
    write_live_text(live);
  }
}

// The end of an attach: the final report (if the CLI asked), every GOT entry back, the
// settings file and the signal handlers memtrack installed gone, the tables emptied (the
// blocks are the program's allocator's: they stay as they are). The thread returns after.
void detach_now(uint32_t request) {
  {
    core::SpinLockGuard guard(g_report_lock);
    if (request != 0) {
      LeakReport report;
      if (build_leak_report(report, 0)) write_snapshot_file(snapshot_dir(), report, request);
    }
    restore_got_entries();
    g_presence.store(Presence::kDetached, std::memory_order_release);
    g_stopping.store(true, std::memory_order_release);
  }
  // The heap profile ends with the attach: what was recorded is written, with the modules
  // loaded meanwhile, and nothing more is (a call still inside a hook records nothing new).
  if (profiling()) {
    profile_modules_if_changed();
    profile_flush_final();
    g_profile_on.store(false, std::memory_order_release);
  }
  unpublish_settings();
  if (stand_in_handler(core::snapshot_signal()) == on_snapshot_signal) {
    restore_default_action(core::snapshot_signal());
  }
  if (!release_stop_signal()) {
    diag("note: a thread of the program had the leak scan's signal blocked: its handler stays");
  }
  g_allocs.clear();
  diag("detached");
  set_diag_fd(-1);
  if (g_attach_log_fd >= 0) close(g_attach_log_fd);
  g_attach_log_fd = -1;
}

// Whether the CLI that attached is gone (then nobody reads a report).
bool watcher_gone() {
  return g_watcher > 0 && kill(g_watcher, 0) != 0 && errno == ESRCH;
}

void* thread_main(void*) {
  ++t_thread.in_runtime;  // nothing this thread allocates is the program's
  int tid = core::sys::current_tid();
  g_runtime_thread_tid.store(tid, std::memory_order_release);
  syscall(SYS_futex, reinterpret_cast<int*>(&g_runtime_thread_tid), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
  // Named by itself: pthread_setname_np from another thread writes /proc/self/task/TID/comm,
  // and once a process has opened a file of another thread's /proc directory, reaping it
  // costs the parent milliseconds in the kernel (the /proc dentries are walked at release);
  // that was most of what a short program paid under memtrack run.
  prctl(PR_SET_NAME, "memtrack", 0, 0, 0);
  // The lowest priority: on a busy machine the program's threads are not made to wait for
  // a report (Linux applies the nice value of a thread id to that thread alone). Not when
  // attached: there every call of the program pays for the hooks until this thread has
  // written the final report and detached, and at nice 19 beside busy threads that took
  // seconds (an unprivileged thread cannot raise its priority again).
  if (!attached()) setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 19);
  bool live = g_flags.expire_ms > 0;
  uint64_t now = core::sys::monotonic_ns();
  uint64_t next_tick = now + g_tick_ns;
  uint64_t interval_ns = static_cast<uint64_t>(report_interval_ms()) * kNsPerMs;
  uint64_t next_report = now + interval_ns;
  bool sampling = g_flags.profile[0] != '\0';  // heap profile: RSS samples
  uint64_t sample_ns = static_cast<uint64_t>(g_flags.profile_interval_ms) * kNsPerMs;
  uint64_t next_sample = now;
  for (;;) {
    uint32_t seen = g_wake.load(std::memory_order_acquire);
    if (g_stopping.load(std::memory_order_acquire)) return nullptr;
    uint32_t request = g_snapshot_request.load(std::memory_order_acquire);
    if (attached() && (request == core::kDetachRequestId || watcher_gone())) {
      detach_now(request == core::kDetachRequestId ? request : 0);
      return nullptr;
    }
    if (request != 0 && request != g_handled_request) {
      g_handled_request = request;
      take_snapshot(request);
      continue;
    }
    now = core::sys::monotonic_ns();
    if (live) {
      while (now >= next_tick) {
        g_epoch.fetch_add(1, std::memory_order_relaxed);
        next_tick += g_tick_ns;
      }
      if (now >= next_report) {
        live_report(now);
        next_report += interval_ns;
        if (next_report <= now) next_report = now + interval_ns;  // the process was stopped
        continue;
      }
    }
    if (sampling && now >= next_sample) {
      if (profiling()) {
        profile_sample();
        profile_flush_idle();
        profile_modules_if_changed();
      }
      next_sample = now + sample_ns;
    }
    uint64_t wait = 0;  // 0: until woken
    if (live) wait = (next_tick < next_report ? next_tick : next_report) - now;
    if (sampling && (wait == 0 || next_sample - now < wait)) wait = next_sample - now;
    if (attached() && (wait == 0 || wait > kWatchNs)) wait = kWatchNs;
    sleep_until_woken(seen, wait);
  }
}

bool start_thread() {
  RuntimeScope scope;
  // Guard pages at both ends: they catch an overflow, and they keep the kernel from merging
  // the stack with a neighbouring mapping of the program (a thread stack of the program
  // would then look like part of memtrack's memory to the leak scan).
  const size_t page = core::sys::page_size();
  const size_t mapped = kThreadStackBytes + 2 * page;
  auto* base = static_cast<char*>(core::sys::map_pages(mapped));
  if (base == nullptr) return false;
  mprotect(base, page, PROT_NONE);
  mprotect(base + page + kThreadStackBytes, page, PROT_NONE);
  void* stack = base + page;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, stack, kThreadStackBytes);
  // The program's signals must never be delivered to this thread: it blocks them all, and
  // so does its start (pthread_create copies the creator's mask).
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t thread;
  int error = 0;
  {
    AllowAllocation allowed("pthread_create of memtrack's thread");  // glibc callocs its DTV
    error = pthread_create(&thread, &attr, thread_main, nullptr);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  if (error != 0) {
    core::sys::unmap_pages(base, mapped);
    return false;
  }
  if (attached()) {
    // Joined and unmapped after the detach (reap_detached_thread): a thread cannot unmap its
    // own stack.
    core::SpinLockGuard guard(g_previous_lock);
    g_previous_thread = thread;
    g_previous_stack = base;
    g_previous_stack_size = mapped;
  } else {
    pthread_detach(thread);
  }
  return true;
}

// Only where the program left the default action, and hidden from it (signal_table.h).
void install_snapshot_handler() {
  install_hidden_handler(core::snapshot_signal(), on_snapshot_signal);
}

}  // namespace

bool runtime_thread_started() {
  return g_thread_wanted;
}

int report_interval_ms() {
  return g_flags.report_interval_ms > 0 ? g_flags.report_interval_ms : g_flags.expire_ms;
}

void reap_detached_thread() {
  core::SpinLockGuard guard(g_previous_lock);
  if (g_previous_stack == nullptr) return;
  pthread_join(g_previous_thread, nullptr);
  core::sys::unmap_pages(g_previous_stack, g_previous_stack_size);
  g_previous_stack = nullptr;
}

void watch_attach(int watcher, int log_fd) {
  g_watcher = watcher;
  g_attach_log_fd = log_fd;
  reap_detached_thread();  // the thread of the attach before has returned
  g_runtime_thread_tid.store(0, std::memory_order_relaxed);
  g_snapshot_request.store(0, std::memory_order_relaxed);
  g_handled_request = 0;
  g_live_sequence = 0;
  g_stopping.store(false, std::memory_order_release);
}

void start_runtime_thread() {
  bool profile = g_flags.profile[0] != '\0';  // RSS samples for the heap profile
  // Attached, the thread is what detaches.
  if (g_flags.expire_ms <= 0 && !g_flags.snapshot_signal && !profile && !attached()) return;
  g_start_ns = core::sys::monotonic_ns();
  if (g_flags.expire_ms > 0) {
    uint64_t expire_ns = static_cast<uint64_t>(g_flags.expire_ms) * kNsPerMs;
    uint64_t period = static_cast<uint64_t>(report_interval_ms()) * kNsPerMs;
    if (period < expire_ns) period = expire_ns;
    g_tick_ns = period / kTicksPerPeriod;
    if (g_tick_ns < kNsPerMs) g_tick_ns = kNsPerMs;
    g_threshold_ticks = static_cast<uint32_t>((expire_ns + g_tick_ns - 1) / g_tick_ns);
    size_t counters = size_t{core::StackDepot::kMaxStacks} + 1;
    if (g_freed_after_report == nullptr) {  // attached again: the counters of before
      g_freed_after_report = static_cast<std::atomic<uint32_t>*>(
          core::sys::map_pages(counters * sizeof(std::atomic<uint32_t>)));
    } else {
      __builtin_memset(static_cast<void*>(g_freed_after_report), 0,
                       counters * sizeof(std::atomic<uint32_t>));
    }
    if (g_freed_after_report == nullptr) {
      diag("warning: cannot map memory for live reports; they are off");
      g_flags.expire_ms = 0;
    }
  }
  if (g_flags.snapshot_signal) install_snapshot_handler();
  g_thread_wanted = true;
  if (!start_thread()) {
    diag("warning: cannot start memtrack's thread; no live reports or snapshots");
    g_thread_wanted = false;
  }
}

void stop_runtime_thread() {
  g_stopping.store(true, std::memory_order_release);
  if (!g_thread_wanted) return;
  wake_thread();
  // A program that ends right after it started may get here before the thread has run at
  // all. Until it has said who it is, the leak scan's thread stopper would take it for one
  // of the program's threads and wait for an answer it never gives (all its signals are
  // blocked); so wait for its id, which it gives first thing (bounded, in case it was never
  // scheduled: the stopper then gives it up as before).
  uint64_t deadline = core::sys::monotonic_ns() + 100 * kNsPerMs;
  while (g_runtime_thread_tid.load(std::memory_order_acquire) == 0 &&
         core::sys::monotonic_ns() < deadline) {
    timespec slice{0, static_cast<long>(kNsPerMs)};
    syscall(SYS_futex, reinterpret_cast<int*>(&g_runtime_thread_tid), FUTEX_WAIT_PRIVATE, 0, &slice,
            nullptr, 0);
  }
}

void runtime_thread_fork_child() {
  g_report_lock.reset_after_fork();
  g_runtime_thread_tid.store(0, std::memory_order_relaxed);
  g_live_sequence = 0;
  // The child has only the forking thread: start a new runtime thread for it (fork's child
  // handlers run with libc's locks reset, where creating a thread is safe).
  if (!g_thread_wanted) return;
  if (g_stopping.load(std::memory_order_relaxed) || presence() == Presence::kDetached) {
    g_thread_wanted = false;  // none to wait for at exit
  } else if (!start_thread()) {
    diag("warning: cannot start memtrack's thread in the child; no live reports there");
    g_thread_wanted = false;
  }
}

}  // namespace memtrack::rt
