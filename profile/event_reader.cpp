// Reading heap profiles (see event_reader.h).
#include "profile/event_reader.h"

#include <zlib.h>

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "common/error.h"
#include "core/profile_format.h"
#include "profile/chunk_columns.h"
#include "profile/packed_format.h"
#include "profile/packer.h"
#include "report/result_reader.h"

namespace memtrack::profile {

namespace format = core::profile;
using format::Tag;

namespace {

constexpr size_t kMaxRecord = 16 + 10 * 260;
constexpr uint64_t kMaxModulesBytes = uint64_t{64} << 20;
constexpr uint32_t kMaxDepth = 4096;

// Stack ids are the depot's, dense from 1 (a few are never written: their allocation did not
// fit in the table). An id far beyond the number of stacks is corruption, and would make the
// analysis's per-id arrays as large as the id.
bool plausible_stack_id(uint64_t id, size_t stacks_so_far) {
  return id >= 1 && id <= 2 * stacks_so_far + 1024;
}

std::ifstream open_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path);
  return in;
}

template <typename T>
T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// A bounded reader over decompressed metadata.
struct Bytes {
  const uint8_t* p;
  size_t left;
  const std::string& path;
  template <typename T>
  T get() {
    need(sizeof(T));
    T value = load<T>(p);
    p += sizeof(T);
    left -= sizeof(T);
    return value;
  }
  void need(size_t n) const {
    if (n > left) throw Error(path + ": corrupt heap profile (metadata truncated)");
  }
};

// Version 4 frames carry zstd's content checksum (packed_format.h, "Integrity"): one without
// has had its header flipped.
void require_checksum(const std::vector<uint8_t>& frame, uint32_t version,
                      const std::string& path) {
  if (version < 4) return;
  // RFC 8878, 3.1.1: the magic number, then the frame header descriptor, whose bit 2 is the
  // Content_Checksum_Flag.
  constexpr uint8_t kMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};
  if (frame.size() < 5 || std::memcmp(frame.data(), kMagic, 4) != 0 || (frame[4] & 0x04) == 0) {
    throw Error(path + ": corrupt heap profile (a compressed chunk without its checksum)");
  }
}

// Decompresses a zstd frame that must expand to exactly `expected` bytes. The output grows
// with what the frame really produces (doubling from 1 MiB), never to `expected` at once:
// that size comes from the file, and a corrupt one (up to 4 GiB for the metadata) must not
// cost that much memory before the data shows it is wrong.
std::vector<uint8_t> decompress(const std::vector<uint8_t>& in, size_t expected,
                                const std::string& path) {
  auto corrupt = [&path] {
    return Error(path + ": corrupt heap profile (a compressed chunk does not decompress)");
  };
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> context(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (context == nullptr) throw std::bad_alloc();
  std::vector<uint8_t> out;
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  constexpr size_t kFirstStep = size_t{1} << 20;
  for (;;) {
    size_t produced = out.size();
    size_t room = std::min(expected - produced, std::max(produced, kFirstStep));
    out.resize(produced + room);
    ZSTD_outBuffer output{out.data(), out.size(), produced};
    size_t left = ZSTD_decompressStream(context.get(), &output, &input);
    out.resize(output.pos);
    if (ZSTD_isError(left)) throw corrupt();
    if (left == 0) break;  // the frame is whole
    // Not whole: either the input ran out (cut short) or the output is full; a frame that
    // wants more than `expected` bytes is corrupt as well.
    if (output.pos < output.size || out.size() == expected) throw corrupt();
  }
  if (out.size() != expected || input.pos != input.size) throw corrupt();
  return out;
}

}  // namespace

class EventReader::Source {
 public:
  virtual ~Source() = default;
  // Appends the next chunk's records to `out`; false at the end.
  virtual bool more(std::vector<uint8_t>& out) = 0;
  // The next age of a free, from the chunks' separate age streams.
  virtual uint64_t next_age() = 0;
};

