// Unwind rules from .eh_frame_hdr / .eh_frame (DWARF CFI, x86-64 and aarch64). Runtime-safe: no
// allocation, no libc; every loop is bounded so corrupt tables cannot hang the caller.
#include "core/unwind_rule.h"

#include <cstddef>

namespace memtrack::core {
namespace {

// DWARF register numbers of the frame pointer, the stack pointer and the return address
// column (the psABIs), and the pointer-encoding constants of the LSB spec.
#if defined(__aarch64__)
constexpr uint64_t kRegBp = 29;  // x29
constexpr uint64_t kRegSp = 31;
constexpr uint64_t kRegRa = 30;  // x30, the link register: its saved slot is the return address
#else
constexpr uint64_t kRegBp = 6;  // rbp
constexpr uint64_t kRegSp = 7;
constexpr uint64_t kRegRa = 16;  // the return address column
#endif
constexpr uint8_t kPeOmit = 0xff;
constexpr uint8_t kPeDatarelSdata4 = 0x3b;

// A cap on CFA instructions per FDE; real FDEs have tens.
constexpr int kMaxInstructions = 100000;
constexpr int kMaxRememberDepth = 16;

// Reads little-endian values from the readable bytes of the module's unwind tables. A read
// that would leave them (a corrupt length, offset or pointer) reads zeros instead and marks
// the reader failed, so a broken module gives kUnsupported, never a fault.
class ByteReader {
 public:
  // A reader that starts outside the range fails at its first read. Reads only move forward
  // and stop at the range's end, so from here on pos_ stays inside while ok_ holds.
  ByteReader(uintptr_t pos, const ReadableRange& range)
      : pos_(pos), range_(range), ok_(pos >= range.begin && pos <= range.end) {}

  uintptr_t pos() const { return pos_; }
  bool ok() const { return ok_; }
  void fail() { ok_ = false; }
  // Moves forward `bytes`; past the end of the range it fails.
  void skip(uint64_t bytes) {
    if (!readable(bytes)) return;
    pos_ += bytes;
  }

  uint8_t u8() {
    if (!readable(1)) return 0;
    return *reinterpret_cast<const uint8_t*>(pos_++);
  }
  uint64_t unsigned_bytes(int count) {
    if (!readable(static_cast<uint64_t>(count))) return 0;
    const auto* bytes = reinterpret_cast<const uint8_t*>(pos_);
    uint64_t value = 0;
    for (int i = 0; i < count; ++i) value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
    pos_ += static_cast<uintptr_t>(count);
    return value;
  }
  int64_t signed_bytes(int count) {
    uint64_t value = unsigned_bytes(count);
    int shift = 64 - 8 * count;
    return shift == 0 ? static_cast<int64_t>(value) : static_cast<int64_t>(value << shift) >> shift;
  }
  // Most operands are below 128: one byte, read inline.
  __attribute__((always_inline)) uint64_t uleb() {
    if (ok_ && pos_ < range_.end && (*reinterpret_cast<const uint8_t*>(pos_) & 0x80) == 0) {
      return *reinterpret_cast<const uint8_t*>(pos_++);
    }
    return uleb_slow();
  }
  __attribute__((noinline)) uint64_t uleb_slow() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t byte = u8();
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    while ((u8() & 0x80) != 0 && ok_) {
    }
    return value;
  }
  int64_t sleb() {
    uint64_t value = 0;
    int shift = 0;
    uint8_t byte = 0;
    do {
      byte = u8();
      if (shift < 64) {
        value |= static_cast<uint64_t>(byte & 0x7f) << shift;
        shift += 7;
      }
    } while ((byte & 0x80) != 0 && ok_);
    if (shift < 64 && (byte & 0x40)) value |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(value);
  }

