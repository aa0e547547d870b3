// Result-file writer. Runtime-safe: no allocation. x86-64 is little-endian, which is the
// file's byte order, so values are written as they are in memory.
#include "core/result_writer.h"

namespace memtrack::core {

void ResultWriter::put(const void* data, size_t size) {
  checksum_ = result::checksum_update(checksum_, static_cast<const unsigned char*>(data), size);
  out_.write(static_cast<const char*>(data), size);
  if (size > section_left_) {
    size_mismatch_ = true;
    section_left_ = 0;
  } else {
    section_left_ -= size;
  }
}

void ResultWriter::write_header() {
  section_left_ = result::kHeaderSize;
  put(result::kMagic, sizeof(result::kMagic));
  put_u32(result::kVersion);
  put_u32(result::kHeaderSize);
}

void ResultWriter::begin_section(result::Section type, uint64_t payload_size) {
  if (section_left_ != 0) size_mismatch_ = true;
  section_left_ = result::kSectionHeaderSize;
  put_u32(static_cast<uint32_t>(type));
  put_u32(0);
  put_u64(payload_size);
  section_left_ = payload_size;
}

bool ResultWriter::finish() {
  uint64_t checksum = checksum_;
  begin_section(result::Section::kEnd, 8);
  put_u64(checksum);
  if (section_left_ != 0) size_mismatch_ = true;
  out_.flush();
  return !out_.failed() && !size_mismatch_;
}

}  // namespace memtrack::core
