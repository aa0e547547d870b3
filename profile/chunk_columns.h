// A packed chunk's records in a row, by column or by pair (packed_format.h, versions 2 and 3).
// By column, the tag bytes, the time differences, the sizes, the stack ids, the rest (thread
// ids, RSS samples) and the ages each have a stream of their own: zstd then codes each kind
// of field with its own statistics, which made malloc churn (random sizes) 21% smaller and 4
// times faster to compress; records in a row keep whole repeated records as one match, which
// suited very regular programs (C++ containers: 12% smaller than by column). By pair
// (version 3), each record is one symbol naming its kind and its (size, stack id) pair, the
// pairs numbered in the chunk in the order of their first use: a program with few distinct
// pairs (C++ containers: 30 per chunk) then costs about a byte per event before zstd, and
// times and ages are stored in the chunk's time unit (the largest number dividing them all:
// a coarse clock's tick). The packer picks per chunk (docs/performance.md, "Heap profiles").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memtrack::profile {

// How a chunk's records are laid out, its first byte (packed files of version 2 and later).
enum class ChunkLayout : uint8_t {
  kRows = 0,     // u32 records_size, the records one after the other, then the ages
  kColumns = 1,  // u32 size of each of the 6 streams, then the streams
  // Version 3: varint time unit, u32 size of each of the 5 streams (symbols, times in the
  // unit, the new pairs' size and stack id, thread ids and RSS, ages in the unit), the streams
  kPairs = 2,
};

// The records of a chunk (packed_format.h's record layout) and its ages, laid out as
// `layout`, after the layout byte.
std::vector<uint8_t> encode_chunk(const std::vector<uint8_t>& records,
                                  const std::vector<uint8_t>& ages, ChunkLayout layout);

// The inverse, whatever the layout: appends the records to `records` and the ages to `ages`.
// Throws Error naming `path` if the chunk is malformed.
void decode_chunk(const uint8_t* data, size_t size, const std::string& path,
                  std::vector<uint8_t>& /*out*/ records, std::vector<uint8_t>& /*out*/ ages);

}  // namespace memtrack::profile
