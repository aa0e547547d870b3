// Thread stopping with a real-time signal. Calls libc (sigaction, syscall, open) but never
// malloc. The handler stays installed once used: a thread that had the signal blocked may
// take it late, and the default action of a real-time signal would kill the process.
#include "runtime/leakcheck/stop_threads.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/runtime.h"
#include "runtime/signal_table.h"

namespace memtrack::rt {
namespace {

// SIGRTMAX-3: glibc uses the lowest real-time signals itself, programs mostly SIGRTMIN+n.
int stop_signal() {
  return SIGRTMAX - 3;
}

StoppedThread* g_slots = nullptr;
std::atomic<size_t> g_slot_count{0};
std::atomic<bool> g_active{false};
std::atomic<bool> g_release{false};
std::atomic<int> g_parked{0};
// A thread was sent the signal and did not take it (blocked, or waited out): it may take it
// any time later, so the handler must stay.
std::atomic<bool> g_may_be_pending{false};

void on_stop_signal(int, siginfo_t*, void* context) {
  if (!g_active.load(std::memory_order_acquire)) return;
  int tid = core::sys::current_tid();
  StoppedThread* slot = nullptr;
  for (size_t i = 0; i < g_slot_count.load(std::memory_order_acquire); ++i) {
    if (g_slots[i].tid == tid) slot = &g_slots[i];
  }
  if (slot == nullptr) return;
  __atomic_add_fetch(&slot->entered, 1, __ATOMIC_ACQ_REL);
  // Inside the runtime this thread may hold a table lock: do not park here; the stopper
  // asks again a moment later.
  if (in_runtime()) {
    __atomic_add_fetch(&slot->left, 1, __ATOMIC_RELEASE);
    return;
  }
  const auto* uc = static_cast<const ucontext_t*>(context);
  context_registers(uc, slot->regs);
  slot->sp = context_sp(uc);
  slot->thread_pointer = reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
  g_parked.fetch_add(1, std::memory_order_acq_rel);
  __atomic_store_n(&slot->captured, true, __ATOMIC_RELEASE);
  while (!g_release.load(std::memory_order_acquire)) core::sys::yield_cpu();
  __atomic_add_fetch(&slot->left, 1, __ATOMIC_RELEASE);  // before resume_all may reuse the slot
  g_parked.fetch_sub(1, std::memory_order_acq_rel);
}

bool install_handler() {
  struct sigaction old {};
  if (real_sigaction(stop_signal(), nullptr, &old) != 0) return false;
  if ((old.sa_flags & SA_SIGINFO) != 0 && old.sa_sigaction == on_stop_signal) return true;
  if (old.sa_handler != SIG_DFL) return false;  // the program uses this signal
  struct sigaction act {};
  act.sa_sigaction = on_stop_signal;
  act.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&act.sa_mask);
  return real_sigaction(stop_signal(), &act, nullptr) == 0;
}

// Reads the thread ids from /proc/self/task with getdents64 (opendir would malloc).
size_t list_threads(StoppedThread* out, size_t max, int self) {
  int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t count = 0;
  // memtrack's own thread holds none of the program's pointers and never leaves the runtime.
  int runtime_thread = g_runtime_thread_tid.load(std::memory_order_acquire);
  alignas(8) char buffer[4096];
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    for (long pos = 0; pos < n;) {
      auto* entry = reinterpret_cast<struct dirent64*>(buffer + pos);
      pos += entry->d_reclen;
      int tid = 0;
      const char* name = entry->d_name;
      if (*name < '0' || *name > '9') continue;
      for (; *name >= '0' && *name <= '9'; ++name) tid = tid * 10 + (*name - '0');
      if (tid == self || tid == runtime_thread || count == max) continue;
      out[count] = StoppedThread{};
      out[count].tid = tid;
      ++count;
    }
  }
  close(fd);
  return count;
}

