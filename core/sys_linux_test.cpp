// Tests of the system call wrappers (core/sys_linux.h) that have behaviour of their own.
#include "core/sys_linux.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace memtrack::core::sys {
namespace {

TEST(SysLinuxTest, ThreadCountFollowsThreads) {
  int before = thread_count();
  ASSERT_GE(before, 1);
  std::atomic<bool> done{false};
  std::atomic<bool> started{false};
  std::thread other([&] {
    started = true;
    while (!done) std::this_thread::yield();
  });
  while (!started) std::this_thread::yield();
  EXPECT_EQ(thread_count(), before + 1);
  done = true;
  other.join();
  // A joined thread may still be in the kernel's exit path, listed for a moment.
  for (int i = 0; i < 1000 && thread_count() != before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(thread_count(), before);
}

}  // namespace
}  // namespace memtrack::core::sys
