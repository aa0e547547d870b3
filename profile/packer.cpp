// Packing raw heap profiles (see packer.h). The stacks and modules go to the metadata; the
// events are re-encoded without addresses: a free carries its block's size, stack and age
// instead (and whether it is temporary), which repeat far more than addresses do and so
// compress several times better, and leave the analysis nothing to look up per block
// (docs/format.md, "Heap profiles").
#include "profile/packer.h"

#include <zlib.h>

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "core/profile_format.h"
#include "profile/chunk_compressor.h"
#include "profile/packed_format.h"

namespace memtrack::profile {

namespace format = core::profile;
using format::Tag;

namespace {

constexpr size_t kMaxDepth = 4096;
constexpr size_t kReadBytes = size_t{4} << 20;      // read from the raw file per call
constexpr size_t kMaxBatchBytes = size_t{2} << 20;  // the runtime's are at most 1 MiB
// Events held back waiting for an earlier sequence number (48 bytes each): the runtime
// writes a batch within two sampling intervals, so this bounds only a batch that never
// came (a thread that held its buffer when the process was killed): past it, the missing
// numbers are given up and the later events packed in order.
constexpr size_t kMaxPending = size_t{1} << 21;

struct Block {
  uint64_t size;
  uint64_t time_us;
  uint32_t stack_id;
};

// LEB128 as format::put_varint writes it, byte by byte: most values here take one or two
// bytes, and a vector insert of a temporary per value was a tenth of the packing's time on
// malloc churn.
void put_varint(std::vector<uint8_t>& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<uint8_t>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<uint8_t>(value));
}

// One packed record, built on the stack and appended to its chunk at once: a write into a
// vector per byte makes the compiler reload the vector's end after every store.
// The room a chunk keeps for the next event's records: a thread record and an event record
// (a tag and at most 5 varints each).
constexpr size_t kMaxRecords = 2 * (1 + 5 * 10);

// One record written in place at the end of the chunk (which keeps room for the largest).
struct Record {
  explicit Record(uint8_t* at) : bytes(at) {}
  uint8_t* bytes;  // the tag and at most 5 varints
  size_t size = 0;
  void put_byte(uint8_t byte) { bytes[size++] = byte; }
  void put(uint64_t value) { size += format::put_varint(bytes + size, value); }
};

template <typename T>
void append(std::vector<uint8_t>& out, T value) {
  const auto* p = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

// Decodes the raw stream record by record from what has been read of the file so far. The
// file may still be growing: a record not yet whole is left for the next refill.
class RawScanner {
 public:
  explicit RawScanner(const std::string& path) : path_(path) {}
  ~RawScanner() {
    if (fd_ >= 0) close(fd_);
  }
  RawScanner(const RawScanner&) = delete;
  RawScanner& operator=(const RawScanner&) = delete;

  // Opens the file on the first call. Appends what the file has beyond what was read (at
  // most kReadBytes) to the buffer; returns the number of bytes read.
  size_t refill() {
    if (fd_ < 0) {
      fd_ = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
    }
    if (pos_ > 0) {  // what is left is at most one record cut short
      std::memmove(buffer_.data(), buffer_.data() + pos_, size_ - pos_);
      size_ -= pos_;
      pos_ = 0;
    }
    if (buffer_.size() < size_ + kReadBytes) buffer_.resize(size_ + kReadBytes);
    limit_ = size_;  // grown below
    ssize_t n;
    do {
      n = read(fd_, buffer_.data() + size_, kReadBytes);
    } while (n < 0 && errno == EINTR);
    if (n < 0) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
    size_ += static_cast<size_t>(n);
    limit_ = size_;
    return static_cast<size_t>(n);
  }

  // The next `n` bytes (the header), if they have been read.
  const uint8_t* take(size_t n) {
    if (size_ - pos_ < n) return nullptr;
    pos_ += n;
    return buffer_.data() + pos_ - n;
  }

  // Decodes the next whole record into the fields below; false if what was read ends before
  // it does.
  bool next() {
    if (pos_ >= size_) return false;
    size_t start = pos_;
    if (decode_one()) return true;
    pos_ = start;
    return false;
  }
  size_t position() const { return pos_; }

  // After next() returned a kBatch: its records, one per next_in_batch(), then end_batch().
  // The batch was read whole, so a record running past its end is corruption.
  void begin_batch() {
    batch_end_ = pos_;
    pos_ = batch_begin_;
    limit_ = batch_end_;
    in_batch_ = true;
  }
  bool next_in_batch() {
    if (pos_ >= limit_) return false;
    if (!decode_one()) throw Error(path_ + ": corrupt heap profile (record cut short in a batch)");
    return true;
  }
  void end_batch() {
    if (pos_ != batch_end_) throw Error(path_ + ": corrupt heap profile (batch size)");
    in_batch_ = false;
    limit_ = size_;
  }

  Tag tag = Tag::kEnd;
  uint64_t seq_delta = 0;  // events in a batch
  uint64_t first_seq = 0;  // kBatch
  uint64_t dt = 0;
  uint64_t ptr_delta = 0;  // zigzag
  uint64_t size = 0;       // allocation: bytes; sample: RSS bytes
  uint32_t tid = 0;
  uint32_t stack_id = 0;
  std::vector<uint64_t> frames;
  std::vector<uint8_t> modules;

 private:
  bool varint(uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= limit_) return false;
      uint8_t b = buffer_[pos_++];
      *value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    throw Error(path_ + ": corrupt heap profile (number too long)");
  }
  bool decode_one() {
    uint8_t tag_byte = buffer_[pos_++];
    tag = static_cast<Tag>(tag_byte & 0x0f);
    uint64_t a = 0;
    uint64_t b = 0;
    bool event =
        tag == Tag::kAlloc || tag == Tag::kFree || tag == Tag::kReallocFree || tag == Tag::kSample;
    if (!event || !in_batch_) {
      if (tag_byte > 0x0f) tag = Tag{tag_byte};  // unknown: reported below
    } else if (tag_byte > 0x0f) {
      seq_delta = tag_byte >> 4;  // core/profile_format.h: the difference in the tag byte
    } else if (!varint(&seq_delta)) {
      return false;
    }
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
      case Tag::kBatch: {
        if (in_batch_) break;
        if (size_ - pos_ < 12) return false;
        uint32_t payload = 0;
        std::memcpy(&payload, buffer_.data() + pos_, 4);
        std::memcpy(&first_seq, buffer_.data() + pos_ + 4, 8);
        if (payload > kMaxBatchBytes) throw Error(path_ + ": corrupt heap profile (batch size)");
        if (size_ - pos_ - 12 < payload) return false;
        batch_begin_ = pos_ + 12;
        pos_ = batch_begin_ + payload;
        return true;
      }
      case Tag::kThread:
        if (!varint(&a)) return false;
        tid = static_cast<uint32_t>(a);
        return true;
      case Tag::kEnd:
      case Tag::kExec:
      case Tag::kExecFailed:
        if (in_batch_) break;
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
        if (in_batch_) break;
        if (!varint(&a)) return false;
        if (a > (uint64_t{64} << 20)) throw Error(path_ + ": corrupt heap profile (module map)");
        if (size_ - pos_ < a) return false;
        modules.assign(buffer_.begin() + static_cast<std::ptrdiff_t>(pos_),
                       buffer_.begin() + static_cast<std::ptrdiff_t>(pos_ + a));
        pos_ += a;
        return true;
      }
    }
    throw Error(path_ + ": corrupt heap profile (unknown record " +
                std::to_string(static_cast<int>(tag)) + ")");
  }

  const std::string& path_;
  int fd_ = -1;
  std::vector<uint8_t> buffer_;  // [0, size_) read; grown, never shrunk (no zeroing per read)
  size_t size_ = 0;
  size_t pos_ = 0;
  size_t limit_ = 0;  // where decoding stops: size_, or the end of the batch being read
  bool in_batch_ = false;
  size_t batch_begin_ = 0;
  size_t batch_end_ = 0;
};

