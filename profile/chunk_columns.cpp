// Chunks by column (see chunk_columns.h). Both directions walk the records by their tags:
// which fields a record has, and so which streams its varints go to, follows from its tag.
#include "profile/chunk_columns.h"

#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>

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

// The varint at `*p` (before `end`); false if it does not end there.
bool read_varint(const uint8_t** p, const uint8_t* end, uint64_t* value) {
  if (*p < end && **p < 0x80) {  // most values: times, small sizes and stack ids
    *value = *(*p)++;
    return true;
  }
  uint64_t v = 0;
  for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
    uint8_t byte = *(*p)++;
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;
}

// A varint's few bytes, one by one: a range insert per field (an out-of-line call that
// also handles inserting in the middle) was 7% of packing's CPU on malloc churn.
void append_bytes(std::vector<uint8_t>& out, const uint8_t* bytes, size_t n) {
  for (size_t k = 0; k < n; ++k) out.push_back(bytes[k]);
}

void write_varint(std::vector<uint8_t>& out, uint64_t value) {
  uint8_t bytes[10];
  size_t n = format::put_varint(bytes, value);
  out.insert(out.end(), bytes, bytes + n);
}

// Two passes over the records: the first measures each stream, the second copies every
// field's bytes to its stream's place in the one output buffer. Growing six vectors byte by
// byte (each reserved at half a chunk, 12 MiB mapped and faulted in per chunk) was a tenth
// of the packing's CPU on malloc churn.
std::vector<uint8_t> to_columns(const std::vector<uint8_t>& records,
                                const std::vector<uint8_t>& ages) {
  std::array<size_t, kStreams> sizes{};
  const uint8_t* data = records.data();
  size_t pos = 0;
  while (pos < records.size()) {
    uint8_t tag = data[pos++];
    ++sizes[kTags];
    bool bad = false;
    Fields fields = fields_of(tag, &bad);
    for (size_t i = 0; i < fields.count; ++i) {
      size_t n = varint_length(data + pos, records.size() - pos);
      sizes[fields.streams[i]] += n;
      pos += n;
    }
  }
  sizes[kAges] = ages.size();
  std::vector<uint8_t> out(1 + kHeaderSize + pos + ages.size());
  out[0] = static_cast<uint8_t>(ChunkLayout::kColumns);
  std::array<uint8_t*, kStreams> at{};
  uint8_t* next = out.data() + 1 + kHeaderSize;
  for (size_t i = 0; i < kStreams; ++i) {
    auto size = static_cast<uint32_t>(sizes[i]);
    std::memcpy(out.data() + 1 + 4 * i, &size, 4);
    at[i] = next;
    next += sizes[i];
  }
  std::array<uint8_t*, kStreams> end{};
  for (size_t i = 0; i < kStreams; ++i) end[i] = at[i] + sizes[i];
  pos = 0;
  while (pos < records.size()) {
    uint8_t tag = data[pos++];
    *at[kTags]++ = tag;
    bool bad = false;
    Fields fields = fields_of(tag, &bad);
    for (size_t i = 0; i < fields.count; ++i) {
      uint8_t*& to = at[fields.streams[i]];
      // Eight bytes at a time where both sides have them: the varint's length from its
      // continuation bits, and the word stored whole (the bytes after the varint are written
      // over by the stream's next ones). A loop per byte mispredicted on every length change.
      if (pos + 8 <= records.size() && to + 8 <= end[fields.streams[i]]) {
        uint64_t word = 0;
        std::memcpy(&word, data + pos, 8);
        uint64_t stops = ~word & 0x8080808080808080ull;
        if (stops != 0) {
          size_t n = static_cast<size_t>(std::countr_zero(stops)) / 8 + 1;
          std::memcpy(to, &word, 8);
          to += n;
          pos += n;
          continue;
        }
      }
      size_t n = varint_length(data + pos, records.size() - pos);  // as in the first pass
      for (size_t k = 0; k < n; ++k) *to++ = data[pos + k];
      pos += n;
    }
  }
  if (!ages.empty()) std::memcpy(at[kAges], ages.data(), ages.size());
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
      append_bytes(records, at[s], n);
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

// The pairs layout. Its symbols: below kFirstPairSymbol, a record without block fields, as
// its tag (a thread, an RSS sample) or, for a temporary free, its tag without
// kTemporaryBit plus kTemporarySymbol; from kFirstPairSymbol on, a record with block fields:
// kFirstPairSymbol + pair * kPairKinds + the index of its tag in kPairKindTags.
enum PairStream : size_t { kSymbols, kPairTimes, kPairTable, kPairOther, kPairAges, kPairStreams };
constexpr size_t kPairsHeaderSize = 4 * kPairStreams;
constexpr uint8_t kTemporarySymbol = 8;
constexpr uint64_t kFirstPairSymbol = 16;
constexpr std::array<uint8_t, 5> kPairKindTags = {
    static_cast<uint8_t>(Tag::kAlloc), static_cast<uint8_t>(Tag::kFree),
    static_cast<uint8_t>(Tag::kReallocFree),
    static_cast<uint8_t>(static_cast<uint8_t>(Tag::kFree) | kTemporaryNamedBit),
    static_cast<uint8_t>(static_cast<uint8_t>(Tag::kReallocFree) | kTemporaryNamedBit)};
constexpr uint64_t kPairKinds = kPairKindTags.size();

// The pair numbers of (size, stack id), from 0 in the order of their first use: open
// addressing with linear probing (a lookup per event: std::unordered_map's node chasing
// would cost as much as the compression).
class PairNumbers {
 public:
  PairNumbers() : slots_(kInitialSlots) {}

  // The pair's number; sets `*added` if it is new.
  uint64_t number_of(uint64_t size, uint64_t stack, bool* added) {
    if ((count_ + 1) * 4 > slots_.size() * 3) grow();
    Slot& slot = slots_[find(size, stack)];
    *added = slot.number == 0;
    if (*added) slot = Slot{size, stack, ++count_};
    return slot.number - 1;
  }

 private:
  static constexpr size_t kInitialSlots = 256;
  struct Slot {
    uint64_t size = 0;
    uint64_t stack = 0;
    uint64_t number = 0;  // the pair's number + 1; 0 for an empty slot
  };
  size_t find(uint64_t size, uint64_t stack) const {
    size_t mask = slots_.size() - 1;
    size_t i = static_cast<size_t>(
                   ((size * 0x9E3779B97F4A7C15ull) ^ stack) * 0xC2B2AE3D27D4EB4Full >> 32) &
               mask;
    while (slots_[i].number != 0 && (slots_[i].size != size || slots_[i].stack != stack)) {
      i = (i + 1) & mask;
    }
    return i;
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.number != 0) slots_[find(s.size, s.stack)] = s;
    }
  }
  std::vector<Slot> slots_;  // a power of two
  uint64_t count_ = 0;
};

