// The result file's fixed-size records as structs, expanded from core/result_records.inc:
// what the runtime fills and writes (core/result_writer.h) and what the reader decodes
// (report/result_reader.cpp) are the same declaration. Runtime-safe: no allocation.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/result_format.h"

namespace memtrack::core::result {

// Wire types of result_records.inc.
namespace wire {
using u8 = uint8_t;
using u16 = uint16_t;
using u32 = uint32_t;
using i32 = int32_t;
using u64 = uint64_t;
}  // namespace wire

// The structs. Each holds its fields in file order; kSize is the bytes it takes in the file
// (the struct itself may be padded: always write and read through visit_fields).
#define MEMTRACK_RECORD(Name, size, what) \
  struct Name {                           \
    static constexpr uint32_t kSize = size;
#define MEMTRACK_FIELD(Type, wire_type, name, meaning)                        \
  Type name{};                                                                \
  static_assert(sizeof(Type) == sizeof(wire::wire_type),                      \
                #name " is held in a type of another size than " #wire_type); \
  static_assert(std::is_integral_v<Type> || std::is_enum_v<Type>);
#define MEMTRACK_TAIL(wire_type, name, meaning)
#define MEMTRACK_RECORD_END(Name) \
  }                               \
  ;
#include "core/result_records.inc"
#undef MEMTRACK_RECORD
#undef MEMTRACK_FIELD
#undef MEMTRACK_TAIL
#undef MEMTRACK_RECORD_END

// visit_fields(record, f) calls f(field) for every field, in file order; `record` may be
// const (writing) or not (reading).
#define MEMTRACK_RECORD(Name, size, what)                    \
  template <typename Record, typename Visit>                 \
  requires std::is_same_v<std::remove_const_t<Record>, Name> \
  constexpr void visit_fields(Record& record, Visit&& visit) {
#define MEMTRACK_FIELD(Type, wire_type, name, meaning) visit(record.name);
#define MEMTRACK_TAIL(wire_type, name, meaning)
#define MEMTRACK_RECORD_END(Name) }
#include "core/result_records.inc"
#undef MEMTRACK_RECORD
#undef MEMTRACK_FIELD
#undef MEMTRACK_TAIL
#undef MEMTRACK_RECORD_END

// The bytes a record's fields take, which must be the size the list declares.
template <typename Record>
constexpr uint32_t fields_size() {
  uint32_t size = 0;
  Record record{};
  visit_fields(record, [&size](auto& field) { size += sizeof(field); });
  return size;
}
#define MEMTRACK_RECORD(Name, size, what) \
  static_assert(fields_size<Name>() == Name::kSize, #Name "'s fields do not add up to its size");
#define MEMTRACK_FIELD(Type, wire_type, name, meaning)
#define MEMTRACK_TAIL(wire_type, name, meaning)
#define MEMTRACK_RECORD_END(Name)
#include "core/result_records.inc"
#undef MEMTRACK_RECORD
#undef MEMTRACK_FIELD
#undef MEMTRACK_TAIL
#undef MEMTRACK_RECORD_END

// A leak group as the runtime builds it and the reader decodes it: one leaks record and, for
// a definitely lost group, its indirect record.
struct LeakGroup {
  uint32_t stack_id = 0;
  LeakKind kind = LeakKind::kUnclassified;
  bool runtime_internal = false;  // kept by ld.so/stdio/libstdc++ for their own use
  uint64_t bytes = 0;
  uint64_t blocks = 0;
  // kDefinite only: the indirectly lost blocks hanging off this group. They are also leak
  // records of their own (kind kIndirect), so never add them to totals.
  uint64_t indirect_bytes = 0;
  uint64_t indirect_blocks = 0;
  // The sampled mode (docs/sampling.md): what the site holds in all, sampled blocks and not,
  // estimated from its sampled blocks (which `bytes` and `blocks` count, exactly). 0 in the
  // full mode and for the group of blocks with no stack (stack id 0: not sampled).
  uint64_t estimated_bytes = 0;
  uint64_t estimated_blocks = 0;
};

}  // namespace memtrack::core::result
