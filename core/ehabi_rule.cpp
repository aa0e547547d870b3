// EHABI unwind rules (ARM IHI 0038, "Exception Handling ABI for the ARM Architecture",
// sections 6 and 10). Runtime-safe: no allocation, no libc; bounded loops.
#include "core/ehabi_rule.h"

namespace memtrack::core {
namespace {

constexpr uint32_t kCantUnwind = 1;
constexpr int kMaxOpcodes = 4 + 4 * 255;  // one word of opcodes plus 255 more words

int64_t field(uint64_t word, int shift, int bits) {
  uint64_t value = (word >> shift) & ((uint64_t{1} << bits) - 1);
  uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>(value ^ sign) - static_cast<int64_t>(sign);  // sign-extended
}

uint64_t put(int32_t value, int shift, int bits) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(value)) & ((uint64_t{1} << bits) - 1))
         << shift;
}

// A prel31 field: a signed 31-bit offset from the field's own address.
uintptr_t prel31(const uint32_t* at) {
  auto offset = static_cast<int32_t>(*at << 1) >> 1;  // arithmetic: bit 30 is the sign
  return reinterpret_cast<uintptr_t>(at) + static_cast<uintptr_t>(static_cast<intptr_t>(offset));
}

// The opcode bytes of one entry, most significant byte of each word first.
class Opcodes {
 public:
  // `first` holds `skip` bytes of something else at its top, then opcodes; `extra` more
  // words of opcodes follow it.
  Opcodes(const uint32_t* first, int skip, int extra) : words_(first), index_(skip) {
    end_ = 4 * (1 + extra);
  }
  bool done() const { return index_ >= end_; }
  uint8_t next() {
    if (done()) return 0xb0;  // finish
    uint32_t word = words_[index_ / 4];
    uint8_t byte = static_cast<uint8_t>(word >> (24 - 8 * (index_ % 4)));
    ++index_;
    return byte;
  }

 private:
  const uint32_t* words_;
  int index_;
  int end_;
};

struct Interpreter {
  int32_t vsp = 0;  // relative to the base register
  EhabiBase base = EhabiBase::kSp;
  bool moved = false;  // something changed vsp or popped: "vsp = rN" must come first
  bool r7_saved = false, r11_saved = false, lr_saved = false, pc_saved = false;
  int32_t r7 = 0, r11 = 0, lr = 0, pc = 0;

  void save(int reg, int tracked, bool* saved, int32_t* slot) const {
    if (reg != tracked) return;
    *saved = true;
    *slot = vsp;
  }
  // Pops the core registers in `mask` (bit n: rn), lowest first, as the opcodes define.
  bool pop(uint32_t mask) {
    if (mask & (1u << 13)) return false;  // sp itself: not modelled
    for (int reg = 0; reg < 16; ++reg) {
      if ((mask & (1u << reg)) == 0) continue;
      save(reg, 7, &r7_saved, &r7);
      save(reg, 11, &r11_saved, &r11);
      save(reg, 14, &lr_saved, &lr);
      save(reg, 15, &pc_saved, &pc);
      vsp += 4;
    }
    moved = true;
    return true;
  }
  void add(int32_t bytes) {
    vsp += bytes;
    moved = true;
  }

  bool run(Opcodes& ops) {
    for (int count = 0; count < kMaxOpcodes && !ops.done(); ++count) {
      uint8_t op = ops.next();
      if (op < 0x40) {
        add(((op & 0x3f) << 2) + 4);
      } else if (op < 0x80) {
        add(-(((op & 0x3f) << 2) + 4));
      } else if (op < 0x90) {
        uint32_t mask = ((op & 0x0fu) << 8 | ops.next()) << 4;  // r4..r15
        if (mask == 0 || !pop(mask)) return false;              // 0x8000: refuse to unwind
      } else if (op < 0xa0) {
        int reg = op & 0x0f;
        if (moved || (reg != 7 && reg != 11)) return false;
        base = reg == 7 ? EhabiBase::kR7 : EhabiBase::kR11;
      } else if (op < 0xb0) {
        uint32_t mask = ((1u << ((op & 7) + 1)) - 1) << 4;  // r4..r[4+n]
        if (op & 8) mask |= 1u << 14;
        if (!pop(mask)) return false;
      } else if (op == 0xb0) {
        return true;  // finish
      } else if (op == 0xb1) {
        uint8_t mask = ops.next();
        if (mask == 0 || (mask & 0xf0) != 0 || !pop(mask)) return false;
      } else if (op == 0xb2) {
        uint32_t value = 0;
        for (int shift = 0; shift < 28; shift += 7) {
          uint8_t byte = ops.next();
          value |= static_cast<uint32_t>(byte & 0x7f) << shift;
          if ((byte & 0x80) == 0) break;
          if (shift == 21) return false;
        }
        add(0x204 + static_cast<int32_t>(value << 2));
      } else if (op == 0xb3) {
        add(((ops.next() & 0x0f) + 1) * 8 + 4);  // VFP, FSTMFDX
      } else if (op >= 0xb8 && op < 0xc0) {
        add(((op & 7) + 1) * 8 + 4);
      } else if (op == 0xc8 || op == 0xc9) {
        add(((ops.next() & 0x0f) + 1) * 8);  // VFP, FSTMFDD
      } else if (op >= 0xd0 && op < 0xd8) {
        add(((op & 7) + 1) * 8);
      } else {
        return false;  // iWMMXt, spare and reserved opcodes
      }
    }
    return true;
  }
};