// Varints appended to a buffer grown ahead (no per-byte capacity check: the encoder writes
// a few per record).
class VarintBuffer {
 public:
  explicit VarintBuffer(size_t expected) : bytes_(expected + kMaxVarint) {}
  void put(uint64_t value) {
    if (size_ + kMaxVarint > bytes_.size()) [[unlikely]]
      grow();
    size_ += format::put_varint(bytes_.data() + size_, value);
  }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return size_; }

 private:
  static constexpr size_t kMaxVarint = 10;
  [[gnu::noinline]] void grow() { bytes_.resize(2 * bytes_.size()); }
  std::vector<uint8_t> bytes_;
  size_t size_ = 0;
};

// The largest number dividing every time difference and age of the chunk (1 if they are all
// 0), kept up to date value by value: a coarse clock (CLOCK_MONOTONIC_COARSE ticks 4 ms
// apart at 250 Hz) makes times all multiples of its tick, which then cost no bits. A
// division per nonzero value, none once the unit is 1 (a precise clock: the first values).
class TimeUnit {
 public:
  void add(uint64_t value) {
    if (value == 0 || unit_ == 1) return;
    if (unit_ == 0 || value % unit_ != 0) unit_ = std::gcd(unit_, value);
  }
  uint64_t unit() const { return unit_ == 0 ? 1 : unit_; }

 private:
  uint64_t unit_ = 0;
};