namespace {

class PackedSource : public EventReader::Source {
 public:
  PackedSource(std::ifstream in, std::vector<ChunkInfo> chunks, const std::string& path,
               uint32_t version)
      : in_(std::move(in)), chunks_(std::move(chunks)), path_(path), version_(version) {}
  bool more(std::vector<uint8_t>& out) override {
    if (next_ >= chunks_.size()) return false;
    const ChunkInfo& chunk = chunks_[next_++];
    std::vector<uint8_t> compressed(chunk.compressed_size);
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(chunk.offset));
    in_.read(reinterpret_cast<char*>(compressed.data()), chunk.compressed_size);
    if (static_cast<size_t>(in_.gcount()) != chunk.compressed_size) {
      throw Error(path_ + ": corrupt heap profile (a chunk is cut short)");
    }
    require_checksum(compressed, version_, path_);
    std::vector<uint8_t> raw = decompress(compressed, chunk.raw_size, path_);
    if (age_pos_ > 0) {
      ages_.erase(ages_.begin(), ages_.begin() + static_cast<std::ptrdiff_t>(age_pos_));
      age_pos_ = 0;
    }
    if (version_ >= 2) {
      decode_chunk(raw.data(), raw.size(), path_, out, ages_);
      return true;
    }
    if (raw.size() < 4) throw Error(path_ + ": corrupt heap profile (a chunk is too short)");
    uint32_t records = load<uint32_t>(raw.data());
    if (records > raw.size() - 4) throw Error(path_ + ": corrupt heap profile (bad chunk)");
    out.insert(out.end(), raw.begin() + 4, raw.begin() + 4 + records);
    ages_.insert(ages_.end(), raw.begin() + 4 + records, raw.end());
    return true;
  }
  // Packed files of version 2: the chunk where events at `time_us` may start (the last one
  // starting before it); its decoder state is returned in `*start`. False if the first chunk
  // is that chunk, or there are none.
  bool seek(uint64_t time_us, ChunkInfo* start) {
    size_t found = 0;
    for (size_t i = 1; i < chunks_.size() && chunks_[i].time_us < time_us; ++i) found = i;
    if (found == 0) return false;
    seek_chunk(found, start);
    return true;
  }
  // Packed files of version 2: the next chunk read is chunk `index` (at most chunk_count());
  // its decoder state is returned in `*start` (unchanged for the end).
  void seek_chunk(size_t index, ChunkInfo* start) {
    next_ = index;
    ages_.clear();
    age_pos_ = 0;
    if (index < chunks_.size()) *start = chunks_[index];
  }
  size_t chunk_count() const { return chunks_.size(); }
  uint64_t next_age() override {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (age_pos_ >= ages_.size()) throw Error(path_ + ": corrupt heap profile (ages cut short)");
      uint8_t b = ages_[age_pos_++];
      value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return value;
    }
    throw Error(path_ + ": corrupt heap profile (age too long)");
  }

 private:
  std::ifstream in_;
  std::vector<ChunkInfo> chunks_;
  const std::string& path_;
  uint32_t version_;
  size_t next_ = 0;
  std::vector<uint8_t> ages_;  // the ages not yet read, of this chunk and the one before
  size_t age_pos_ = 0;
};

