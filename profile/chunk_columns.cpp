// Chunks by column (see chunk_columns.h). Both directions walk the records by their tags:
// which fields a record has, and so which streams its varints go to, follows from its tag.
#include "profile/chunk_columns.h"

#include <array>
#include <cstring>

#include "common/error.h"
#include "core/profile_format.h"
#include "profile/packed_format.h"

namespace memtrack::profile {
namespace {

namespace format = core::profile;
using format::Tag;

enum Stream : size_t { kTags, kTimes, kSizes, kStacks, kOther, kAges, kStreams };
constexpr size_t kHeaderSize = 4 * kStreams;
constexpr uint8_t kFlagBits = format::kTemporaryBit | kTemporaryNamedBit;

// The fields after the tag, in order, as the streams they go to.
struct Fields {
  std::array<Stream, 3> streams;
  size_t count;
};

// `bad` for a tag a packed chunk never has.
Fields fields_of(uint8_t tag_byte, bool* bad) {
  *bad = false;
  switch (static_cast<Tag>(tag_byte & ~kFlagBits)) {
    case Tag::kThread:
      return {{kOther}, 1};
    case Tag::kSample:
      return {{kTimes, kOther}, 2};
    case Tag::kAlloc:
      return {{kTimes, kSizes, kStacks}, 3};
    case Tag::kFree:
    case Tag::kReallocFree:
      if (tag_byte & format::kTemporaryBit) return {{kTimes}, 1};
      return {{kTimes, kSizes, kStacks}, 3};
    default:
      *bad = true;
      return {{}, 0};
  }
}

// The length of the varint at `p` (at most `left` bytes); 0 if it does not end there.
size_t varint_length(const uint8_t* p, size_t left) {
  for (size_t i = 0; i < left && i < 10; ++i) {
    if ((p[i] & 0x80) == 0) return i + 1;
  }
  return 0;
}

std::vector<uint8_t> to_columns(const std::vector<uint8_t>& records,
                                const std::vector<uint8_t>& ages) {
  std::array<std::vector<uint8_t>, kStreams> streams;
  for (auto& s : streams) s.reserve(records.size() / 2);
  size_t pos = 0;
  while (pos < records.size()) {
    uint8_t tag = records[pos++];
    streams[kTags].push_back(tag);
    bool bad = false;
    Fields fields = fields_of(tag, &bad);
    for (size_t i = 0; i < fields.count; ++i) {
      size_t n = varint_length(records.data() + pos, records.size() - pos);
      std::vector<uint8_t>& out = streams[fields.streams[i]];
      out.insert(out.end(), records.begin() + static_cast<std::ptrdiff_t>(pos),
                 records.begin() + static_cast<std::ptrdiff_t>(pos + n));
      pos += n;
    }
  }
  streams[kAges] = ages;
  std::vector<uint8_t> out(1 + kHeaderSize);
  out[0] = static_cast<uint8_t>(ChunkLayout::kColumns);
  for (size_t i = 0; i < kStreams; ++i) {
    auto size = static_cast<uint32_t>(streams[i].size());
    std::memcpy(out.data() + 1 + 4 * i, &size, 4);
  }
  for (const auto& s : streams) out.insert(out.end(), s.begin(), s.end());
  return out;
}

void from_columns(const uint8_t* data, size_t size, const std::string& path,
                  std::vector<uint8_t>& records, std::vector<uint8_t>& ages) {
  auto corrupt = [&](const char* what) {
    return Error(path + ": corrupt heap profile (" + what + ")");
  };
  if (size < kHeaderSize) throw corrupt("a chunk is too short");
  std::array<const uint8_t*, kStreams> at{};
  std::array<size_t, kStreams> left{};
  size_t offset = kHeaderSize;
  for (size_t i = 0; i < kStreams; ++i) {
    uint32_t n = 0;
    std::memcpy(&n, data + 4 * i, 4);
    if (n > size - offset) throw corrupt("bad chunk columns");
    at[i] = data + offset;
    left[i] = n;
    offset += n;
  }
  if (offset != size) throw corrupt("bad chunk columns");
  records.reserve(records.size() + size);
  for (size_t t = 0; t < left[kTags]; ++t) {
    uint8_t tag = at[kTags][t];
    records.push_back(tag);
    bool bad = false;
    Fields fields = fields_of(tag, &bad);
    if (bad) throw corrupt("unknown record in a chunk");
    for (size_t i = 0; i < fields.count; ++i) {
      Stream s = fields.streams[i];
      size_t n = varint_length(at[s], left[s]);
      if (n == 0) throw corrupt("a chunk's column is cut short");
      records.insert(records.end(), at[s], at[s] + n);
      at[s] += n;
      left[s] -= n;
    }
  }
  for (Stream s : {kTimes, kSizes, kStacks, kOther}) {
    if (left[s] != 0) throw corrupt("a chunk's columns do not match its records");
  }
  ages.insert(ages.end(), at[kAges], at[kAges] + left[kAges]);
}

std::vector<uint8_t> to_rows(const std::vector<uint8_t>& records,
                             const std::vector<uint8_t>& ages) {
  std::vector<uint8_t> out(5);
  out[0] = static_cast<uint8_t>(ChunkLayout::kRows);
  auto size = static_cast<uint32_t>(records.size());
  std::memcpy(out.data() + 1, &size, 4);
  out.reserve(5 + records.size() + ages.size());
  out.insert(out.end(), records.begin(), records.end());
  out.insert(out.end(), ages.begin(), ages.end());
  return out;
}

}  // namespace

std::vector<uint8_t> encode_chunk(const std::vector<uint8_t>& records,
                                  const std::vector<uint8_t>& ages, ChunkLayout layout) {
  return layout == ChunkLayout::kColumns ? to_columns(records, ages) : to_rows(records, ages);
}

void decode_chunk(const uint8_t* data, size_t size, const std::string& path,
                  std::vector<uint8_t>& records, std::vector<uint8_t>& ages) {
  if (size < 5) throw Error(path + ": corrupt heap profile (a chunk is too short)");
  if (data[0] == static_cast<uint8_t>(ChunkLayout::kColumns)) {
    from_columns(data + 1, size - 1, path, records, ages);
    return;
  }
  if (data[0] != static_cast<uint8_t>(ChunkLayout::kRows)) {
    throw Error(path + ": corrupt heap profile (unknown chunk layout)");
  }
  uint32_t records_size = 0;
  std::memcpy(&records_size, data + 1, 4);
  if (records_size > size - 5) throw Error(path + ": corrupt heap profile (bad chunk)");
  records.insert(records.end(), data + 5, data + 5 + records_size);
  ages.insert(ages.end(), data + 5 + records_size, data + size);
}

}  // namespace memtrack::profile
