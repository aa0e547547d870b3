// Unwind rules for x86-64 and aarch64, computed from a loaded module's .eh_frame (DWARF call
// frame information): where the canonical frame address (CFA), the return address and the
// caller's frame pointer are for one code address. A rule is computed once per return address
// and cached by the runtime's fast unwinder, so each later step is a cache lookup and two loads.
// Runtime-safe: no allocation, no libc calls; reads only the module's mapped unwind tables,
// and with a ReadableRange never outside it, however corrupt they are.
//
// Only what compilers emit for ordinary functions is modelled: CFA = sp or frame pointer +
// offset (rsp/rbp on x86-64, sp/x29 on aarch64), the return address (x86-64's column 16,
// aarch64's x30) and the frame pointer saved at CFA-relative offsets or unchanged. Everything
// else (CFA expressions, registers saved in other registers, a return address left in x30,
// pointer authentication's DW_CFA_AARCH64_negate_ra_state, signal frames, other CFA registers)
// gives kUnsupported, and the caller unwinds that stack with the reference unwinder instead.
// "bp" below is the frame pointer of either architecture.
#pragma once

#include <cstdint>

namespace memtrack::core {

enum class UnwindRuleKind : uint8_t {
  kInvalid = 0,      // never a computed result; marks "no rule yet" in packed form
  kFrame = 1,        // the fields below describe how to reach the caller
  kOutermost = 2,    // no caller: the return address is undefined, or no FDE covers the pc
  kUnsupported = 3,  // a rule this unwinder does not model
};

struct UnwindRule {
  UnwindRuleKind kind = UnwindRuleKind::kInvalid;
  bool cfa_from_bp = false;  // CFA = bp + cfa_offset; otherwise sp + cfa_offset
  bool bp_saved = false;     // the caller's bp is at CFA + bp_offset; otherwise unchanged
  // The return address is at CFA + ra_offset: -8 on x86-64; on aarch64 the frame record
  // {x29, x30} sits at the bottom of the frame, so it is as far below the CFA as the frame
  // is big.
  int16_t ra_offset = 0;
  int16_t bp_offset = 0;
  int32_t cfa_offset = 0;  // within +-kMaxCfaOffset

  // Offsets beyond this give kUnsupported (28 bits in packed form).
  static constexpr int32_t kMaxCfaOffset = (1 << 27) - 1;

  // One 64-bit word, so a cache entry can be published with one atomic store. A packed rule
  // is never 0 (kInvalid packs to 0 and means "empty").
  uint64_t pack() const {
    return static_cast<uint64_t>(kind) | (cfa_from_bp ? 4u : 0u) | (bp_saved ? 8u : 0u) |
           static_cast<uint64_t>(static_cast<uint16_t>(ra_offset)) << 4 |
           static_cast<uint64_t>(static_cast<uint16_t>(bp_offset)) << 20 |
           static_cast<uint64_t>(static_cast<uint32_t>(cfa_offset)) << 36;
  }
  // Inline: the unwinder decodes a rule per frame and keeps the fields in registers.
  static UnwindRule unpack(uint64_t word) {
    UnwindRule rule;
    rule.kind = static_cast<UnwindRuleKind>(word & 3);
    rule.cfa_from_bp = (word & 4) != 0;
    rule.bp_saved = (word & 8) != 0;
    rule.ra_offset = static_cast<int16_t>(static_cast<uint16_t>(word >> 4));
    rule.bp_offset = static_cast<int16_t>(static_cast<uint16_t>(word >> 20));
    rule.cfa_offset = static_cast<int32_t>(word >> 32) >> 4;  // arithmetic: keeps the sign
    return rule;
  }
};

// The addresses [begin, end) that the tables of one module occupy and that may be read.
// Every offset, length and pointer read from the tables is checked against it, so corrupt
// tables give kUnsupported instead of a read elsewhere. The default is all memory: the
// tables are trusted.
struct ReadableRange {
  uintptr_t begin = 0;
  uintptr_t end = UINTPTR_MAX;
};

// Computes the rule at `pc` in the module whose .eh_frame_hdr section is at `eh_frame_hdr`
// (dl_find_object's dlfo_eh_frame). For a return address pass is_return_address = true: the
// rule of the call instruction (pc - 1) is used, as every DWARF unwinder does. Reads only
// inside `range` (see ReadableRange).
UnwindRule compute_unwind_rule(const uint8_t* eh_frame_hdr, uintptr_t pc, bool is_return_address,
                               const ReadableRange& range);
// The same with the tables trusted (all memory readable).
UnwindRule compute_unwind_rule(const uint8_t* eh_frame_hdr, uintptr_t pc, bool is_return_address);

}  // namespace memtrack::core