std::vector<uint8_t> metadata(bool complete, const std::vector<uint8_t>& modules,
                              const std::map<uint32_t, std::vector<uint64_t>>& stacks,
                              uint64_t sample_interval) {
  // Not append<uint8_t> into the empty vector: gcc 12 with -fsanitize=thread warns of an
  // overflow there that cannot happen (-Wstringop-overflow).
  std::vector<uint8_t> out{static_cast<uint8_t>(complete ? 1 : 0)};
  append<uint32_t>(out, static_cast<uint32_t>(modules.size()));
  out.insert(out.end(), modules.begin(), modules.end());
  append<uint32_t>(out, static_cast<uint32_t>(stacks.size()));
  for (const auto& [id, frames] : stacks) {
    append<uint32_t>(out, id);
    append<uint32_t>(out, static_cast<uint32_t>(frames.size()));
    for (uint64_t f : frames) append<uint64_t>(out, f);
  }
  append<uint64_t>(out, sample_interval);
  return out;
}

// The live blocks by address: open addressing with linear probing and deletion by shifting
// back (no tombstones), so an allocation and a free cost a probe or two and no node
// allocation (std::unordered_map's were a tenth of the packing's time on malloc churn).
class LiveBlocks {
 public:
  LiveBlocks() : slots_(kInitialSlots), shift_(64 - std::countr_zero(kInitialSlots)) {}

