// Packing raw heap profiles (see packer.h). The stacks and modules go to the metadata; the
// events are re-encoded without addresses: a free carries its block's size, stack and age
// instead (and whether it is temporary), which repeat far more than addresses do and so
// compress several times better, and leave the analysis nothing to look up per block
// (docs/format.md, "Heap profiles").
#include "profile/packer.h"

#include <zstd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "core/profile_format.h"
#include "profile/packed_format.h"

namespace memtrack::profile {

namespace format = core::profile;
using format::Tag;

namespace {

constexpr size_t kMaxDepth = 4096;

struct Block {
  uint64_t size;
  uint64_t time_us;
  uint32_t stack_id;
};

void put_varint(std::vector<uint8_t>& out, uint64_t value) {
  uint8_t bytes[10];
  size_t n = format::put_varint(bytes, value);
  out.insert(out.end(), bytes, bytes + n);
}

template <typename T>
void append(std::vector<uint8_t>& out, T value) {
  const auto* p = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

// Decodes the raw stream record by record from a buffer refilled 4 MiB at a time.
class RawScanner {
 public:
  RawScanner(std::ifstream& in, const std::string& path) : in_(in), path_(path) {}

  // The next record's bytes [begin, end) in view(); false at the end (or at a record cut
  // short by the end of the file).
  bool next(size_t* begin, size_t* end) {
    for (;;) {
      compact();
      if (buffer_.size() - pos_ < (size_t{1} << 16) && !eof_) refill();
      if (pos_ >= buffer_.size()) return false;
      size_t start = pos_;
      if (decode_one()) {
        *begin = start;
        *end = pos_;
        return true;
      }
      if (eof_) return false;  // cut short: a killed process's last bytes
      pos_ = start;
      refill();
    }
  }
  const uint8_t* view() const { return buffer_.data(); }

  Tag tag = Tag::kEnd;
  uint64_t dt = 0;
  uint64_t ptr_delta = 0;  // zigzag
  uint64_t size = 0;       // allocation: bytes; sample: RSS bytes
  uint32_t tid = 0;
  uint32_t stack_id = 0;
  std::vector<uint64_t> frames;
  std::vector<uint8_t> modules;

 private:
  void compact() {
    if (pos_ < (size_t{8} << 20)) return;
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(pos_));
    pos_ = 0;
  }
  void refill() {
    size_t old = buffer_.size();
    buffer_.resize(old + (size_t{4} << 20));
    in_.read(reinterpret_cast<char*>(buffer_.data() + old), 4 << 20);
    buffer_.resize(old + static_cast<size_t>(in_.gcount()));
    if (in_.gcount() == 0) eof_ = true;
  }
  bool varint(uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= buffer_.size()) return false;
      uint8_t b = buffer_[pos_++];
      *value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    throw Error(path_ + ": corrupt heap profile (number too long)");
  }
  bool decode_one() {
    tag = static_cast<Tag>(buffer_[pos_++]);
    uint64_t a = 0;
    uint64_t b = 0;
    switch (tag) {
      case Tag::kAlloc:
        if (!varint(&dt) || !varint(&size) || !varint(&b) || !varint(&ptr_delta)) return false;
        stack_id = static_cast<uint32_t>(b);
        return true;
      case Tag::kFree:
      case Tag::kReallocFree:
        return varint(&dt) && varint(&ptr_delta);
      case Tag::kSample:
        return varint(&dt) && varint(&size);
      case Tag::kThread:
        if (!varint(&a)) return false;
        tid = static_cast<uint32_t>(a);
        return true;
      case Tag::kEnd:
        return true;
      case Tag::kStack: {
        if (!varint(&a) || !varint(&b)) return false;
        if (b > kMaxDepth) throw Error(path_ + ": corrupt heap profile (stack too deep)");
        stack_id = static_cast<uint32_t>(a);
        frames.assign(b, 0);
        uint64_t previous = 0;
        for (uint64_t& f : frames) {
          uint64_t z = 0;
          if (!varint(&z)) return false;
          f = previous + static_cast<uint64_t>(format::unzigzag(z));
          previous = f;
        }
        return true;
      }
      case Tag::kModules: {
        if (!varint(&a)) return false;
        if (a > (uint64_t{64} << 20)) throw Error(path_ + ": corrupt heap profile (module map)");
        if (buffer_.size() - pos_ < a) return false;
        modules.assign(buffer_.begin() + static_cast<std::ptrdiff_t>(pos_),
                       buffer_.begin() + static_cast<std::ptrdiff_t>(pos_ + a));
        pos_ += a;
        return true;
      }
    }
    throw Error(path_ + ": corrupt heap profile (unknown record " +
                std::to_string(static_cast<int>(tag)) + ")");
  }