// `varints` with each value divided by `unit`.
VarintBuffer divided(const VarintBuffer& varints, uint64_t unit) {
  VarintBuffer out(varints.size());
  const uint8_t* p = varints.data();
  const uint8_t* end = p + varints.size();
  uint64_t value = 0;
  while (read_varint(&p, end, &value)) out.put(value / unit);
  return out;
}

uint64_t pair_kind(uint8_t tag) {
  switch (tag) {  // kPairKindTags' indexes
    case static_cast<uint8_t>(Tag::kAlloc):
      return 0;
    case static_cast<uint8_t>(Tag::kFree):
      return 1;
    case static_cast<uint8_t>(Tag::kReallocFree):
      return 2;
    case static_cast<uint8_t>(Tag::kFree) | kTemporaryNamedBit:
      return 3;
    case static_cast<uint8_t>(Tag::kReallocFree) | kTemporaryNamedBit:
      return 4;
    default:
      break;
  }
  throw Error("a heap profile record the packed format cannot hold (tag " +
              std::to_string(static_cast<int>(tag)) + ")");
}

std::vector<uint8_t> to_pairs(const std::vector<uint8_t>& records,
                              const std::vector<uint8_t>& ages) {
  VarintBuffer symbols(records.size() / 3);
  VarintBuffer times(records.size() / 3);
  VarintBuffer table(256);
  VarintBuffer other(64);
  VarintBuffer age_varints(ages.size());
  TimeUnit unit;
  PairNumbers pairs;
  // The records' fields as fields_of() lays them out, read inline: this loop is most of the
  // packing's own time on regular programs.
  const uint8_t* p = records.data();
  const uint8_t* end = p + records.size();
  uint64_t dt = 0;
  uint64_t value = 0;
  while (p < end) {
    uint8_t tag = *p++;
    auto kind = static_cast<Tag>(tag & ~kFlagBits);
    if (kind == Tag::kThread) {
      if (!read_varint(&p, end, &value)) break;
      symbols.put(tag);
      other.put(value);
      continue;
    }
    if (kind != Tag::kSample && kind != Tag::kAlloc && kind != Tag::kFree &&
        kind != Tag::kReallocFree) {
      break;
    }
    if (!read_varint(&p, end, &dt)) break;
    times.put(dt);
    unit.add(dt);
    if (kind == Tag::kSample) {
      if (!read_varint(&p, end, &value)) break;
      symbols.put(tag);
      other.put(value);
      continue;
    }
    if (kind != Tag::kAlloc && (tag & format::kTemporaryBit) != 0) {
      symbols.put((tag & ~format::kTemporaryBit) + kTemporarySymbol);
      continue;
    }
    uint64_t size = 0;
    uint64_t stack = 0;
    if (!read_varint(&p, end, &size) || !read_varint(&p, end, &stack)) break;
    bool added = false;
    uint64_t pair = pairs.number_of(size, stack, &added);
    if (added) {
      table.put(size);
      table.put(stack);
    }
    symbols.put(kFirstPairSymbol + pair * kPairKinds + pair_kind(tag));
  }
  p = ages.data();
  end = p + ages.size();
  uint64_t age = 0;
  while (read_varint(&p, end, &age)) {
    age_varints.put(age);
    unit.add(age);
  }
  if (unit.unit() != 1) {
    times = divided(times, unit.unit());
    age_varints = divided(age_varints, unit.unit());
  }

  const std::array<const VarintBuffer*, kPairStreams> streams = {&symbols, &times, &table, &other,
                                                                 &age_varints};
  std::vector<uint8_t> out = {static_cast<uint8_t>(ChunkLayout::kPairs)};
  write_varint(out, unit.unit());
  size_t total = out.size() + kPairsHeaderSize;
  for (const VarintBuffer* s : streams) total += s->size();
  out.reserve(total);
  for (const VarintBuffer* s : streams) {
    auto size = static_cast<uint32_t>(s->size());
    const auto* bytes = reinterpret_cast<const uint8_t*>(&size);
    out.insert(out.end(), bytes, bytes + 4);
  }
  for (const VarintBuffer* s : streams) out.insert(out.end(), s->data(), s->data() + s->size());
  return out;
}