// True if the thread cannot take the stop signal now: it has it blocked (memtrack's own
// thread, a program thread that waits in sigwait), or it is exiting (a zombie thread or one
// in the kernel's exit path, which /proc/self/task still lists for a moment). Such a thread
// holds no live value a scan could miss by reading its stack whole, so it is not waited for.
// Reads /proc/self/task/TID/status without malloc.
bool cannot_answer(int tid) {
  core::FixedText<64> path;
  path.str("/proc/self/task/").i64(tid).str("/status");
  int fd = open(path.data(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // gone
  char buffer[2048];
  ssize_t n = read(fd, buffer, sizeof(buffer) - 1);
  close(fd);
  if (n <= 0) return true;
  buffer[n] = '\0';
  const char* state = strstr(buffer, "\nState:\t");
  if (state != nullptr && (state[8] == 'Z' || state[8] == 'X')) return true;
  const char* blocked = strstr(buffer, "\nSigBlk:\t");
  if (blocked == nullptr) return false;
  // A 64-bit hexadecimal mask, signal N at bit N-1.
  uint64_t mask = 0;
  for (const char* c = blocked + 9; *c != '\n' && *c != '\0'; ++c) {
    int digit = *c >= '0' && *c <= '9' ? *c - '0' : (*c >= 'a' && *c <= 'f' ? *c - 'a' + 10 : -1);
    if (digit < 0) break;
    mask = mask << 4 | static_cast<uint64_t>(digit);
  }
  return (mask >> (stop_signal() - 1) & 1) != 0;
}

// Whether the thread cannot take the stop signal: its mask blocks it, and that is not
// because it is inside the stop handler now or has passed through it since the last check
// (every signal is blocked while the handler runs).
bool blocked_since_last_check(StoppedThread& t) {
  uint32_t entered = __atomic_load_n(&t.entered, __ATOMIC_ACQUIRE);
  bool blocked = cannot_answer(t.tid);
  bool in_handler = entered != __atomic_load_n(&t.left, __ATOMIC_ACQUIRE);
  bool passed = entered != t.entered_at_check;
  t.entered_at_check = entered;
  return blocked && !in_handler && !passed;
}

constexpr uint64_t kBlockedCheckNs = 2000000;

}  // namespace

void ThreadStopper::stop_all() {
  count_ = 0;
  waited_out_ = 0;
  if (!install_handler()) {
    diag(
        "warning: cannot stop other threads for the leak scan (signal in use); their stacks "
        "and registers are scanned as they are");
  }
  int pid = core::sys::current_pid();
  count_ = list_threads(threads_, kMaxThreads, core::sys::current_tid());
  g_slots = threads_;
  g_release.store(false, std::memory_order_release);
  g_slot_count.store(count_, std::memory_order_release);
  g_active.store(true, std::memory_order_release);
  // Ask every thread, then ask again those not parked yet (inside the runtime, or the
  // signal was merged with a pending one). A thread that has exited or cannot take the
  // signal is given up at once; one that can but does not answer, after about a second.
  uint64_t deadline = core::sys::monotonic_ns() + 1000000000ull;
  for (;;) {
    size_t waiting = 0;
    for (size_t i = 0; i < count_; ++i) {
      StoppedThread& t = threads_[i];
      if (t.given_up || __atomic_load_n(&t.captured, __ATOMIC_ACQUIRE)) continue;
      // Asked before this round's signal, and believed only twice in a row, 2 ms apart at
      // least: a thread that is passing through a handler (every signal blocked while it
      // runs, as in a thread that blocks them all) would otherwise be given up, its stack
      // read while it runs. By time, not by round: on a loaded machine a round's yields take
      // hundreds of milliseconds, and a check every eighth round came too late.
      uint64_t now = core::sys::monotonic_ns();
      if (now - t.checked_ns >= kBlockedCheckNs) {
        t.checked_ns = now;
        t.blocked_checks = blocked_since_last_check(t) ? t.blocked_checks + 1 : 0;
        if (t.blocked_checks >= 2) {
          t.given_up = true;
          g_may_be_pending.store(true, std::memory_order_relaxed);
          continue;
        }
      }
      if (syscall(SYS_tgkill, pid, t.tid, stop_signal()) != 0) {
        t.given_up = true;  // it has exited
        continue;
      }
      ++waiting;
    }
    if (waiting == 0) break;
    if (core::sys::monotonic_ns() > deadline) {
      waited_out_ = waiting;
      g_may_be_pending.store(true, std::memory_order_relaxed);
      break;
    }
    for (int spin = 0; spin < 100; ++spin) core::sys::yield_cpu();
  }
}

bool release_stop_signal() {
  struct sigaction old {};
  if (real_sigaction(stop_signal(), nullptr, &old) != 0) return false;
  if ((old.sa_flags & SA_SIGINFO) == 0 || old.sa_sigaction != on_stop_signal) return true;
  if (g_may_be_pending.load(std::memory_order_relaxed)) return false;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  return real_sigaction(stop_signal(), &dfl, nullptr) == 0;
}

void ThreadStopper::resume_all() {
  g_release.store(true, std::memory_order_release);
  uint64_t deadline = core::sys::monotonic_ns() + 1000000000ull;
  while (g_parked.load(std::memory_order_acquire) > 0 && core::sys::monotonic_ns() < deadline) {
    core::sys::yield_cpu();
  }
  g_active.store(false, std::memory_order_release);
}

}  // namespace memtrack::rt
