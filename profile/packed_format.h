// The packed heap profile file (docs/format.md, "Heap profiles"): the raw event stream cut
// into chunks at record boundaries, each compressed with zstd, then the stacks and modules,
// an index of the chunks and a fixed-size footer that locates them.
//
//   header   "MTPROFZS"  u32 version = 5  u32 pid
//   chunk*   zstd frame of at most kChunkBytes: the chunk's event records in a row, by pair or by
//            column (chunk_columns.h: a layout byte first). The records are as in the raw file but
//            without addresses (a free carries its block's varint size and stack id; a block
//            allocated before the recording has size 0 and stack id kUnknownBlockStack, 0 before
//            version 5, when no block could have stack id 0; a temporary free has kTemporaryBit in
//            its tag and nothing else: its block is its thread's latest allocation, in the same
//            chunk; a temporary free whose allocation is in the chunk before has
//            kTemporaryNamedBit and its block's fields like any other free, so every chunk
//            decodes on its own); the ages of the frees that carry their block
//            (microseconds since their allocation, varints, in order) are a column of their
//            own. Version 1 had no layout byte: the records were always in a row; version 2
//            had no pairs layout.
//   meta     zstd frame: u8 complete, u32 modules_size, modules payload (result file
//            section 3), u32 stack_count, per stack u32 id, u32 depth, depth x u64 address,
//            u64 sample_interval_bytes (version 5: the raw header's; 0 in the full mode)
//   index    u32 count, per chunk: u64 offset, u32 compressed_size, u32 raw_size,
//            u64 time_us, u64 allocations, u32 tid, u64 events_before (decoder state at its
//            start)
//   footer   u64 meta_offset, u64 meta_size, u64 index_offset, u32 crc32, u32 0, "MTPRFEND"
//
// Integrity (version 4): every zstd frame (chunks, meta) carries zstd's content checksum,
// which decompression verifies, and the footer the CRC-32 (zlib's) of the header, the index
// and the footer's first 24 bytes; a flipped byte anywhere is an error naming the file, never
// a quietly different report. Versions 1 to 3 have neither, and a 32-byte footer without the
// CRC and its padding.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::profile {

inline constexpr size_t kPackedHeaderSize = 16;
inline constexpr size_t kFooterSize = 40;
inline constexpr size_t kFooterSizeV3 = 32;  // versions 1 to 3: no CRC
inline constexpr char kFooterMagic[8] = {'M', 'T', 'P', 'R', 'F', 'E', 'N', 'D'};
inline constexpr size_t kChunkBytes = size_t{4} << 20;  // raw bytes per chunk
inline constexpr size_t kIndexEntrySize = 8 + 4 + 4 + 8 + 8 + 4 + 8;
// zstd levels (docs/performance.md, "Heap profiles"): by column, level 3 compresses as well
// as level 7 within 1% (what is left is the sizes' own randomness) in a quarter of the time;
// in a row, regular programs' repeats need level 7's longer search (level 3: 20% larger).
inline constexpr int kColumnsLevel = 3;
inline constexpr int kRowsLevel = 7;
// By pair (C++ containers, 4 chunks): level 3 packs as fast as rows at level 7 did, 20%
// smaller; levels 5, 6 and 7 are 3%, 6% and 8% smaller again for 5%, 10% and 20% more CPU.
inline constexpr int kPairsLevel = 3;
// Version 1 (memtrack before chunks were independent) let a temporary free name an
// allocation of the chunk before: it is read from the first chunk only.
// Version 2 had no pairs layout (chunk_columns.h). Version 3 had no checksums. Version 4 had
// no sample interval, and no allocation without a stack (the sampled mode's blocks not
// sampled: stack id 0).
inline constexpr uint32_t kPackedVersion = 5;
// The stack id of a free whose block was allocated before the recording started (version 5).
inline constexpr uint32_t kUnknownBlockStack = 0xffffffff;
inline constexpr uint8_t kTemporaryNamedBit = 0x40;

struct ChunkInfo {
  uint64_t offset = 0;
  uint32_t compressed_size = 0;
  uint32_t raw_size = 0;
  uint64_t time_us = 0;
  uint64_t allocations = 0;  // allocations before the chunk: the last one's number
  uint32_t tid = 0;
  uint64_t events_before = 0;
};

}  // namespace memtrack::profile