  std::ifstream& in_;
  const std::string& path_;
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0;
  bool eof_ = false;
};

class ChunkWriter {
 public:
  ChunkWriter(std::ofstream& out, const std::string& path) : out_(out), path_(path) {
    ctx_ = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(ctx_, ZSTD_c_compressionLevel, kZstdLevel);
  }
  ~ChunkWriter() { ZSTD_freeCCtx(ctx_); }
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  // Compresses `raw` and writes it at the current end of the file. Returns its size.
  uint32_t write(const std::vector<uint8_t>& raw) {
    scratch_.resize(ZSTD_compressBound(raw.size()));
    size_t n = ZSTD_compress2(ctx_, scratch_.data(), scratch_.size(), raw.data(), raw.size());
    if (ZSTD_isError(n))
      throw Error("cannot compress the heap profile: " + std::string(ZSTD_getErrorName(n)));
    out_.write(reinterpret_cast<const char*>(scratch_.data()), static_cast<std::streamsize>(n));
    if (!out_) throw Error("cannot write " + path_);
    offset_ += n;
    return static_cast<uint32_t>(n);
  }
  void write_plain(const std::vector<uint8_t>& bytes) {
    out_.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    if (!out_) throw Error("cannot write " + path_);
    offset_ += bytes.size();
  }
  uint64_t offset() const { return offset_; }

 private:
  std::ofstream& out_;
  const std::string& path_;
  ZSTD_CCtx* ctx_;
  std::vector<uint8_t> scratch_;
  uint64_t offset_ = 0;
};

std::vector<uint8_t> metadata(bool complete, const std::vector<uint8_t>& modules,
                              const std::map<uint32_t, std::vector<uint64_t>>& stacks) {
  std::vector<uint8_t> out;
  append<uint8_t>(out, complete ? 1 : 0);
  append<uint32_t>(out, static_cast<uint32_t>(modules.size()));
  out.insert(out.end(), modules.begin(), modules.end());
  append<uint32_t>(out, static_cast<uint32_t>(stacks.size()));
  for (const auto& [id, frames] : stacks) {
    append<uint32_t>(out, id);
    append<uint32_t>(out, static_cast<uint32_t>(frames.size()));
    for (uint64_t f : frames) append<uint64_t>(out, f);
  }
  return out;
}

}  // namespace