  // Reads a pointer in DW_EH_PE encoding `encoding`. `data_base` serves datarel. With
  // `apply` false only the value format is read (pc_range, or skipping a personality).
  bool encoded(uint8_t encoding, uintptr_t data_base, bool apply, uintptr_t* /*out*/ out) {
    if (encoding == kPeOmit) return false;
    uintptr_t field = pos_;
    uint64_t value = 0;
    switch (encoding & 0x0f) {
      case 0x00:
        value = unsigned_bytes(8);
        break;
      case 0x01:
        value = uleb();
        break;
      case 0x02:
        value = unsigned_bytes(2);
        break;
      case 0x03:
        value = unsigned_bytes(4);
        break;
      case 0x04:
        value = unsigned_bytes(8);
        break;
      case 0x09:
        value = static_cast<uint64_t>(sleb());
        break;
      case 0x0a:
        value = static_cast<uint64_t>(signed_bytes(2));
        break;
      case 0x0b:
        value = static_cast<uint64_t>(signed_bytes(4));
        break;
      case 0x0c:
        value = static_cast<uint64_t>(signed_bytes(8));
        break;
      default:
        return false;
    }
    if (apply) {
      switch (encoding & 0x70) {
        case 0x00:
          break;
        case 0x10:
          value += field;
          break;
        case 0x30:
          value += data_base;
          break;
        default:
          return false;  // textrel, funcrel, aligned: not emitted for x86-64 ELF
      }
      if (encoding & 0x80) {  // indirect: the value is where the pointer is stored
        ByteReader at(static_cast<uintptr_t>(value), range_);
        value = at.unsigned_bytes(8);
        if (!at.ok()) return false;
      }
    }
    *out = static_cast<uintptr_t>(value);
    return ok_;
  }

  // The address `length` bytes after the current position, if the range holds it.
  bool offset_in_range(uint64_t length, uintptr_t* /*out*/ out) {
    if (pos_ > range_.end || length > range_.end - pos_) return false;
    *out = pos_ + length;
    return true;
  }

 private:
  bool readable(uint64_t bytes) {
    if (!ok_ || bytes > range_.end - pos_) {  // range_.begin <= pos_ <= range_.end while ok_
      ok_ = false;
      return false;
    }
    return true;
  }

  uintptr_t pos_;
  const ReadableRange range_;  // a copy: its bounds stay in registers through a program
  bool ok_;
};

// Reads a CIE/FDE length and sets *end to the end of the entry. False for the terminator
// (length 0) or a length past the end of the tables.
bool read_entry_end(ByteReader& reader, uintptr_t* /*out*/ end) {
  uint64_t length = reader.unsigned_bytes(4);
  if (length == 0xffffffffu) length = reader.unsigned_bytes(8);
  if (length == 0 || !reader.ok()) return false;
  if (!reader.offset_in_range(length, end)) reader.fail();
  return reader.ok();
}

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = 0;
  uint8_t fde_encoding = 0;  // DW_EH_PE_absptr unless 'R' says otherwise
  bool has_augmentation_data = false;
  bool signal_frame = false;
  uintptr_t instructions = 0;
  uintptr_t end = 0;
};

constexpr size_t kMaxAugmentationLength = 16;

bool parse_cie(uintptr_t at, const ReadableRange& range, Cie* /*out*/ cie) {
  ByteReader reader(at, range);
  if (!read_entry_end(reader, &cie->end)) return false;
  if (reader.unsigned_bytes(4) != 0) return false;  // a CIE's id is 0 in .eh_frame
  uint8_t version = reader.u8();
  if (version != 1 && version != 3) return false;
  char augmentation[kMaxAugmentationLength + 1] = {};
  size_t augmentation_length = 0;
  for (char c = static_cast<char>(reader.u8()); c != '\0'; c = static_cast<char>(reader.u8())) {
    if (augmentation_length == kMaxAugmentationLength || !reader.ok()) return false;
    augmentation[augmentation_length++] = c;
  }
  cie->code_align = reader.uleb();
  cie->data_align = reader.sleb();
  uint64_t return_register = version == 1 ? reader.u8() : reader.uleb();
  if (return_register != kRegRa || !reader.ok()) return false;
  if (augmentation_length == 0) {
    cie->instructions = reader.pos();
    return true;
  }
  if (augmentation[0] != 'z') return false;  // pre-'z' forms such as "eh" are not emitted

  cie->has_augmentation_data = true;
  uint64_t data_length = reader.uleb();
  uintptr_t data_end = 0;
  if (!reader.ok() || !reader.offset_in_range(data_length, &data_end)) return false;
  for (size_t i = 1; i < augmentation_length; ++i) {
    switch (augmentation[i]) {
      case 'L':
        reader.u8();
        break;
      case 'R':
        cie->fde_encoding = reader.u8();
        break;
      case 'S':
        cie->signal_frame = true;
        break;
      case 'P': {
        uint8_t encoding = reader.u8();
        uintptr_t ignored = 0;
        if (!reader.encoded(encoding & 0x0f, 0, false, &ignored)) return false;
        break;
      }
      default:
        i = augmentation_length;
        break;  // unknown letters: data_length skips them
    }
  }
  cie->instructions = data_end;
  return reader.ok() && cie->instructions <= cie->end;
}