  void insert(uint64_t ptr, const Block& block) {
    if ((count_ + 1) * 4 > slots_.size() * 3) grow();
    Slot& slot = slots_[find_slot(ptr)];
    if (slot.ptr != ptr) ++count_;
    slot = Slot{ptr, block};
  }

  // Removes the block at `ptr` into `*block`; false if there is none.
  bool take(uint64_t ptr, Block* block) {
    size_t i = find_slot(ptr);
    if (slots_[i].ptr != ptr || ptr == kEmpty) return false;
    *block = slots_[i].block;
    --count_;
    size_t mask = slots_.size() - 1;
    for (size_t j = (i + 1) & mask; slots_[j].ptr != kEmpty; j = (j + 1) & mask) {
      size_t home = hash(slots_[j].ptr);
      // slots_[j] may move to the hole at i if its home is not in (i, j] (cyclically).
      bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i].ptr = kEmpty;
    return true;
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // no block starts at the last byte
  static constexpr size_t kInitialSlots = 1024;
  struct Slot {
    uint64_t ptr = kEmpty;
    Block block{};
  };
  // The blocks of one 1 KiB stretch of addresses go to neighbouring slots (one per 16
  // bytes), from a place that Fibonacci hashing (the product's top bits) picks for the
  // stretch: blocks allocated one after the other land in the same few cache lines of slots,
  // where a hash of each address made every insert a cache and TLB miss (packing 1M blocks
  // held to exit spent 37% of its time on the first load of a slot; memtrack run --profile
  // of that program went from 0.54 s to 0.44 s).
  size_t hash(uint64_t ptr) const {
    size_t stretch = static_cast<size_t>((ptr >> 10) * 0x9E3779B97F4A7C15ull >> shift_);
    return (stretch + ((ptr >> 4) & 63)) & (slots_.size() - 1);
  }
  size_t find_slot(uint64_t ptr) const {
    size_t mask = slots_.size() - 1;
    size_t i = hash(ptr);
    while (slots_[i].ptr != kEmpty && slots_[i].ptr != ptr) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    --shift_;
    count_ = 0;
    for (const Slot& s : old) {
      if (s.ptr != kEmpty) insert(s.ptr, s.block);
    }
  }
  std::vector<Slot> slots_;  // a power of two
  int shift_;                // 64 - log2(slots_.size())
  size_t count_ = 0;
};

// One event of the raw stream, decoded, with its place in the order of all threads.
struct Event {
  uint64_t seq = 0;
  uint64_t time_us = 0;
  uint64_t size = 0;  // allocation: bytes; sample: RSS bytes
  uint64_t ptr = 0;
  uint32_t stack_id = 0;
  uint32_t tid = 0;
  Tag tag = Tag{0};  // 0: an empty slot of the pending ring
};

// A thread's latest allocation, and the chunk it went into: a free right after it is
// temporary, and names no block when it is in the same chunk (chunks stay independent, so a
// reader may start at any of them).
struct LastAlloc {
  uint64_t ptr = 0;
  size_t chunk = 0;
};

}  // namespace

struct ProfilePacker::State {
  State(std::string raw, std::string out)
      : raw_path(std::move(raw)), out_path(std::move(out)), scan(raw_path), writer(out_path) {}

