// Test-only helpers for the multi-threaded stress tests: a fixed number of threads running
// fixed work lists (deterministic, no sleeps, no timing), with the work shrunk under
// sanitizers, which slow every memory access by 5-15x.
#pragma once

#include <cstddef>
#include <thread>
#include <vector>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define MEMTRACK_STRESS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define MEMTRACK_STRESS_SANITIZED 1
#endif
#endif

namespace memtrack::stress {

#ifdef MEMTRACK_STRESS_SANITIZED
inline constexpr size_t kWorkDivisor = 2;
#else
inline constexpr size_t kWorkDivisor = 1;
#endif

// Threads per stress test: enough to contend on 2-core CI machines, few enough for TSan.
inline constexpr size_t kThreads = 8;

// `full` units of work, shrunk under sanitizers (never below 1).
constexpr size_t scaled(size_t full) {
  return full / kWorkDivisor > 0 ? full / kWorkDivisor : 1;
}

// Runs body(t) on threads t = 0 .. count-1 and joins them all.
template <typename Body>
void run_threads(size_t count, Body body) {
  std::vector<std::thread> threads;
  threads.reserve(count);
  for (size_t t = 0; t < count; ++t) threads.emplace_back(body, t);
  for (std::thread& thread : threads) thread.join();
}

}  // namespace memtrack::stress