// How one register can be recovered. Only rbp and the return address are tracked.
enum class RegHow : uint8_t { kSame, kOffset, kUndefined, kOther };

struct RegRule {
  RegHow how = RegHow::kSame;
  int64_t offset = 0;
};

struct Row {
  uint64_t cfa_register = kRegSp;
  int64_t cfa_offset = 0;
  bool cfa_expression = false;
  RegRule bp;
  RegRule ra;
};

class CfaProgram {
 public:
  CfaProgram(const Cie& cie, uintptr_t target, const ReadableRange& range)
      : cie_(cie), target_(target), range_(range) {}

  // Runs instructions [begin, end) starting at code address `loc`, stopping at the first
  // advance past the target. Returns false on an instruction this unwinder cannot follow or
  // one that runs past the end of the tables.
  bool run(uintptr_t begin, uintptr_t end, uintptr_t loc) {
    ByteReader reader(begin, range_);
    for (int count = 0; reader.pos() < end; ++count) {
      if (count == kMaxInstructions || !reader.ok()) return false;
      uint8_t op = reader.u8();
      uint8_t low = op & 0x3f;
      switch (op & 0xc0) {
        case 0x40:
          loc += low * cie_.code_align;
          if (loc > target_) return true;
          continue;
        case 0x80:
          set(low, RegHow::kOffset, factored(reader.uleb()));
          continue;
        case 0xc0:
          restore(low);
          continue;
        default:
          break;
      }
      uint64_t reg = 0;
      switch (op) {
        case 0x00:
          break;    // nop
        case 0x01:  // set_loc
          if (!reader.encoded(cie_.fde_encoding, 0, true, &loc)) return false;
          if (loc > target_) return true;
          break;
        case 0x02:
        case 0x03:
        case 0x04: {  // advance_loc1/2/4
          int bytes = op == 0x02 ? 1 : op == 0x03 ? 2 : 4;
          loc += reader.unsigned_bytes(bytes) * cie_.code_align;
          if (loc > target_) return true;
          break;
        }
        case 0x05:  // offset_extended
          reg = reader.uleb();
          set(reg, RegHow::kOffset, factored(reader.uleb()));
          break;
        case 0x06:
          restore(reader.uleb());
          break;
        case 0x07:
          set(reader.uleb(), RegHow::kUndefined, 0);
          break;
        case 0x08:
          set(reader.uleb(), RegHow::kSame, 0);
          break;
        case 0x09:  // register: saved in another register
          reg = reader.uleb();
          reader.uleb();
          set(reg, RegHow::kOther, 0);
          break;
        case 0x0a:  // remember_state: rules and CFA, as libgcc keeps them
          if (depth_ == kMaxRememberDepth) return false;
          stack_[depth_++] = row_;
          break;
        case 0x0b:
          if (depth_ == 0) return false;
          row_ = stack_[--depth_];
          break;
        case 0x0c:  // def_cfa
          row_.cfa_register = reader.uleb();
          row_.cfa_offset = static_cast<int64_t>(reader.uleb());
          row_.cfa_expression = false;
          break;
        case 0x0d:
          row_.cfa_register = reader.uleb();
          row_.cfa_expression = false;
          break;
        case 0x0e:
          row_.cfa_offset = static_cast<int64_t>(reader.uleb());
          break;
        case 0x0f:  // def_cfa_expression
          reader.skip(reader.uleb());
          row_.cfa_expression = true;
          break;
        case 0x10:
        case 0x16:  // expression, val_expression
          reg = reader.uleb();
          reader.skip(reader.uleb());
          set(reg, RegHow::kOther, 0);
          break;
        case 0x11:  // offset_extended_sf
          reg = reader.uleb();
          set(reg, RegHow::kOffset, factored(static_cast<uint64_t>(reader.sleb())));
          break;
        case 0x12:  // def_cfa_sf
          row_.cfa_register = reader.uleb();
          row_.cfa_offset = factored(static_cast<uint64_t>(reader.sleb()));
          row_.cfa_expression = false;
          break;
        case 0x13:
          row_.cfa_offset = factored(static_cast<uint64_t>(reader.sleb()));
          break;
        case 0x14:  // val_offset: the value is an address, not a saved slot
          reg = reader.uleb();
          reader.uleb();
          set(reg, RegHow::kOther, 0);
          break;
        case 0x15:
          reg = reader.uleb();
          reader.sleb();
          set(reg, RegHow::kOther, 0);
          break;
        case 0x2e:
          reader.uleb();
          break;    // GNU_args_size
        case 0x2f:  // GNU_negative_offset_extended
          reg = reader.uleb();
          set(reg, RegHow::kOffset, factored(0 - reader.uleb()));
          break;
        default:
          return false;
      }
    }
    return reader.ok();
  }

