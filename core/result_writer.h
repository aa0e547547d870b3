// Streams a result file (see result_format.h) to a file descriptor, keeping the checksum.
// Runtime-safe: no allocation; callers give each section's payload size up front.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/result_records.h"
#include "core/text_buffer.h"

namespace memtrack::core {

// Not thread safe; one per file.
class ResultWriter {
 public:
  explicit ResultWriter(int fd) : out_(fd) {}

  void write_header();
  // Starts a section whose payload is exactly `payload_size` bytes; the caller then writes
  // it with the put_* calls.
  void begin_section(result::Section type, uint64_t payload_size);
  void put_u8(uint8_t v) { put(&v, 1); }
  void put_u16(uint16_t v) { put(&v, 2); }
  void put_u32(uint32_t v) { put(&v, 4); }
  void put_i32(int32_t v) { put(&v, 4); }
  void put_u64(uint64_t v) { put(&v, 8); }
  void put_bytes(const void* data, size_t size) { put(data, size); }
  // One record of core/result_records.inc, field by field (no padding).
  template <typename Record>
  void put_record(const Record& record) {
    result::visit_fields(record, [this](const auto& field) { put(&field, sizeof(field)); });
  }
  // Writes the end section with the checksum and flushes. Returns false if any write failed
  // or a section's payload did not have its announced size.
  [[nodiscard]] bool finish();

 private:
  void put(const void* data, size_t size);

  FdWriter out_;
  uint64_t checksum_ = result::kChecksumSeed;
  uint64_t section_left_ = 0;
  bool size_mismatch_ = false;
};

}  // namespace memtrack::core