// Reads the metadata and index of a packed file.
std::vector<ChunkInfo> read_packed_tail(std::ifstream& in, const std::string& path,
                                        ProfileMeta& meta, uint32_t version,
                                        const uint8_t* header) {
  auto corrupt = [&](const std::string& what) {
    return Error(path + ": corrupt heap profile (" + what + ")");
  };
  // A short header read leaves the stream failed, and a failed stream's tellg is -1: clear it
  // so the size below is the file's, and check every read's count rather than trusting it.
  in.clear();
  in.seekg(0, std::ios::end);
  std::streamoff end = in.tellg();
  if (end < 0) throw corrupt("cannot find its size");
  auto file_size = static_cast<uint64_t>(end);
  auto read_at = [&](uint64_t offset, uint8_t* into, uint64_t size) {
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(reinterpret_cast<char*>(into), static_cast<std::streamsize>(size));
    if (static_cast<uint64_t>(in.gcount()) != size) throw corrupt("cut short");
  };
  const size_t footer_size = version >= 4 ? kFooterSize : kFooterSizeV3;
  if (file_size < kPackedHeaderSize + footer_size) throw corrupt("too short");
  uint8_t footer[kFooterSize] = {};
  read_at(file_size - footer_size, footer, footer_size);
  if (std::memcmp(footer + footer_size - 8, kFooterMagic, 8) != 0) {
    throw corrupt("no footer: truncated?");
  }
  auto meta_offset = load<uint64_t>(footer);
  auto meta_size = load<uint64_t>(footer + 8);
  auto index_offset = load<uint64_t>(footer + 16);
  if (meta_offset > index_offset || meta_size > index_offset - meta_offset ||
      index_offset > file_size - footer_size) {
    throw corrupt("bad footer");
  }
  uint64_t index_size = file_size - footer_size - index_offset;
  std::vector<uint8_t> index(index_size);
  read_at(index_offset, index.data(), index_size);
  if (version >= 4) {
    uLong crc = crc32(0L, header, static_cast<uInt>(kPackedHeaderSize));
    crc = crc32(crc, index.data(), static_cast<uInt>(index.size()));
    crc = crc32(crc, footer, 24);
#ifndef MEMTRACK_FUZZING_SKIPS_CRC
    if (static_cast<uint32_t>(crc) != load<uint32_t>(footer + 24) ||
        load<uint32_t>(footer + 28) != 0) {
      throw corrupt("checksum mismatch in its header, index or footer");
    }
#endif
  }
  std::vector<uint8_t> compressed(meta_size);
  read_at(meta_offset, compressed.data(), meta_size);
  require_checksum(compressed, version, path);
  unsigned long long raw_size = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
  if (raw_size == ZSTD_CONTENTSIZE_ERROR || raw_size == ZSTD_CONTENTSIZE_UNKNOWN ||
      raw_size > (uint64_t{1} << 32)) {
    throw corrupt("bad metadata");
  }
  std::vector<uint8_t> raw = decompress(compressed, raw_size, path);
  Bytes b{raw.data(), raw.size(), path};
  meta.complete = b.get<uint8_t>() != 0;
  auto modules_size = b.get<uint32_t>();
  b.need(modules_size);
  meta.modules = report::parse_modules_section({b.p, modules_size}, path);
  b.p += modules_size;
  b.left -= modules_size;
  auto stack_count = b.get<uint32_t>();
  for (uint32_t i = 0; i < stack_count; ++i) {
    auto id = b.get<uint32_t>();
    if (!plausible_stack_id(id, stack_count)) throw corrupt("stack id out of range");
    auto depth = b.get<uint32_t>();
    if (depth > kMaxDepth) throw corrupt("stack too deep");
    std::vector<uint64_t> frames(depth);
    for (uint64_t& f : frames) f = b.get<uint64_t>();
    meta.stacks[id] = std::move(frames);
  }
  if (version >= 5) {
    meta.sample_interval_bytes = b.get<uint64_t>();
    // The runtime's sample_bytes is an int: anything larger is corruption, and would make
    // the estimates' weights infinite.
    if (meta.sample_interval_bytes > INT32_MAX) throw corrupt("sample interval out of range");
  }
  Bytes x{index.data(), index.size(), path};
  auto count = x.get<uint32_t>();
  if (count > x.left / kIndexEntrySize) throw corrupt("bad index");
  std::vector<ChunkInfo> chunks(count);
  for (ChunkInfo& c : chunks) {
    c.offset = x.get<uint64_t>();
    c.compressed_size = x.get<uint32_t>();
    c.raw_size = x.get<uint32_t>();
    c.time_us = x.get<uint64_t>();
    c.allocations = x.get<uint64_t>();
    c.tid = x.get<uint32_t>();
    c.events_before = x.get<uint64_t>();
    if (c.offset > meta_offset || c.compressed_size > meta_offset - c.offset ||
        c.raw_size > kChunkBytes) {
      throw corrupt("bad index entry");
    }
  }
  return chunks;
}

}  // namespace

bool is_profile_file(const std::string& path) {
  std::ifstream in = open_binary(path);
  char magic[8] = {};
  in.read(magic, sizeof(magic));
  return std::memcmp(magic, format::kRawMagic, 8) == 0 ||
         std::memcmp(magic, format::kPackedMagic, 8) == 0;
}

std::optional<uint32_t> unfinished_profile_pid(const std::string& path) {
  std::ifstream in = open_binary(path);
  uint8_t header[kPackedHeaderSize] = {};
  in.read(reinterpret_cast<char*>(header), sizeof(header));
  if (!in || std::memcmp(header, format::kPackedMagic, 8) != 0) return std::nullopt;
  in.seekg(0, std::ios::end);
  auto size = static_cast<uint64_t>(in.tellg());
  if (size >= kPackedHeaderSize + kFooterSizeV3) {
    char magic[8] = {};
    in.seekg(static_cast<std::streamoff>(size - 8));
    in.read(magic, sizeof(magic));
    if (std::memcmp(magic, kFooterMagic, 8) == 0) return std::nullopt;
  }
  return load<uint32_t>(header + 12);
}

