// Reads a heap profile, packed (compressed and indexed by memtrack run) or raw (as the
// runtime writes it: packed first into a temporary file), as one stream of events, in bounded
// memory: one chunk of the file at a time.
// The input is untrusted: anything malformed throws one memtrack::Error naming the file.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbolize/frame.h"

namespace memtrack::profile {

struct Event {
  enum class Kind : uint8_t { kAlloc, kFree, kReallocFree, kSample } kind = Kind::kAlloc;
  uint64_t time_us = 0;  // since the process started
  uint32_t tid = 0;
  uint64_t size = 0;      // the block's bytes; kSample: RSS bytes
  uint32_t stack_id = 0;  // the block's allocation stack; 0: none (the sampled mode's blocks
                          // not sampled, or unknown_block)
  // A free of a block allocated before the recording started: nothing else is known of it.
  bool unknown_block = false;
  // Frees only: when the block was allocated, and whether the free is a temporary one
  // (docs/profiling.md: the thread's previous event was this block's allocation).
  uint64_t alloc_time_us = 0;
  bool temporary = false;
};

// What a profile says besides its events.
struct ProfileMeta {
  uint32_t pid = 0;
  bool complete = false;  // the process ended normally (the end record is there)
  std::vector<RawModule> modules;
  std::map<uint32_t, std::vector<uint64_t>> stacks;  // id -> return addresses, innermost first
  // The sampled mode's mean interval (docs/sampling.md); 0: the full mode, every allocation
  // has its stack.
  uint64_t sample_interval_bytes = 0;
};

// Which kind of file `path` is: true for a heap profile (raw or packed). Throws Error if it
// cannot be read.
bool is_profile_file(const std::string& path);

// The pid in the header of a packed profile that has no footer yet: memtrack run is still
// writing it (its index comes when the program ends), or was killed. nullopt for any other
// file. Throws Error if it cannot be read.
std::optional<uint32_t> unfinished_profile_pid(const std::string& path);

// Not thread safe; one per pass over a file.
class EventReader {
 public:
  // Opens `path` and reads its header, metadata and index (a raw file is packed first).
  explicit EventReader(const std::string& path);
  ~EventReader();
  EventReader(const EventReader&) = delete;
  EventReader& operator=(const EventReader&) = delete;

  // The next event; false at the end of the file (a raw file cut short by a killed process
  // ends at its last whole record).
  bool next(Event* /*out*/ event);
  const ProfileMeta& meta() const { return meta_; }

  // Before the first next(): starts at the chunk where events at `time_us` may begin,
  // skipping the chunks before it (events earlier than `time_us` may still follow). Packed
  // files of version 1 cannot; returns false (and reads from the start) then.
  bool skip_to(uint64_t time_us);
  // The allocations and frees in the chunks skip_to() passed over.
  uint64_t skipped_events() const { return skipped_events_; }

  // Whether the file is raw (and so was packed by this reader first).
  bool raw() const { return raw_; }
  // The chunks of a packed file (a raw file's after packing).
  size_t chunk_count() const;
  // Before the first next(): starts at chunk `index` (at most chunk_count()), whose events
  // follow those of the chunks before it (a growing file's chunks never change once written:
  // ProfilePacker::checkpoint). False for packed files of version 1, which cannot.
  bool start_at_chunk(size_t index);

  class Source;  // where the decoded bytes come from (the zstd chunks)

 private:
  bool next_record(Event* event);
  bool ensure(size_t bytes);  // false if the file ends first
  uint8_t byte();
  uint64_t varint();
  void read_stack();
  void read_modules();
  [[noreturn]] void fail(const std::string& problem) const;

  std::string path_;
  std::unique_ptr<Source> source_;
  struct Block {
    uint64_t size;
    uint64_t time_us;
    uint32_t stack_id;
  };
  // Each thread's latest allocation until its next free (temporary frees name no block).
  std::unordered_map<uint32_t, Block> last_alloc_block_;
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0;
  uint64_t consumed_ = 0;  // bytes of the stream before buffer_[0], for error messages
  ProfileMeta meta_;
  uint64_t time_us_ = 0;
  uint32_t tid_ = 0;
  uint32_t packed_version_ = 0;
  uint64_t skipped_events_ = 0;
  bool raw_ = false;
};

}  // namespace memtrack::profile
