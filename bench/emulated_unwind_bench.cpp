// One stack capture at call depth 10 and 30 with the fast unwinder and with libgcc's
// _Unwind_Backtrace, for targets without Google Benchmark (the cross builds, run under
// qemu-user: `qemu-aarch64 -L /usr/aarch64-linux-gnu build/aarch64/bench/...`). Prints the
// time per capture and per frame (the difference of the two depths over 20 frames) and the
// ratio libgcc / fast: under emulation only the ratio means anything. Built -O2 without frame
// pointers, like the programs memtrack runs; the unwinder as in the runtime.
#include <time.h>

#include <cstdint>
#include <cstdio>

#include "runtime/unwind/fast_unwind.h"

namespace {

constexpr int kMaxFrames = 64;
constexpr int kIterations = 2000;

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Nanoseconds per capture, the best of five rounds.
__attribute__((noinline)) double time_captures(bool fast) {
  uintptr_t frames[kMaxFrames];
  double best = 1e18;
  for (int round = 0; round < 5; ++round) {
    uint64_t start = now_ns();
    for (int i = 0; i < kIterations; ++i) {
      uint64_t hash = 0;
      int depth = fast ? memtrack::rt::fast_unwind(frames, kMaxFrames, &hash)
                       : memtrack::rt::reference_unwind(frames, kMaxFrames);
      if (depth < 0) return -1;  // the fast unwinder gave up: nothing to compare
      __asm__ volatile("" : : "r"(depth) : "memory");
    }
    double per = static_cast<double>(now_ns() - start) / kIterations;
    if (per < best) best = per;
  }
  return best;
}

__attribute__((noinline)) double at_depth(int depth, bool fast) {
  if (depth > 1) {
    double result = at_depth(depth - 1, fast);
    __asm__ volatile("" ::: "memory");  // keeps the recursion from becoming a loop
    return result;
  }
  return time_captures(fast);
}

}  // namespace

int main() {
  double fast10 = at_depth(10, true);
  double fast30 = at_depth(30, true);
  double gcc10 = at_depth(10, false);
  double gcc30 = at_depth(30, false);
  if (fast10 < 0 || fast30 < 0) {
    std::printf("the fast unwinder does not capture these stacks here\n");
    return 1;
  }
  double fast_frame = (fast30 - fast10) / 20;
  double gcc_frame = (gcc30 - gcc10) / 20;
  std::printf("capture at depth 10: fast %.0f ns, libgcc %.0f ns (libgcc / fast %.1fx)\n", fast10,
              gcc10, gcc10 / fast10);
  std::printf("capture at depth 30: fast %.0f ns, libgcc %.0f ns (libgcc / fast %.1fx)\n", fast30,
              gcc30, gcc30 / fast30);
  std::printf("per frame: fast %.1f ns, libgcc %.1f ns (libgcc / fast %.1fx)\n", fast_frame,
              gcc_frame, gcc_frame / fast_frame);
  return 0;
}