bool in_range(const void* p, uintptr_t bytes, uintptr_t begin, uintptr_t end) {
  uintptr_t at = reinterpret_cast<uintptr_t>(p);
  return at >= begin && at <= end && end - at >= bytes;
}

}  // namespace

uint64_t EhabiRule::pack() const {
  return static_cast<uint64_t>(kind) | static_cast<uint64_t>(base) << 2 |
         (r7_saved ? uint64_t{1} << 4 : 0) | (r11_saved ? uint64_t{1} << 5 : 0) |
         put(ra_offset / 4, 6, 14) | put(r7_offset / 4, 20, 14) | put(r11_offset / 4, 34, 14) |
         put(cfa_offset / 4, 48, 16);
}

EhabiRule EhabiRule::unpack(uint64_t word) {
  EhabiRule rule;
  rule.kind = static_cast<EhabiRuleKind>(word & 3);
  rule.base = static_cast<EhabiBase>((word >> 2) & 3);
  rule.r7_saved = (word >> 4) & 1;
  rule.r11_saved = (word >> 5) & 1;
  rule.ra_offset = static_cast<int32_t>(field(word, 6, 14) * 4);
  rule.r7_offset = static_cast<int32_t>(field(word, 20, 14) * 4);
  rule.r11_offset = static_cast<int32_t>(field(word, 34, 14) * 4);
  rule.cfa_offset = static_cast<int32_t>(field(word, 48, 16) * 4);
  return rule;
}

EhabiRule compute_ehabi_rule(const uint32_t* exidx, int count, uintptr_t pc, bool is_return_address,
                             uintptr_t readable_begin, uintptr_t readable_end) {
  EhabiRule rule;
  rule.kind = EhabiRuleKind::kUnsupported;
  if (exidx == nullptr || count <= 0 ||
      !in_range(exidx, static_cast<uintptr_t>(count) * 8, readable_begin, readable_end)) {
    return rule;
  }
  uintptr_t target = is_return_address ? pc - 2 : pc;
  // The last entry whose function starts at or below the target (libgcc's search: an address
  // past a function without an entry falls to the entry before it).
  int low = 0;
  int high = count;
  while (low < high) {
    int mid = low + (high - low) / 2;
    if (prel31(&exidx[2 * mid]) <= target) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  if (low == 0) return rule;
  const uint32_t* entry = &exidx[2 * (low - 1)];
  if (entry[1] == kCantUnwind) {
    rule.kind = EhabiRuleKind::kOutermost;
    return rule;
  }
  const uint32_t* table = &entry[1];  // inline compact entry
  if ((entry[1] & 0x80000000u) == 0) {
    table = reinterpret_cast<const uint32_t*>(prel31(&entry[1]));  // .ARM.extab
    if (!in_range(table, 8, readable_begin, readable_end)) return rule;
  }
  int skip = 0;
  int extra = 0;
  if (table[0] & 0x80000000u) {  // compact model: personality index in bits 24-27
    int index = (table[0] >> 24) & 0x0f;
    if (index == 0) {
      skip = 1;
    } else if (index == 1 || index == 2) {
      skip = 2;
      extra = (table[0] >> 16) & 0xff;
    } else {
      return rule;
    }
  } else {  // generic model (gcc's C++ personality): its opcodes as in the compact model 1
    ++table;
    skip = 1;
    extra = (table[0] >> 24) & 0xff;
  }
  if (table != &entry[1] && !in_range(table, 4u * (1 + extra), readable_begin, readable_end)) {
    return rule;
  }
  Opcodes ops(table, skip, table == &entry[1] ? 0 : extra);
  Interpreter interpreter;
  if (!interpreter.run(ops)) return rule;
  // At a call site the return address was saved; a frame that keeps it in lr is the top
  // frame only, which the walk never asks about.
  if (!interpreter.pc_saved && !interpreter.lr_saved) return rule;
  int32_t ra = interpreter.pc_saved ? interpreter.pc : interpreter.lr;
  auto fits = [](int32_t offset) {
    return offset >= -EhabiRule::kMaxSlotOffset && offset <= EhabiRule::kMaxSlotOffset;
  };
  if (!fits(ra) || !fits(interpreter.r7) || !fits(interpreter.r11) ||
      interpreter.vsp < -EhabiRule::kMaxCfaOffset || interpreter.vsp > EhabiRule::kMaxCfaOffset) {
    return rule;
  }
  rule.kind = EhabiRuleKind::kFrame;
  rule.base = interpreter.base;
  rule.cfa_offset = interpreter.vsp;
  rule.ra_offset = ra;
  rule.r7_saved = interpreter.r7_saved;
  rule.r7_offset = interpreter.r7_saved ? interpreter.r7 : 0;
  rule.r11_saved = interpreter.r11_saved;
  rule.r11_offset = interpreter.r11_saved ? interpreter.r11 : 0;
  return rule;
}

}  // namespace memtrack::core
