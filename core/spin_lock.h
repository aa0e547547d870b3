// A small test-and-test-and-set spin lock for short critical sections in the runtime.
// Runtime-safe: no allocation; never held across calls that can re-enter the runtime.
#pragma once

#include <atomic>

#include "core/sys_linux.h"

namespace memtrack::core {

// Tells the CPU it is spinning (saves power, and yields to a sibling hyperthread).
inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ volatile("yield" ::: "memory");
#endif
}

// Thread safe. Not recursive. Zero-initialised state is "unlocked", so a static SpinLock
// works before any constructor has run.
class SpinLock {
 public:
  void lock() {
    for (int spins = 0; locked_.exchange(true, std::memory_order_acquire); ++spins) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins > 64) {
          sys::yield_cpu();
          spins = 0;
        } else {
          cpu_relax();
        }
      }
    }
  }
  bool try_lock() { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() { locked_.store(false, std::memory_order_release); }

  // After fork() the child has one thread; whatever the lock state was, nobody else holds it.
  void reset_after_fork() { locked_.store(false, std::memory_order_relaxed); }

 private:
  std::atomic<bool> locked_{false};
};

class SpinLockGuard {
 public:
  explicit SpinLockGuard(SpinLock& lock) : lock_(lock) { lock_.lock(); }
  ~SpinLockGuard() { lock_.unlock(); }
  SpinLockGuard(const SpinLockGuard&) = delete;
  SpinLockGuard& operator=(const SpinLockGuard&) = delete;

 private:
  SpinLock& lock_;
};

}  // namespace memtrack::core
