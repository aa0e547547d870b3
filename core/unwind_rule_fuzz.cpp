// libFuzzer target for the CFI rule parser: the unwind tables (.eh_frame_hdr and .eh_frame)
// of real and mutated modules. A broken module must never crash the program: with the
// tables' range given, every read stays inside it (AddressSanitizer would report the first
// byte outside, as the input is copied to a buffer of its exact size).
//
// Input: the code address as a signed 8-byte offset from the tables' first byte, the offset
// of .eh_frame_hdr in the tables (4 bytes, little-endian), then the tables as they lie in
// memory (tests/fuzz/eh_frame_seeds.py cuts them from ELF files).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "core/unwind_rule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kPrefix = 12;
  if (size <= kPrefix) return 0;
  int64_t pc_offset = 0;
  uint32_t hdr_offset = 0;
  memcpy(&pc_offset, data, 8);
  memcpy(&hdr_offset, data + 8, 4);
  size_t tables_size = size - kPrefix;
  std::unique_ptr<uint8_t[]> tables(new uint8_t[tables_size]);
  memcpy(tables.get(), data + kPrefix, tables_size);

  uintptr_t base = reinterpret_cast<uintptr_t>(tables.get());
  memtrack::core::ReadableRange range{base, base + tables_size};
  const uint8_t* hdr = tables.get() + hdr_offset % tables_size;
  uintptr_t pc = base + static_cast<uintptr_t>(pc_offset);
  for (uintptr_t delta : {0, 1, 7}) {
    for (bool is_return_address : {false, true}) {
      memtrack::core::UnwindRule rule =
          memtrack::core::compute_unwind_rule(hdr, pc + delta, is_return_address, range);
      if (rule.kind == memtrack::core::UnwindRuleKind::kInvalid) __builtin_trap();
    }
  }
  return 0;
}