  void start(const uint8_t* header) {
    if (std::memcmp(header, format::kRawMagic, 8) != 0) {
      throw Error(raw_path + " is not a raw memtrack heap profile");
    }
    uint32_t version = 0;
    std::memcpy(&version, header + 8, 4);
    if (version < 1 || version > format::kVersion) {
      throw Error(raw_path + ": raw heap profile version " + std::to_string(version) +
                  " is not supported (this memtrack reads versions 1 to " +
                  std::to_string(format::kVersion) + ")");
    }
    writer.open();
    std::vector<uint8_t> head(format::kPackedMagic, format::kPackedMagic + 8);
    append<uint32_t>(head, kPackedVersion);
    append<uint32_t>(head, 0);
    std::memcpy(head.data() + 12, header + 12, 4);  // pid
    std::memcpy(&sample_interval, header + 24, 8);
    if (sample_interval > INT32_MAX) {  // the runtime's sample_bytes is an int
      throw Error(raw_path + ": corrupt heap profile (sample interval out of range)");
    }
    writer.write_plain(head);
    packed_header = head;
    writer.flush();  // memtrack report knows the file for a profile while it is written
  }

  // Encodes every whole record read so far.
  void pack_records() {
    while (true) {
      size_t begin = scan.position();
      if (!scan.next()) return;
      stats.raw_bytes += scan.position() - begin;
      add_record();
    }
  }

  void add_record() {
    switch (scan.tag) {
      case Tag::kStack:
        stacks[scan.stack_id] = scan.frames;
        return;
      case Tag::kModules:
        modules = scan.modules;
        return;
      case Tag::kEnd:
        stats.complete = true;
        return;
      case Tag::kExec:  // the image is replaced unless a kExecFailed follows
        stats.replaced_by_exec = true;
        return;
      case Tag::kExecFailed:
        stats.replaced_by_exec = false;
        return;
      case Tag::kBatch:
        add_batch();
        return;
      case Tag::kThread:  // version 1: events outside batches, in the order of the file
        v1_tid = scan.tid;
        return;
      default:
        break;
    }
    v1_time_us += scan.dt;
    Event event = decoded(v1_time_us, v1_tid, &v1_ptr);
    event.seq = next_seq;
    emit(event);
  }

  // The scanner's event, with its time, thread and the address before it.
  Event decoded(uint64_t time_us, uint32_t tid, uint64_t* ptr) const {
    Event event;
    event.tag = scan.tag;
    event.time_us = time_us;
    event.tid = tid;
    event.size = scan.size;
    if (scan.tag == Tag::kSample) return event;
    *ptr += static_cast<uint64_t>(format::unzigzag(scan.ptr_delta));
    event.ptr = *ptr;
    event.stack_id = scan.stack_id;
    return event;
  }

  // One thread's batch: times and addresses count from 0 at its start.
  void add_batch() {
    uint64_t seq = scan.first_seq;
    uint64_t time_us = 0;
    uint64_t ptr = 0;
    uint32_t tid = 0;
    scan.begin_batch();
    while (scan.next_in_batch()) {
      if (scan.tag == Tag::kStack) {
        stacks[scan.stack_id] = scan.frames;
      } else if (scan.tag == Tag::kThread) {
        tid = scan.tid;
      } else {
        seq += scan.seq_delta;
        time_us += scan.dt;
        Event event = decoded(time_us, tid, &ptr);
        event.seq = seq;
        submit(event);
      }
    }
    scan.end_batch();
  }

  // Packs the events in sequence order: an event whose predecessors have all come is packed
  // at once (always so with one thread), a later one waits in the ring for them.
  void submit(const Event& event) {
    if (event.seq == next_seq && pending == 0) {
      emit(event);
      ++next_seq;
      return;
    }
    if (event.seq < next_seq) {  // its number was given up (kMaxPending): packed as it comes
      ++stats.late_events;
      emit(event);
      return;
    }
    while (event.seq - next_seq >= ring.size()) {
      if (ring.size() < kMaxPending) {
        grow_ring();
      } else {
        skip_gap(event.seq);
      }
    }
    Event& slot = ring[event.seq & (ring.size() - 1)];
    if (slot.tag != Tag{0})
      throw Error(raw_path + ": corrupt heap profile (sequence number repeated)");
    slot = event;
    ++pending;
    drain();
  }

