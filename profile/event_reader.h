// Reads a heap profile, raw (as the runtime writes it) or packed (compressed and indexed by
// memtrack run), as one stream of events, in bounded memory: one chunk of the file at a time.
// The input is untrusted: anything malformed throws one memtrack::Error naming the file.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/frame.h"

namespace memtrack::profile {

struct Event {
  enum class Kind : uint8_t { kAlloc, kFree, kReallocFree, kSample } kind = Kind::kAlloc;
  uint64_t time_us = 0;  // since the process started
  uint32_t tid = 0;
  uint64_t ptr = 0;  // the block: its address (raw files) or its allocation's number (packed)
  uint64_t size = 0;      // kAlloc: bytes; kSample: RSS bytes
  uint32_t stack_id = 0;  // kAlloc
};

// What a profile says besides its events. For a raw file the stacks and modules are only
// complete once every event has been read.
struct ProfileMeta {
  uint32_t pid = 0;
  bool packed = false;
  bool complete = false;  // the process ended normally (the end record is there)
  std::vector<RawModule> modules;
  std::map<uint32_t, std::vector<uint64_t>> stacks;  // id -> return addresses, innermost first
};

// Which kind of file `path` is: true for a heap profile (raw or packed). Throws Error if it
// cannot be read.
bool is_profile_file(const std::string& path);

// Not thread safe; one per pass over a file.
class EventReader {
 public:
  // Opens `path` and reads its header (and, for a packed file, its metadata and index).
  explicit EventReader(const std::string& path);
  ~EventReader();
  EventReader(const EventReader&) = delete;
  EventReader& operator=(const EventReader&) = delete;

  // The next event; false at the end of the file. Stack and module records are taken into
  // meta() as they come.
  bool next(Event* /*out*/ event);
  const ProfileMeta& meta() const { return meta_; }

  class Source;  // where the decoded bytes come from (raw file or zstd chunks)

 private:
  bool ensure(size_t bytes);  // false if the file ends first
  uint8_t byte();
  uint64_t varint();
  void read_stack();
  void read_modules();
  [[noreturn]] void fail(const std::string& problem) const;

  std::string path_;
  std::unique_ptr<Source> source_;
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0;
  uint64_t consumed_ = 0;  // bytes of the stream before buffer_[0], for error messages
  ProfileMeta meta_;
  uint64_t time_us_ = 0;
  uint64_t last_ptr_ = 0;  // raw: the last address; packed: the last allocation's number
  uint32_t tid_ = 0;
};

}  // namespace memtrack::profile
