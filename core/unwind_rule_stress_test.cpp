// Unwind rules computed from 8 threads at once over the real .eh_frame tables of this test
// binary, libc and libstdc++, as the runtime's fast unwinder computes them from every thread
// that allocates: the parser keeps no shared state, so every thread gets the rules one
// thread gets. (The unwinder's rule cache lives in the runtime and is not reachable from a
// unit test.) Run under ThreadSanitizer by the tsan preset.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <vector>

#include "core/stress_testing.h"
#include "core/unwind_rule.h"

namespace memtrack::core {
namespace {

using stress::kThreads;

struct CodeAddress {
  const uint8_t* eh_frame_hdr;
  uintptr_t pc;
};

// Every byte of the first `bytes` of a few functions in three modules.
std::vector<CodeAddress> sample_addresses(size_t bytes) {
  const void* functions[] = {
      reinterpret_cast<const void*>(&sample_addresses),
      reinterpret_cast<const void*>(&::qsort),
      reinterpret_cast<const void*>(&::getenv),
      reinterpret_cast<const void*>(&std::terminate),
  };
  std::vector<CodeAddress> out;
  for (const void* function : functions) {
    dl_find_object object{};
    if (_dl_find_object(const_cast<void*>(function), &object) != 0) continue;
    for (size_t i = 0; i < bytes; ++i) {
      out.push_back({static_cast<const uint8_t*>(object.dlfo_eh_frame),
                     reinterpret_cast<uintptr_t>(function) + i});
    }
  }
  return out;
}

uint64_t rule_at(const CodeAddress& at, bool is_return_address) {
  return compute_unwind_rule(at.eh_frame_hdr, at.pc, is_return_address).pack();
}

TEST(UnwindRuleStressTest, ThreadsComputeTheRulesOneThreadComputes) {
  const std::vector<CodeAddress> addresses = sample_addresses(stress::scaled(512));
  ASSERT_GE(addresses.size(), 3 * stress::scaled(512));
  std::vector<uint64_t> expected;
  size_t frames = 0;
  for (const CodeAddress& at : addresses) {
    expected.push_back(rule_at(at, (at.pc & 1) != 0));
    frames += UnwindRule::unpack(expected.back()).kind == UnwindRuleKind::kFrame ? 1 : 0;
  }
  EXPECT_GT(frames, addresses.size() / 2);  // real tables: most addresses have a plain rule

  std::vector<size_t> differences(kThreads, 0);
  stress::run_threads(kThreads, [&](size_t t) {
    for (size_t pass = 0; pass < 4; ++pass) {
      for (size_t n = 0; n < addresses.size(); ++n) {
        size_t i = (n * (2 * t + 1) + pass * 13) % addresses.size();
        if (rule_at(addresses[i], (addresses[i].pc & 1) != 0) != expected[i]) ++differences[t];
      }
    }
  });
  for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(differences[t], 0u) << "thread " << t;
}

}  // namespace
}  // namespace memtrack::core
