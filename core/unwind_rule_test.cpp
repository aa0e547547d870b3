// Unit tests of the unwind rule parser's bounds: rules computed inside the module's range
// equal the trusted ones, and tables cut short give kUnsupported without reading past the
// cut (AddressSanitizer checks that in the asan preset).
#include "core/unwind_rule.h"

#include <gtest/gtest.h>
#include <link.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace memtrack::core {
namespace {

dl_find_object module_of(const void* code) {
  dl_find_object object{};
  EXPECT_EQ(_dl_find_object(const_cast<void*>(code), &object), 0);
  return object;
}

TEST(UnwindRuleTest, RulesInsideTheModulesRangeEqualTrustedRules) {
  const void* functions[] = {reinterpret_cast<const void*>(&module_of),
                             reinterpret_cast<const void*>(&::qsort)};
  size_t frames = 0;
  for (const void* function : functions) {
    dl_find_object object = module_of(function);
    const auto* hdr = static_cast<const uint8_t*>(object.dlfo_eh_frame);
    ASSERT_NE(hdr, nullptr);
    ReadableRange range{reinterpret_cast<uintptr_t>(object.dlfo_map_start),
                        reinterpret_cast<uintptr_t>(object.dlfo_map_end)};
    for (uintptr_t pc = reinterpret_cast<uintptr_t>(function), end = pc + 256; pc < end; ++pc) {
      UnwindRule trusted = compute_unwind_rule(hdr, pc, true);
      UnwindRule bounded = compute_unwind_rule(hdr, pc, true, range);
      EXPECT_EQ(bounded.pack(), trusted.pack()) << std::hex << pc;
      frames += bounded.kind == UnwindRuleKind::kFrame ? 1 : 0;
    }
  }
  EXPECT_GT(frames, 256u);
}

// The first `size` bytes of this binary's .eh_frame_hdr, alone in a buffer of that size: the
// pointers to .eh_frame and the FDEs lead outside it.
TEST(UnwindRuleTest, TablesCutShortGiveUnsupported) {
  dl_find_object object = module_of(reinterpret_cast<const void*>(&module_of));
  const auto* hdr = static_cast<const uint8_t*>(object.dlfo_eh_frame);
  uintptr_t pc = reinterpret_cast<uintptr_t>(&module_of) + 4;
  for (size_t size : {1, 3, 4, 7, 8, 11, 12, 16, 20, 64, 256}) {
    std::unique_ptr<uint8_t[]> copy(new uint8_t[size]);
    memcpy(copy.get(), hdr, size);
    uintptr_t base = reinterpret_cast<uintptr_t>(copy.get());
    UnwindRule rule = compute_unwind_rule(copy.get(), pc, false, ReadableRange{base, base + size});
    EXPECT_EQ(rule.kind, UnwindRuleKind::kUnsupported) << size;
  }
}

TEST(UnwindRuleTest, AnEmptyRangeReadsNothing) {
  dl_find_object object = module_of(reinterpret_cast<const void*>(&module_of));
  const auto* hdr = static_cast<const uint8_t*>(object.dlfo_eh_frame);
  uintptr_t at = reinterpret_cast<uintptr_t>(hdr);
  UnwindRule rule = compute_unwind_rule(hdr, at, false, ReadableRange{at, at});
  EXPECT_EQ(rule.kind, UnwindRuleKind::kUnsupported);
}

}  // namespace
}  // namespace memtrack::core