  void grow_ring() {
    std::vector<Event> old(ring.empty() ? 4096 : ring.size() * 2);
    old.swap(ring);
    for (const Event& e : old) {
      if (e.tag != Tag{0}) ring[e.seq & (ring.size() - 1)] = e;
    }
  }

  void drain() {
    while (pending > 0) {
      Event& slot = ring[next_seq & (ring.size() - 1)];
      if (slot.tag == Tag{0}) return;
      emit(slot);
      slot.tag = Tag{0};
      --pending;
      ++next_seq;
    }
  }

  // Gives up the missing number(s) before the earliest event waiting, or with none waiting
  // those before `upto`.
  void skip_gap(uint64_t upto) {
    if (pending == 0) {
      stats.missing_events += upto - next_seq;
      next_seq = upto;
      return;
    }
    while (ring[next_seq & (ring.size() - 1)].tag == Tag{0}) {
      ++next_seq;
      ++stats.missing_events;
    }
    drain();
  }

  void emit(const Event& event) {
    if (chunk_used == 0) {
      chunk_start = state;
      chunk.resize(kChunkBytes);  // a spare chunk's buffer comes back empty, its capacity kept
    }
    if (event.tid != state.tid) {
      Record thread(chunk.data() + chunk_used);
      thread.put_byte(static_cast<uint8_t>(Tag::kThread));
      thread.put(event.tid);
      chunk_used += thread.size;
      state.tid = event.tid;
      thread_last = &last_alloc[state.tid];
    }
    // Threads read the clock before they take a sequence number: a time can be up to a
    // clock tick below the one before it in the merged order.
    uint64_t dt = event.time_us > state.time_us ? event.time_us - state.time_us : 0;
    state.time_us += dt;
    Record record(chunk.data() + chunk_used);
    record.put_byte(static_cast<uint8_t>(event.tag));
    record.put(dt);
    if (event.tag == Tag::kSample) {
      record.put(event.size);
    } else {
      add_block_event(record, event);
    }
    chunk_used += record.size;
    if (chunk_used + ages.size() >= kChunkBytes - kMaxRecords) flush();
  }

  void add_block_event(Record& record, const Event& event) {
    uint64_t ptr = event.ptr;
    ++stats.events;
    ++state.events_before;
    if (event.tag == Tag::kAlloc) {
      record.put(event.size);
      record.put(event.stack_id);
      live.insert(ptr, Block{event.size, state.time_us, event.stack_id});
      *thread_last = LastAlloc{ptr, chunks};
      ++state.allocations;
      return;
    }
    LastAlloc& last = *thread_last;
    bool temporary = last.ptr == ptr;
    bool same_chunk = last.chunk == chunks;
    last.ptr = 0;
    Block block{0, state.time_us, 0};
    // A block allocated before the recording started: nothing is known of it, and its free
    // says so with a stack id no block has (a block with no stack has 0).
    if (!live.take(ptr, &block)) block.stack_id = kUnknownBlockStack;
    if (temporary && same_chunk) {  // the reader knows the block: the thread's latest one
      record.bytes[0] |= format::kTemporaryBit;
      return;
    }
    if (temporary) record.bytes[0] |= kTemporaryNamedBit;
    record.put(block.size);
    record.put(block.stack_id);
    put_varint(ages, state.time_us - block.time_us);
  }

  // Hands the chunk to the compressing thread; the next one starts empty.
  void flush() {
    if (chunk_used == 0) return;
    reopen_tail();
    chunk.resize(chunk_used);
    compressor.submit(chunk, ages, chunk_start);
    chunk_used = 0;
    ++chunks;
  }

  // Reads and packs until the raw file has nothing more; returns whether it had anything.
  bool step() {
    bool any = false;
    while (scan.refill() > 0) {
      any = true;
      if (!writer.is_open()) {
        const uint8_t* header = scan.take(format::kRawHeaderSize);
        if (header == nullptr) continue;
        stats.raw_bytes = format::kRawHeaderSize;
        start(header);
      }
      pack_records();
    }
    return any;
  }

  PackStats finish() {
    step();
    if (!writer.is_open()) throw Error(raw_path + " is not a raw memtrack heap profile");
    while (pending > 0) skip_gap(next_seq);  // batches that never came (SIGKILL)
    // The runtime wrote every batch before the exec that replaced this image.
    if (stats.replaced_by_exec) stats.complete = true;
    flush();  // a record cut short (SIGKILL) stays in the scanner, unread
    std::vector<ChunkInfo> index = compressor.finish();
    reopen_tail();
    write_tail(index);
    writer.close();
    stats.packed_bytes = writer.offset();
    return stats;
  }