namespace {

// A raw file is read by packing it first, into a temporary file unlinked once open: the
// runtime's batches come in sequence order only after the packer's merge (packer.h), and one
// decoder of the raw stream is enough.
std::ifstream pack_raw(const std::string& path) {
  const char* env = std::getenv("TMPDIR");
  std::string dir = env != nullptr && *env != '\0' ? env : "/tmp";
  std::string name = dir + "/memtrack-profile-XXXXXX";
  int fd = mkstemp(name.data());
  if (fd < 0) {
    throw Error("cannot read the raw heap profile " + path +
                ": cannot create a temporary file in " + dir + " (" + std::strerror(errno) +
                "); set TMPDIR to a writable directory");
  }
  close(fd);
  try {
    pack_profile(path, name);
  } catch (...) {
    unlink(name.c_str());
    throw;
  }
  std::ifstream in = open_binary(name);
  unlink(name.c_str());
  return in;
}

}  // namespace

EventReader::EventReader(const std::string& path) : path_(path) {
  std::ifstream in = open_binary(path);
  uint8_t header[format::kRawHeaderSize] = {};
  in.read(reinterpret_cast<char*>(header), sizeof(header));
  bool raw = std::memcmp(header, format::kRawMagic, 8) == 0;
  bool packed = std::memcmp(header, format::kPackedMagic, 8) == 0;
  if (!raw && !packed) throw Error(path + " is not a memtrack heap profile");
  raw_ = raw;
  if (packed && static_cast<size_t>(in.gcount()) < kPackedHeaderSize) {
    throw Error(path + ": corrupt heap profile (too short)");
  }
  if (raw) {
    in = pack_raw(path);
    in.read(reinterpret_cast<char*>(header), sizeof(header));
  }
  uint32_t version = load<uint32_t>(header + 8);
  if (version < 1 || version > kPackedVersion) {
    throw Error(path + ": heap profile version " + std::to_string(version) +
                " is not supported (this memtrack reads versions 1 to " +
                std::to_string(kPackedVersion) + ")");
  }
  packed_version_ = version;
  meta_.pid = load<uint32_t>(header + 12);
  std::vector<ChunkInfo> chunks = read_packed_tail(in, path_, meta_, version, header);
  source_ = std::make_unique<PackedSource>(std::move(in), std::move(chunks), path_, version);
}

bool EventReader::skip_to(uint64_t time_us) {
  if (packed_version_ < 2 || consumed_ + pos_ > 0) return false;
  ChunkInfo start;
  if (!static_cast<PackedSource&>(*source_).seek(time_us, &start)) return false;
  buffer_.clear();
  pos_ = 0;
  time_us_ = start.time_us;
  tid_ = start.tid;
  last_alloc_block_.clear();
  skipped_events_ = start.events_before;
  return true;
}

size_t EventReader::chunk_count() const {
  return static_cast<const PackedSource&>(*source_).chunk_count();
}

bool EventReader::start_at_chunk(size_t index) {
  if (index == 0) return true;
  if (packed_version_ < 2 || consumed_ + pos_ > 0 || index > chunk_count()) return false;
  ChunkInfo start;
  start.time_us = time_us_;
  start.tid = tid_;
  static_cast<PackedSource&>(*source_).seek_chunk(index, &start);
  buffer_.clear();
  pos_ = 0;
  time_us_ = start.time_us;
  tid_ = start.tid;
  last_alloc_block_.clear();
  return true;
}

EventReader::~EventReader() = default;

void EventReader::fail(const std::string& problem) const {
  throw Error(path_ + ": corrupt heap profile (" + problem + " at byte " +
              std::to_string(consumed_ + pos_) + " of the event stream)");
}

bool EventReader::ensure(size_t bytes) {
  while (buffer_.size() - pos_ < bytes) {
    if (pos_ > 0) {
      buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(pos_));
      consumed_ += pos_;
      pos_ = 0;
    }
    if (!source_->more(buffer_)) return false;
  }
  return true;
}

uint8_t EventReader::byte() {
  if (pos_ >= buffer_.size() && !ensure(1)) fail("record cut short");
  return buffer_[pos_++];
}

uint64_t EventReader::varint() {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = byte();
    value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return value;
  }
  fail("number too long");
}

