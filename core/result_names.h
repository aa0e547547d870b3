// Names and wording for the result file's enumerations (core/result_format.h): the spelling
// the JSON report and suppression files use, and the phrases of the text reports. Shared by
// the runtime's own text report and the CLI's renderers, so both word a report alike.
// Freestanding: no libc, no allocation; every string is a literal.
#pragma once

#include "core/result_format.h"

namespace memtrack::core {

// "definite", "indirect", "possible", "reachable", "unclassified"; nullptr for a value
// outside the enum (what a reader rejects).
const char* leak_kind_name(result::LeakKind kind);

// What "N bytes in M blocks are ..." ends with: "definitely lost", "indirectly lost",
// "possibly lost", "still reachable"; "unfreed at exit" for kUnclassified (and for a value
// outside the enum). Also the labels of the per-kind totals.
const char* leak_kind_phrase(result::LeakKind kind);

// "double_free", "invalid_free", "mismatched_free", "realloc_after_free", "invalid_read",
// "invalid_write", "write_outside_block", "write_after_free"; nullptr for a value outside the
// enum.
const char* error_kind_name(result::ErrorKind kind);

// The heap memory errors (--check-heap): a bad access, not a bad allocator call. Their
// reports name the block the address belongs to and say where the block was freed.
constexpr bool is_heap_error(result::ErrorKind kind) {
  return kind == result::ErrorKind::kInvalidRead || kind == result::ErrorKind::kInvalidWrite ||
         kind == result::ErrorKind::kWriteOutsideBlock ||
         kind == result::ErrorKind::kWriteAfterFree;
}
// Whether the error has a stack of its own (bad_stack, the access's or the bad call's): not
// for bytes found overwritten at exit, nor for a write after free (found later; bad_stack is
// the free's, shown as such).
// Where an address lies from a block, in memcheck's words: `distance` bytes "after",
// "before" or "inside" it.
struct BlockRelation {
  uint64_t distance;
  const char* where;
};
constexpr BlockRelation block_relation(uint64_t address, uint64_t start, uint64_t size) {
  if (address >= start + size) return {address - start - size, "after"};
  if (address < start) return {start - address, "before"};
  return {address - start, "inside"};
}
constexpr bool error_has_own_stack(result::ErrorKind kind, uint8_t detail) {
  return !(kind == result::ErrorKind::kWriteOutsideBlock && detail != 0) &&
         kind != result::ErrorKind::kWriteAfterFree;
}

// "unknown", "heap", "stack", "global"; nullptr for a value outside the enum.
const char* error_where_name(result::ErrorWhere where);

// "malloc", "new", "new[]", "none" (the aligned flag is not part of it); nullptr for a value
// outside the enum.
const char* alloc_call_name(result::AllocCall call);

// "free", "delete", "delete[]", "realloc"; nullptr for a value outside the enum.
const char* free_call_name(result::FreeCall call);

}  // namespace memtrack::core