void from_pairs(const uint8_t* data, size_t size, const std::string& path,
                std::vector<uint8_t>& records, std::vector<uint8_t>& ages) {
  auto corrupt = [&](const char* what) {
    return Error(path + ": corrupt heap profile (" + what + ")");
  };
  const uint8_t* end = data + size;
  uint64_t unit = 0;
  if (!read_varint(&data, end, &unit) || unit == 0) throw corrupt("bad chunk time unit");
  if (static_cast<size_t>(end - data) < kPairsHeaderSize) throw corrupt("a chunk is too short");
  std::array<const uint8_t*, kPairStreams> at{};
  std::array<const uint8_t*, kPairStreams> stream_end{};
  const uint8_t* next = data + kPairsHeaderSize;
  for (size_t i = 0; i < kPairStreams; ++i) {
    uint32_t n = 0;
    std::memcpy(&n, data + 4 * i, 4);
    if (n > static_cast<size_t>(end - next)) throw corrupt("bad chunk columns");
    at[i] = next;
    next += n;
    stream_end[i] = next;
  }
  if (next != end) throw corrupt("bad chunk columns");
  auto read = [&](PairStream s) {
    uint64_t value = 0;
    if (!read_varint(&at[s], stream_end[s], &value)) {
      throw corrupt("a chunk's column is cut short");
    }
    return value;
  };
  auto read_time = [&](PairStream s) {
    uint64_t value = read(s);
    if (value > std::numeric_limits<uint64_t>::max() / unit) throw corrupt("bad chunk time");
    return value * unit;
  };
  std::vector<std::array<uint64_t, 2>> table;  // size and stack id by pair number
  records.reserve(records.size() + 3 * size);
  while (at[kSymbols] < stream_end[kSymbols]) {
    uint64_t symbol = read(kSymbols);
    if (symbol >= kFirstPairSymbol) {
      uint64_t pair = (symbol - kFirstPairSymbol) / kPairKinds;
      if (pair == table.size()) {
        uint64_t block_size = read(kPairTable);
        table.push_back({block_size, read(kPairTable)});
      } else if (pair > table.size()) {
        throw corrupt("a chunk names a block it has not described");
      }
      records.push_back(kPairKindTags[(symbol - kFirstPairSymbol) % kPairKinds]);
      write_varint(records, read_time(kPairTimes));
      write_varint(records, table[pair][0]);
      write_varint(records, table[pair][1]);
      continue;
    }
    auto tag = static_cast<uint8_t>(symbol);
    if (tag >= kTemporarySymbol) {
      tag = static_cast<uint8_t>((tag - kTemporarySymbol) | format::kTemporaryBit);
    }
    bool bad = false;
    Fields fields = fields_of(tag, &bad);
    if (bad || fields.count == 3) throw corrupt("unknown record in a chunk");
    records.push_back(tag);
    for (size_t i = 0; i < fields.count; ++i) {
      write_varint(records, fields.streams[i] == kTimes ? read_time(kPairTimes) : read(kPairOther));
    }
  }
  for (PairStream s : {kPairTimes, kPairTable, kPairOther}) {
    if (at[s] != stream_end[s]) throw corrupt("a chunk's columns do not match its records");
  }
  while (at[kPairAges] < stream_end[kPairAges]) write_varint(ages, read_time(kPairAges));
}

}  // namespace

std::vector<uint8_t> encode_chunk(const std::vector<uint8_t>& records,
                                  const std::vector<uint8_t>& ages, ChunkLayout layout) {
  switch (layout) {
    case ChunkLayout::kColumns:
      return to_columns(records, ages);
    case ChunkLayout::kPairs:
      return to_pairs(records, ages);
    case ChunkLayout::kRows:
      break;
  }
  return to_rows(records, ages);
}

void decode_chunk(const uint8_t* data, size_t size, const std::string& path,
                  std::vector<uint8_t>& records, std::vector<uint8_t>& ages) {
  if (size < 5) throw Error(path + ": corrupt heap profile (a chunk is too short)");
  if (data[0] == static_cast<uint8_t>(ChunkLayout::kColumns)) {
    from_columns(data + 1, size - 1, path, records, ages);
    return;
  }
  if (data[0] == static_cast<uint8_t>(ChunkLayout::kPairs)) {
    from_pairs(data + 1, size - 1, path, records, ages);
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
