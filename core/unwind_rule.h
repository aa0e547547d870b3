// Unwind rules for x86-64, computed from a loaded module's .eh_frame (DWARF call frame
// information): where the canonical frame address (CFA), the return address and the caller's
// rbp are for one code address. A rule is computed once per return address and cached by the
// runtime's fast unwinder, so each later step is a cache lookup and two loads.
// Runtime-safe: no allocation, no libc calls; reads only the module's mapped unwind tables,
// and with a ReadableRange never outside it, however corrupt they are.
//
// Only what compilers emit for ordinary functions is modelled: CFA = rsp or rbp + offset,
// return address and rbp saved at CFA-relative offsets or unchanged. Everything else (CFA
// expressions, registers saved in other registers, signal frames, other CFA registers) gives
// kUnsupported, and the caller unwinds that stack with the reference unwinder instead.
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
  bool cfa_from_bp = false;  // CFA = rbp + cfa_offset; otherwise rsp + cfa_offset
  bool bp_saved = false;     // the caller's rbp is at CFA + bp_offset; otherwise unchanged
  int8_t ra_offset = 0;      // the return address is at CFA + ra_offset
  int16_t bp_offset = 0;
  int32_t cfa_offset = 0;

  // One 64-bit word, so a cache entry can be published with one atomic store. A packed rule
  // is never 0 (kInvalid packs to 0 and means "empty").
  uint64_t pack() const {
    return static_cast<uint64_t>(kind) | (cfa_from_bp ? 4u : 0u) | (bp_saved ? 8u : 0u) |
           static_cast<uint64_t>(static_cast<uint8_t>(ra_offset)) << 8 |
           static_cast<uint64_t>(static_cast<uint16_t>(bp_offset)) << 16 |
           static_cast<uint64_t>(static_cast<uint32_t>(cfa_offset)) << 32;
  }
  // Inline: the unwinder decodes a rule per frame and keeps the fields in registers.
  static UnwindRule unpack(uint64_t word) {
    UnwindRule rule;
    rule.kind = static_cast<UnwindRuleKind>(word & 3);
    rule.cfa_from_bp = (word & 4) != 0;
    rule.bp_saved = (word & 8) != 0;
    rule.ra_offset = static_cast<int8_t>(static_cast<uint8_t>(word >> 8));
    rule.bp_offset = static_cast<int16_t>(static_cast<uint16_t>(word >> 16));
    rule.cfa_offset = static_cast<int32_t>(static_cast<uint32_t>(word >> 32));
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
