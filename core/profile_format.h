// The heap profile's event stream (docs/format.md, "Heap profiles"): record tags, the raw
// file's header and the varint encoding shared by the runtime (which writes raw files) and the
// CLI (which packs them into compressed, indexed files and reads both).
// Runtime-safe: no allocation, no libc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::core::profile {

// The raw file the runtime writes: this 32-byte header, then records.
inline constexpr char kRawMagic[8] = {'M', 'T', 'P', 'R', 'O', 'F', 'R', 'W'};
// The packed file the CLI makes of it (header, compressed chunks, metadata, index, footer).
inline constexpr char kPackedMagic[8] = {'M', 'T', 'P', 'R', 'O', 'F', 'Z', 'S'};
// Version 2 puts the events in batches (kBatch); version 3 adds kExec and kExecFailed.
// Readers still accept versions 1 and 2.
inline constexpr uint32_t kVersion = 3;
// magic, u32 version, u32 pid, u64 start_ns, u64 sample_interval_bytes (the sampled mode's
// mean interval; 0: the full mode, where every allocation has its stack). Files of earlier
// memtrack have 0 there: full-mode ones read the same; sampled ones had allocations without
// a stack, which no reader accepted then.
inline constexpr size_t kRawHeaderSize = 32;

// Every record starts with a tag byte. Times are microseconds since the process started,
// stored as the difference from the previous timed record of the same batch (the first one of
// a batch: from 0). In version 2 every event (tags 1, 2, 3 and 6) sits in a batch and carries
// its sequence number's difference from the batch's previous event (the first: from the
// batch's first_seq, so 0) in the tag byte's high 4 bits when it is 1 to 15, else the high
// bits are 0 and a varint after the tag holds it; the sequence numbers put the batches of all
// threads back into one order. Addresses are differences from the batch's previous address.
enum class Tag : uint8_t {
  kAlloc = 1,        // varint dt, varint size, varint stack_id (0: no stack; in the sampled
                     // mode, a block not sampled), zigzag varint ptr - last ptr
  kFree = 2,         // varint dt, zigzag varint ptr - last ptr
  kReallocFree = 3,  // as kFree: the old block of a realloc; the new block follows as kAlloc
  kThread = 4,       // varint tid: the thread of the records that follow
  kStack = 5,        // varint id, varint depth, depth x zigzag varint (frame - previous frame)
  kSample = 6,       // varint dt, varint rss_bytes, varint heap_live_bytes
  kModules = 7,      // varint size, then the modules section payload of the result file
  kEnd = 8,          // the process ended normally (records may still follow)
  kBatch = 9,        // u32 payload_size, u64 first_seq (little-endian), then payload_size
                     // bytes of records of tags 1-6, in one thread's order
  kExec = 10,        // the process calls exec: its batches are written (records may follow)
  kExecFailed = 11,  // that exec returned: the process goes on in this image
};

inline constexpr size_t kBatchHeaderSize = 1 + 4 + 8;
inline constexpr uint64_t kMaxTagSeqDelta = 15;  // in an event's tag byte (high 4 bits)

// Packed files only (profile/packed_format.h): set in the tag of a free that is temporary.
inline constexpr uint8_t kTemporaryBit = 0x80;

// Appends `value` as LEB128 to `out` (at most 10 bytes); returns the bytes written.
inline size_t put_varint(uint8_t* out, uint64_t value) {
  size_t n = 0;
  while (value >= 0x80) {
    out[n++] = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  out[n++] = static_cast<uint8_t>(value);
  return n;
}

inline uint64_t zigzag(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}

inline int64_t unzigzag(uint64_t value) {
  return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
}

}  // namespace memtrack::core::profile
