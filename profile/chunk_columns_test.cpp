// A packed chunk's three layouts (chunk_columns.h): each gives back the records and ages the
// packer wrote, malformed chunks are one error, and pairs number each (size, stack id) once.
#include "profile/chunk_columns.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/error.h"
#include "core/profile_format.h"

namespace memtrack::profile {
namespace {

namespace format = core::profile;

TEST(ChunkLayoutTest, EveryLayoutGivesBackTheRecordsAndAges) {
  // A thread record, an allocation, a free with its block, a temporary free, a named
  // temporary free and an RSS sample, as the packer writes them.
  std::vector<uint8_t> records = {
      4,    9,                     // thread 9
      1,    5, 0x80, 0x01, 3,      // allocation: dt 5, size 128, stack 3
      2,    1, 16,   2,            // free: dt 1, size 16, stack 2 (age in ages)
      0x82, 0,                     // temporary free: dt 0
      0x42, 7, 0x90, 0x4e, 1,      // named temporary free: dt 7, size 10000, stack 1
      6,    2, 0x80, 0x80, 0x04};  // sample: dt 2, RSS 65536
  std::vector<uint8_t> ages = {0x90, 0x4e, 3};
  for (ChunkLayout layout : {ChunkLayout::kRows, ChunkLayout::kColumns, ChunkLayout::kPairs}) {
    std::vector<uint8_t> chunk = encode_chunk(records, ages, layout);
    EXPECT_EQ(chunk[0], static_cast<uint8_t>(layout));
    std::vector<uint8_t> back_records;
    std::vector<uint8_t> back_ages;
    decode_chunk(chunk.data(), chunk.size(), "x", back_records, back_ages);
    EXPECT_EQ(back_records, records);
    EXPECT_EQ(back_ages, ages);
  }
}

TEST(ChunkLayoutTest, MalformedColumnsAreOneError) {
  std::vector<uint8_t> records = {1, 5, 0x80, 0x01, 3, 2, 1, 16, 2};
  std::vector<uint8_t> chunk = encode_chunk(records, {4}, ChunkLayout::kColumns);
  std::vector<uint8_t> out;
  std::vector<uint8_t> ages;
  std::vector<uint8_t> cut(chunk.begin(), chunk.end() - 2);
  EXPECT_THROW(decode_chunk(cut.data(), cut.size(), "x", out, ages), Error);
  std::vector<uint8_t> bad_tag = chunk;
  bad_tag[1 + 24] = 9;  // the first tag
  EXPECT_THROW(decode_chunk(bad_tag.data(), bad_tag.size(), "x", out, ages), Error);
  std::vector<uint8_t> bad_layout = chunk;
  bad_layout[0] = 3;
  EXPECT_THROW(decode_chunk(bad_layout.data(), bad_layout.size(), "x", out, ages), Error);
}

// Decodes `chunk`, expecting it to be laid out by pair and to give back `records`, `ages`.
void expect_pairs_round_trip(const std::vector<uint8_t>& records,
                             const std::vector<uint8_t>& ages) {
  std::vector<uint8_t> chunk = encode_chunk(records, ages, ChunkLayout::kPairs);
  ASSERT_EQ(chunk[0], static_cast<uint8_t>(ChunkLayout::kPairs));
  std::vector<uint8_t> back_records;
  std::vector<uint8_t> back_ages;
  decode_chunk(chunk.data(), chunk.size(), "x", back_records, back_ages);
  EXPECT_EQ(back_records, records);
  EXPECT_EQ(back_ages, ages);
}

TEST(ChunkLayoutTest, PairsNumberEachSizeAndStackOnce) {
  // Allocations and frees of two pairs, again and again: the pairs' fields are stored once
  // each, every record after that is one symbol byte (and its time difference).
  std::vector<uint8_t> records;
  for (int i = 0; i < 100; ++i) {
    records.insert(records.end(), {1, 0, 24, 1, 1, 0, 0x80, 0x01, 2, 2, 0, 24, 1});
  }
  std::vector<uint8_t> ages(100, 0);
  expect_pairs_round_trip(records, ages);
  std::vector<uint8_t> chunk = encode_chunk(records, ages, ChunkLayout::kPairs);
  size_t header = 1 + 1 + 4 * 5;                              // layout, time unit 1, stream sizes
  size_t table = 2 + 3;                                       // (24, 1) and (128, 2)
  EXPECT_EQ(chunk.size(), header + 300 + 300 + table + 100);  // symbols, times, table, ages
}

TEST(ChunkLayoutTest, PairsStoreTimesInTheChunksTimeUnit) {
  // Time differences 0, 4000 and 8000, ages 4000 and 12000: a 4000 us unit; the values in
  // the unit are below 128, one byte each.
  std::vector<uint8_t> records = {1, 0,    24,   1,       // dt 0
                                  1, 0xa0, 0x1f, 24, 1,   // dt 4000
                                  2, 0xc0, 0x3e, 24, 1};  // dt 8000, a free
  std::vector<uint8_t> ages = {0xa0, 0x1f, 0xe0, 0x5d};   // 4000, 12000
  expect_pairs_round_trip(records, ages);
  std::vector<uint8_t> chunk = encode_chunk(records, ages, ChunkLayout::kPairs);
  EXPECT_EQ(chunk[1], 0xa0);  // the unit, 4000, as a varint
  EXPECT_EQ(chunk[2], 0x1f);
}

TEST(ChunkLayoutTest, PairsKeepLargeValuesAndManyPairs) {
  // More pairs than a symbol byte can number (symbols become 2- and 3-byte varints), a size
  // of 2^64 - 1, a time difference of 2^63 (the unit), records without blocks and an empty
  // chunk.
  std::vector<uint8_t> records;
  uint8_t bytes[10];
  for (uint64_t i = 0; i < 5000; ++i) {
    records.push_back(i % 3 == 0 ? 1 : 0x42);
    records.push_back(0);
    records.insert(records.end(), bytes, bytes + format::put_varint(bytes, i << 40));
    records.insert(records.end(), bytes, bytes + format::put_varint(bytes, i % 7));
  }
  records.push_back(1);
  records.insert(records.end(), bytes, bytes + format::put_varint(bytes, uint64_t{1} << 63));
  records.insert(records.end(), bytes, bytes + format::put_varint(bytes, ~uint64_t{0}));
  records.push_back(0);
  expect_pairs_round_trip(records, {});
  expect_pairs_round_trip({}, {});
  expect_pairs_round_trip({4, 9, 0x82, 0, 0x83, 0, 6, 0, 5}, {});
}

TEST(ChunkLayoutTest, MalformedPairsAreOneError) {
  std::vector<uint8_t> records = {1, 5, 0x80, 0x01, 3, 2, 1, 16, 2, 0x82, 0};
  std::vector<uint8_t> chunk = encode_chunk(records, {4}, ChunkLayout::kPairs);
  // layout, unit, 5 sizes: symbols (16, 16 + 5 + 1, 2 + 8), times, table, other, ages
  size_t symbols = 1 + 1 + 20;
  std::vector<uint8_t> out;
  std::vector<uint8_t> ages;
  for (size_t cut = 1; cut < chunk.size(); ++cut) {
    std::vector<uint8_t> shorter(chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_THROW(decode_chunk(shorter.data(), shorter.size(), "x", out, ages), Error) << cut;
  }
  std::vector<uint8_t> zero_unit = chunk;
  zero_unit[1] = 0;
  EXPECT_THROW(decode_chunk(zero_unit.data(), zero_unit.size(), "x", out, ages), Error);
  std::vector<uint8_t> unknown_pair = chunk;
  unknown_pair[symbols + 1] = 16 + 5 * 2;  // pair 2 when only pair 1 is next
  EXPECT_THROW(decode_chunk(unknown_pair.data(), unknown_pair.size(), "x", out, ages), Error);
  std::vector<uint8_t> block_tag = chunk;
  block_tag[symbols + 2] = 1;  // an allocation without a pair
  EXPECT_THROW(decode_chunk(block_tag.data(), block_tag.size(), "x", out, ages), Error);
  std::vector<uint8_t> bad_tag = chunk;
  bad_tag[symbols + 2] = 8;  // a temporary free of tag 0
  EXPECT_THROW(decode_chunk(bad_tag.data(), bad_tag.size(), "x", out, ages), Error);
}

}  // namespace
}  // namespace memtrack::profile