  // An offset operand times the data alignment factor, wrapping as two's complement (corrupt
  // tables may overflow; rule_from_row rejects offsets out of range).
  int64_t factored(uint64_t operand) const {
    return static_cast<int64_t>(operand * static_cast<uint64_t>(cie_.data_align));
  }

  // The CIE's rules, which DW_CFA_restore returns to.
  void save_initial() { initial_ = row_; }
  const Row& row() const { return row_; }

 private:
  void set(uint64_t reg, RegHow how, int64_t offset) {
    if (reg == kRegBp) row_.bp = RegRule{how, offset};
    if (reg == kRegRa) row_.ra = RegRule{how, offset};
  }
  void restore(uint64_t reg) {
    if (reg == kRegBp) row_.bp = initial_.bp;
    if (reg == kRegRa) row_.ra = initial_.ra;
  }

  const Cie& cie_;
  uintptr_t target_;
  const ReadableRange& range_;
  Row row_;
  Row initial_;
  Row stack_[kMaxRememberDepth];
  int depth_ = 0;
};

UnwindRule rule_from_row(const Row& row) {
  UnwindRule rule;
  rule.kind = UnwindRuleKind::kUnsupported;
  if (row.ra.how == RegHow::kUndefined) {
    rule.kind = UnwindRuleKind::kOutermost;
    return rule;
  }
  if (row.cfa_expression || row.ra.how != RegHow::kOffset) return rule;
  if (row.cfa_register != kRegSp && row.cfa_register != kRegBp) return rule;
  if (row.bp.how == RegHow::kOther) return rule;
  if (row.cfa_offset < -UnwindRule::kMaxCfaOffset || row.cfa_offset > UnwindRule::kMaxCfaOffset) {
    return rule;
  }
  if (row.ra.offset < INT16_MIN || row.ra.offset > INT16_MAX) return rule;
  if (row.bp.how == RegHow::kOffset && (row.bp.offset < INT16_MIN || row.bp.offset > INT16_MAX)) {
    return rule;
  }
  rule.kind = UnwindRuleKind::kFrame;
  rule.cfa_from_bp = row.cfa_register == kRegBp;
  rule.cfa_offset = static_cast<int32_t>(row.cfa_offset);
  rule.ra_offset = static_cast<int16_t>(row.ra.offset);
  rule.bp_saved = row.bp.how == RegHow::kOffset;
  rule.bp_offset = rule.bp_saved ? static_cast<int16_t>(row.bp.offset) : 0;
  return rule;
}