void EventReader::read_stack() {
  uint64_t id_value = varint();
  if (!plausible_stack_id(id_value, meta_.stacks.size())) fail("stack id out of range");
  auto id = static_cast<uint32_t>(id_value);
  uint64_t depth = varint();
  if (depth > kMaxDepth) fail("stack too deep");
  std::vector<uint64_t> frames(depth);
  uint64_t previous = 0;
  for (uint64_t& f : frames) {
    f = previous + static_cast<uint64_t>(format::unzigzag(varint()));
    previous = f;
  }
  meta_.stacks[id] = std::move(frames);
}

void EventReader::read_modules() {
  uint64_t size = varint();
  if (size > kMaxModulesBytes) fail("module map too large");
  if (!ensure(size)) fail("module map cut short");
  meta_.modules =
      report::parse_modules_section({buffer_.data() + pos_, static_cast<size_t>(size)}, path_);
  pos_ += size;
}

bool EventReader::next(Event* event) {
  return next_record(event);
}

bool EventReader::next_record(Event* event) {
  for (;;) {
    if (buffer_.size() - pos_ < kMaxRecord) ensure(kMaxRecord);  // short only at the end
    if (pos_ >= buffer_.size()) return false;
    uint8_t tag_byte = byte();
    bool temporary = (tag_byte & format::kTemporaryBit) != 0;
    bool named_temporary = (tag_byte & kTemporaryNamedBit) != 0;
    constexpr uint8_t kFlagBits = format::kTemporaryBit | kTemporaryNamedBit;
    auto tag = static_cast<Tag>(tag_byte & ~kFlagBits);
    switch (tag) {
      case Tag::kThread:
        tid_ = static_cast<uint32_t>(varint());
        continue;
      case Tag::kStack:
        read_stack();
        continue;
      case Tag::kModules:
        read_modules();
        continue;
      case Tag::kEnd:
        meta_.complete = true;
        continue;
      case Tag::kAlloc:
      case Tag::kFree:
      case Tag::kReallocFree:
      case Tag::kSample:
        break;
      default:
        fail("unknown record " + std::to_string(static_cast<int>(tag)));
    }
    time_us_ += varint();
    event->time_us = time_us_;
    event->tid = tid_;
    event->unknown_block = false;
    if (tag == Tag::kSample) {
      event->kind = Event::Kind::kSample;
      event->size = varint();
      return true;
    }
    if (tag == Tag::kAlloc) {
      event->kind = Event::Kind::kAlloc;
      event->size = varint();
      uint64_t stack_id = varint();
      // 0: no stack (the sampled mode's blocks not sampled; in version 4 and before, none).
      bool no_stack_allowed = packed_version_ >= 5 && stack_id == 0;
      if (!no_stack_allowed && !plausible_stack_id(stack_id, meta_.stacks.size())) {
        fail("stack id out of range");
      }
      event->stack_id = static_cast<uint32_t>(stack_id);
    } else {
      event->kind = tag == Tag::kFree ? Event::Kind::kFree : Event::Kind::kReallocFree;
    }
    if (tag == Tag::kAlloc) {
      last_alloc_block_[tid_] = Block{event->size, time_us_, event->stack_id};
      return true;
    }
    // packed_format.h: a temporary free is of the thread's latest block
    auto last = last_alloc_block_.find(tid_);
    if (temporary) {
      if (last == last_alloc_block_.end()) fail("temporary free without an allocation");
      event->size = last->second.size;
      event->stack_id = last->second.stack_id;
      event->alloc_time_us = last->second.time_us;
    } else {
      event->size = varint();
      uint64_t stack_id = varint();
      // packed_format.h: which stack id a free of a block from before the recording has.
      uint64_t unknown_id = packed_version_ >= 5 ? kUnknownBlockStack : 0;
      event->unknown_block = stack_id == unknown_id;
      if (event->unknown_block) {
        if (event->size != 0) fail("free of a block from before the recording with a size");
        stack_id = 0;
      } else if (stack_id != 0 && !plausible_stack_id(stack_id, meta_.stacks.size())) {
        fail("stack id out of range");
      }
      event->stack_id = static_cast<uint32_t>(stack_id);
      uint64_t age = source_->next_age();
      if (age > time_us_) fail("free of a block allocated before the recording started");
      event->alloc_time_us = time_us_ - age;
    }
    event->temporary = temporary || named_temporary;
    if (last != last_alloc_block_.end()) last_alloc_block_.erase(last);
    return true;
  }
}

}  // namespace memtrack::profile
