// Unit tests of the EHABI rule reader on hand-made tables (the emulated armhf suite checks it
// against libgcc on real ones): the compact and table forms, "vsp = r7", EXIDX_CANTUNWIND,
// addresses no entry covers, opcodes it does not model, and the packed form.
#include "core/ehabi_rule.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace memtrack::core {
namespace {

// Code and tables in one object, so every prel31 distance is small.
struct Module {
  uint8_t code[64];
  uint32_t exidx[8];
  uint32_t extab[2];
};

uint32_t prel31_to(const void* from, const void* to) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(to) -
                               reinterpret_cast<uintptr_t>(from)) &
         0x7fffffffu;
}

class EhabiRuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Function 0 at code[0]: push {r4-r7, lr}; add r7, sp, #12 (gcc's Thumb frame).
    m_.exidx[0] = prel31_to(&m_.exidx[0], &m_.code[0]);
    m_.exidx[1] = 0x8097abb0u;  // compact 0: vsp = r7; pop {r4-r7, r14}; finish
    // Function 1 at code[16]: EXIDX_CANTUNWIND.
    m_.exidx[2] = prel31_to(&m_.exidx[2], &m_.code[16]);
    m_.exidx[3] = 1;
    // Function 2 at code[32]: compact model 1 in .ARM.extab: pop {r7, r14}; vsp += 8.
    m_.exidx[4] = prel31_to(&m_.exidx[4], &m_.code[32]);
    m_.exidx[5] = prel31_to(&m_.exidx[5], &m_.extab[0]);
    m_.extab[0] = 0x81008408u;  // index 1, no extra word, 0x84 0x08: pop {r7, r14}
    m_.extab[1] = 0;
    // Function 3 at code[48]: vsp = r13, which is not modelled.
    m_.exidx[6] = prel31_to(&m_.exidx[6], &m_.code[48]);
    m_.exidx[7] = 0x809db0b0u;
  }
  EhabiRule rule_at(int offset, bool is_return_address) {
    auto begin = reinterpret_cast<uintptr_t>(&m_);
    return compute_ehabi_rule(m_.exidx, 4, reinterpret_cast<uintptr_t>(&m_.code[offset]),
                              is_return_address, begin, begin + sizeof(m_));
  }
  Module m_{};
};

TEST_F(EhabiRuleTest, CompactEntryWithThumbFramePointer) {
  EhabiRule rule = rule_at(4, false);
  ASSERT_EQ(rule.kind, EhabiRuleKind::kFrame);
  EXPECT_EQ(rule.base, EhabiBase::kR7);
  EXPECT_EQ(rule.cfa_offset, 20);  // five registers popped
  EXPECT_EQ(rule.ra_offset, 16);   // lr, the last one
  EXPECT_TRUE(rule.r7_saved);
  EXPECT_EQ(rule.r7_offset, 12);
  EXPECT_FALSE(rule.r11_saved);
}

TEST_F(EhabiRuleTest, ReturnAddressUsesTheCallInstruction) {
  // A return address just past function 0's end belongs to the call inside it.
  EXPECT_EQ(rule_at(17, true).kind, EhabiRuleKind::kFrame);
  EXPECT_EQ(rule_at(17, false).kind, EhabiRuleKind::kOutermost);
}

TEST_F(EhabiRuleTest, CantUnwindIsTheOutermostFrame) {
  EXPECT_EQ(rule_at(20, false).kind, EhabiRuleKind::kOutermost);
}

TEST_F(EhabiRuleTest, TableEntryInExtab) {
  EhabiRule rule = rule_at(40, true);
  ASSERT_EQ(rule.kind, EhabiRuleKind::kFrame);
  EXPECT_EQ(rule.base, EhabiBase::kSp);
  EXPECT_EQ(rule.cfa_offset, 8);
  EXPECT_EQ(rule.r7_offset, 0);
  EXPECT_EQ(rule.ra_offset, 4);
}

TEST_F(EhabiRuleTest, UnmodelledOpcodeAndUncoveredAddressAreUnsupported) {
  EXPECT_EQ(rule_at(50, false).kind, EhabiRuleKind::kUnsupported);
  auto begin = reinterpret_cast<uintptr_t>(&m_);
  EXPECT_EQ(compute_ehabi_rule(m_.exidx, 4, begin, false, begin, begin + sizeof(m_)).kind,
            EhabiRuleKind::kFrame);  // code[0] itself
  EXPECT_EQ(compute_ehabi_rule(m_.exidx, 4, begin - 4, false, begin, begin + sizeof(m_)).kind,
            EhabiRuleKind::kUnsupported);  // before every entry
}

TEST_F(EhabiRuleTest, TablesOutsideTheReadableRangeAreNotRead) {
  auto begin = reinterpret_cast<uintptr_t>(&m_);
  EXPECT_EQ(compute_ehabi_rule(m_.exidx, 4, reinterpret_cast<uintptr_t>(&m_.code[40]), true, begin,
                               reinterpret_cast<uintptr_t>(&m_.extab[0]))
                .kind,
            EhabiRuleKind::kUnsupported);
}

TEST(EhabiRulePackTest, RoundTripsNegativeAndLargeOffsets) {
  EhabiRule rule;
  rule.kind = EhabiRuleKind::kFrame;
  rule.base = EhabiBase::kR11;
  rule.r7_saved = true;
  rule.r11_saved = true;
  rule.cfa_offset = EhabiRule::kMaxCfaOffset;
  rule.ra_offset = -EhabiRule::kMaxSlotOffset;
  rule.r7_offset = -8;
  rule.r11_offset = 1024;
  EhabiRule back = EhabiRule::unpack(rule.pack());
  EXPECT_EQ(back.kind, rule.kind);
  EXPECT_EQ(back.base, rule.base);
  EXPECT_EQ(back.r7_saved, rule.r7_saved);
  EXPECT_EQ(back.r11_saved, rule.r11_saved);
  EXPECT_EQ(back.cfa_offset, rule.cfa_offset);
  EXPECT_EQ(back.ra_offset, rule.ra_offset);
  EXPECT_EQ(back.r7_offset, rule.r7_offset);
  EXPECT_EQ(back.r11_offset, rule.r11_offset);
  EXPECT_NE(rule.pack(), 0u);
}

}  // namespace
}  // namespace memtrack::core