PackStats pack_profile(const std::string& raw_path, const std::string& out_path) {
  std::ifstream in(raw_path, std::ios::binary);
  if (!in) throw Error("cannot read " + raw_path);
  uint8_t header[format::kRawHeaderSize] = {};
  in.read(reinterpret_cast<char*>(header), sizeof(header));
  if (in.gcount() != sizeof(header) || std::memcmp(header, format::kRawMagic, 8) != 0) {
    throw Error(raw_path + " is not a raw memtrack heap profile");
  }
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write the heap profile " + out_path);
  ChunkWriter writer(out, out_path);
  std::vector<uint8_t> head(format::kPackedMagic, format::kPackedMagic + 8);
  append<uint32_t>(head, format::kVersion);
  append<uint32_t>(head, 0);
  std::memcpy(head.data() + 12, header + 12, 4);  // pid
  writer.write_plain(head);

  PackStats stats;
  RawScanner scan(in, raw_path);
  std::map<uint32_t, std::vector<uint64_t>> stacks;
  std::vector<uint8_t> modules;
  std::vector<ChunkInfo> index;
  std::vector<uint8_t> chunk;
  std::vector<uint8_t> ages;  // the frees' ages, stored after the chunk's records
  ChunkInfo state;            // decoder state after the last record
  uint64_t ptr = 0;
  std::unordered_map<uint64_t, Block> live;           // by address
  std::unordered_map<uint32_t, uint64_t> last_alloc;  // per thread: its latest allocation
  ChunkInfo chunk_start;
  uint64_t raw_bytes = format::kRawHeaderSize;
  auto flush = [&] {
    if (chunk.empty()) return;
    std::vector<uint8_t> raw;
    append<uint32_t>(raw, static_cast<uint32_t>(chunk.size()));
    raw.insert(raw.end(), chunk.begin(), chunk.end());
    raw.insert(raw.end(), ages.begin(), ages.end());
    chunk_start.offset = writer.offset();
    chunk_start.raw_size = static_cast<uint32_t>(raw.size());
    chunk_start.compressed_size = writer.write(raw);
    index.push_back(chunk_start);
    chunk.clear();
    ages.clear();
  };
  size_t begin = 0;
  size_t end = 0;
  while (scan.next(&begin, &end)) {
    raw_bytes += end - begin;
    if (scan.tag == Tag::kStack) {
      stacks[scan.stack_id] = scan.frames;
      continue;
    }
    if (scan.tag == Tag::kModules) {
      modules = scan.modules;
      continue;
    }
    if (scan.tag == Tag::kEnd) {
      stats.complete = true;
      continue;
    }
    if (chunk.empty()) chunk_start = state;
    size_t tag_at = chunk.size();
    chunk.push_back(static_cast<uint8_t>(scan.tag));
    if (scan.tag == Tag::kThread) {
      state.tid = scan.tid;
      put_varint(chunk, scan.tid);
    } else {
      state.time_us += scan.dt;
      put_varint(chunk, scan.dt);
      if (scan.tag == Tag::kSample) {
        put_varint(chunk, scan.size);
      } else {
        ptr += static_cast<uint64_t>(format::unzigzag(scan.ptr_delta));
        ++stats.events;
        ++state.events_before;
        if (scan.tag == Tag::kAlloc) {
          put_varint(chunk, scan.size);
          put_varint(chunk, scan.stack_id);
          live[ptr] = Block{scan.size, state.time_us, scan.stack_id};
          last_alloc[state.tid] = ptr;
          ++state.allocations;
        } else {
          uint64_t& last = last_alloc[state.tid];
          bool temporary = last == ptr;
          last = 0;
          auto it = live.find(ptr);
          Block block = it == live.end() ? Block{0, state.time_us, 0} : it->second;
          if (it != live.end()) live.erase(it);
          if (temporary) {  // the reader knows the block: the thread's latest allocation
            chunk[tag_at] |= format::kTemporaryBit;
            if (chunk.size() + ages.size() >= kChunkBytes - 64) flush();
            continue;
          }
          put_varint(chunk, block.size);
          put_varint(chunk, block.stack_id);
          put_varint(ages, state.time_us - block.time_us);
        }
      }
    }
    if (chunk.size() + ages.size() >= kChunkBytes - 64) flush();
  }
  flush();
  uint64_t meta_offset = writer.offset();
  uint64_t meta_size = writer.write(metadata(stats.complete, modules, stacks));
  uint64_t index_offset = writer.offset();
  std::vector<uint8_t> tail;
  append<uint32_t>(tail, static_cast<uint32_t>(index.size()));
  for (const ChunkInfo& c : index) {
    append(tail, c.offset);
    append(tail, c.compressed_size);
    append(tail, c.raw_size);
    append(tail, c.time_us);
    append(tail, c.allocations);
    append(tail, c.tid);
    append(tail, c.events_before);
  }
  append(tail, meta_offset);
  append(tail, meta_size);
  append(tail, index_offset);
  tail.insert(tail.end(), kFooterMagic, kFooterMagic + 8);
  writer.write_plain(tail);
  out.close();
  if (!out) throw Error("cannot write the heap profile " + out_path);
  stats.raw_bytes = raw_bytes;
  stats.packed_bytes = writer.offset();
  return stats;
}

}  // namespace memtrack::profile
