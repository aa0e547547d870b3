// Unwind rules for 32-bit ARM, computed from a module's EHABI index table (.ARM.exidx, with
// .ARM.extab): where the caller's stack pointer, return address, r7 and r11 (the Thumb and ARM
// frame pointers) are for one code address. The 32-bit ARM counterpart of core/unwind_rule.h,
// read the way libgcc's EHABI unwinder reads the same tables, so that a stack walked with
// cached rules equals libgcc's. Runtime-safe: no allocation, no libc calls; every loop is
// bounded. Compiled on every machine (its tests run on the host).
//
// Modelled: the ARM-defined unwind opcodes that compilers emit for ordinary functions (vsp
// adjustments, "vsp = rN" for r7 or r11, pops of core registers and of VFP registers, which
// only move vsp). Anything else (a pop of sp, iWMMXt registers, a return address left in lr
// at a call site, opcodes after "vsp = rN" other than at the start) gives kUnsupported.
#pragma once

#include <cstdint>

namespace memtrack::core {

enum class EhabiRuleKind : uint8_t {
  kInvalid = 0,      // never a computed result; marks "no rule yet" in packed form
  kFrame = 1,        // the fields below describe how to reach the caller
  kOutermost = 2,    // EXIDX_CANTUNWIND: libgcc ends the stack here
  kUnsupported = 3,  // no entry for the address, or opcodes this reader does not model
};

enum class EhabiBase : uint8_t { kSp = 0, kR7 = 1, kR11 = 2 };

// Offsets are in bytes from the base register's value.
struct EhabiRule {
  EhabiRuleKind kind = EhabiRuleKind::kInvalid;
  EhabiBase base = EhabiBase::kSp;
  bool r7_saved = false;
  bool r11_saved = false;
  int32_t cfa_offset = 0;  // the caller's sp is base + cfa_offset
  int32_t ra_offset = 0;   // the return address (saved lr or pc) is at base + ra_offset
  int32_t r7_offset = 0;
  int32_t r11_offset = 0;

  // Every offset is a multiple of 4 within +-2^13 words (cfa: +-2^15): one 64-bit word.
  static constexpr int32_t kMaxSlotOffset = (1 << 15) - 4;
  static constexpr int32_t kMaxCfaOffset = (1 << 17) - 4;

  uint64_t pack() const;
  static EhabiRule unpack(uint64_t word);
};

// The rule at `pc` in the module whose .ARM.exidx holds `count` entries at `exidx`
// (dl_find_object's dlfo_eh_frame and dlfo_eh_count). For a return address pass
// is_return_address = true: the entry of pc - 2 is used, inside the call, as libgcc does.
// Reads only in [readable_begin, readable_end) (the module's mapped range).
EhabiRule compute_ehabi_rule(const uint32_t* exidx, int count, uintptr_t pc, bool is_return_address,
                             uintptr_t readable_begin, uintptr_t readable_end);

}  // namespace memtrack::core