  PackStats checkpoint() {
    step();
    if (!writer.is_open()) throw Error(raw_path + " has no heap profile events yet");
    flush();  // the events so far in a chunk of their own, which may be short
    std::vector<ChunkInfo> index = compressor.written();
    reopen_tail();
    uint64_t tail = writer.offset();
    write_tail(index);
    writer.flush();
    tail_at = tail;
    PackStats now = stats;
    now.packed_bytes = writer.offset();
    return now;
  }

  // The stacks and modules, the index and the footer, after the chunks.
  void write_tail(const std::vector<ChunkInfo>& index) {
    uint64_t meta_offset = writer.offset();
    uint64_t meta_size = writer.write(metadata(stats.complete, modules, stacks, sample_interval));
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
    // The CRC of the header, the index and the footer's offsets (packed_format.h).
    uLong crc = crc32(0L, packed_header.data(), static_cast<uInt>(packed_header.size()));
    crc = crc32(crc, tail.data(), static_cast<uInt>(tail.size()));
    append<uint32_t>(tail, static_cast<uint32_t>(crc));
    append<uint32_t>(tail, 0);
    tail.insert(tail.end(), kFooterMagic, kFooterMagic + 8);
    writer.write_plain(tail);
  }

  // After a checkpoint, the next chunk or tail is written over its tail. The compressing
  // thread is idle then: checkpoint() waited for it, and nothing was submitted since.
  void reopen_tail() {
    if (!tail_at) return;
    writer.truncate(*tail_at);
    tail_at.reset();
  }

  std::string raw_path;
  std::string out_path;
  std::vector<uint8_t> packed_header;  // as written, for the footer's CRC
  uint64_t sample_interval = 0;        // the raw header's
  RawScanner scan;
  ChunkWriter writer;
  PackStats stats;
  std::map<uint32_t, std::vector<uint64_t>> stacks;
  std::vector<uint8_t> modules;
  ChunkCompressor compressor{writer};  // after writer: stopped before it goes
  size_t chunks = 0;                   // handed to the compressor
  std::vector<uint8_t> chunk;  // kChunkBytes while a chunk fills, its first chunk_used written
  size_t chunk_used = 0;
  std::vector<uint8_t> ages;  // the frees' ages, stored after the chunk's records
  ChunkInfo state;            // decoder state after the last record
  ChunkInfo chunk_start;
  LiveBlocks live;
  std::vector<Event> ring;  // events waiting for an earlier one, at seq % size (a power of 2)
  size_t pending = 0;       // events in the ring
  uint64_t next_seq = 0;    // the next event to pack
  uint64_t v1_time_us = 0;  // version 1 files: the decoder state outside batches
  uint64_t v1_ptr = 0;
  uint32_t v1_tid = 0;
  std::optional<uint64_t> tail_at;                     // where the last checkpoint's tail starts
  std::unordered_map<uint32_t, LastAlloc> last_alloc;  // per thread
  LastAlloc* thread_last = &last_alloc[0];             // state.tid's (the map's nodes stay)
};

ProfilePacker::ProfilePacker(std::string raw_path, std::string out_path)
    : state_(std::make_unique<State>(std::move(raw_path), std::move(out_path))) {}

ProfilePacker::~ProfilePacker() = default;

bool ProfilePacker::step() {
  return state_->step();
}

PackStats ProfilePacker::finish() {
  return state_->finish();
}

PackStats ProfilePacker::checkpoint() {
  return state_->checkpoint();
}

void ProfilePacker::abandon() {
  if (state_->writer.is_open()) std::remove(state_->out_path.c_str());
}

const std::string& ProfilePacker::raw_path() const {
  return state_->raw_path;
}

const std::string& ProfilePacker::out_path() const {
  return state_->out_path;
}

PackStats pack_profile(const std::string& raw, const std::string& out) {
  if (access(raw.c_str(), R_OK) != 0) throw Error("cannot read " + raw);
  ProfilePacker packer(raw, out);
  return packer.finish();
}

}  // namespace memtrack::profile