// Binary search of the .eh_frame_hdr table for the FDE whose range may hold `pc`.
// Returns 0 when the table is missing, corrupt, or in an encoding other than the one every
// x86-64 linker writes; *unsupported tells those apart from "no FDE covers pc".
uintptr_t find_fde(uintptr_t hdr, uintptr_t pc, const ReadableRange& range,
                   bool* /*out*/ unsupported) {
  *unsupported = true;
  ByteReader reader(hdr, range);
  uint8_t version = reader.u8();
  uint8_t frame_pointer_encoding = reader.u8();
  uint8_t count_encoding = reader.u8();
  uint8_t table_encoding = reader.u8();
  if (version != 1 || !reader.ok()) return 0;
  uintptr_t eh_frame = 0;
  uintptr_t count = 0;
  if (!reader.encoded(frame_pointer_encoding, hdr, true, &eh_frame)) return 0;
  if (!reader.encoded(count_encoding, hdr, true, &count)) return 0;
  if (table_encoding != kPeDatarelSdata4) return 0;
  uintptr_t table = reader.pos();
  uintptr_t table_end = 0;
  if (count > (range.end - table) / 8 || !reader.offset_in_range(count * 8, &table_end)) return 0;
  *unsupported = false;
  auto entry_at = [&](uintptr_t index, int field) {
    ByteReader at(table + index * 8 + static_cast<uintptr_t>(field) * 4, range);
    return hdr + static_cast<uintptr_t>(at.signed_bytes(4));
  };
  uintptr_t low = 0;
  uintptr_t high = count;  // the answer is the last entry with start <= pc
  while (low < high) {
    uintptr_t mid = low + (high - low) / 2;
    if (entry_at(mid, 0) <= pc) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  if (low == 0) return 0;
  return entry_at(low - 1, 1);
}

}  // namespace

UnwindRule compute_unwind_rule(const uint8_t* eh_frame_hdr, uintptr_t pc, bool is_return_address) {
  return compute_unwind_rule(eh_frame_hdr, pc, is_return_address, ReadableRange{});
}

UnwindRule compute_unwind_rule(const uint8_t* eh_frame_hdr, uintptr_t pc, bool is_return_address,
                               const ReadableRange& range) {
  UnwindRule unsupported;
  unsupported.kind = UnwindRuleKind::kUnsupported;
  UnwindRule outermost;
  outermost.kind = UnwindRuleKind::kOutermost;
  if (eh_frame_hdr == nullptr) return unsupported;
  uintptr_t target = is_return_address ? pc - 1 : pc;

  bool table_unsupported = false;
  uintptr_t fde =
      find_fde(reinterpret_cast<uintptr_t>(eh_frame_hdr), target, range, &table_unsupported);
  if (fde == 0) return table_unsupported ? unsupported : outermost;

  ByteReader reader(fde, range);
  uintptr_t fde_end = 0;
  if (!read_entry_end(reader, &fde_end)) return reader.ok() ? outermost : unsupported;
  uintptr_t cie_pointer_field = reader.pos();
  uint64_t cie_offset = reader.unsigned_bytes(4);
  if (cie_offset == 0 || cie_offset > cie_pointer_field) return unsupported;  // 0: a CIE
  Cie cie;
  if (!parse_cie(cie_pointer_field - cie_offset, range, &cie)) return unsupported;
  if (cie.signal_frame) return unsupported;
  uintptr_t pc_begin = 0;
  uintptr_t pc_range = 0;
  if (!reader.encoded(cie.fde_encoding, 0, true, &pc_begin)) return unsupported;
  if (!reader.encoded(cie.fde_encoding & 0x0f, 0, false, &pc_range)) return unsupported;
  if (target < pc_begin || target - pc_begin >= pc_range) return outermost;
  if (cie.has_augmentation_data) reader.skip(reader.uleb());
  if (!reader.ok()) return unsupported;

  CfaProgram program(cie, target, range);
  if (!program.run(cie.instructions, cie.end, pc_begin)) return unsupported;
  program.save_initial();
  if (!program.run(reader.pos(), fde_end, pc_begin)) return unsupported;
  return rule_from_row(program.row());
}

}  // namespace memtrack::core
