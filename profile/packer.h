// Packs a raw heap profile (as the runtime writes it) into the compressed, indexed file that
// memtrack report reads (packed_format.h), either after the process ended or while it runs,
// following the raw file as the runtime appends to it, and merging the threads' batches into
// one order by their sequence numbers. Chunks are compressed and written on a thread of the
// packer's own, while the next one is filled. Memory: one chunk plus the stacks, the blocks live at
// once (the raw file names blocks by address) and the events waiting for an earlier thread's
// batch (bounded by the runtime writing every batch within two sampling intervals).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace memtrack::profile {

struct PackStats {
  uint64_t events = 0;
  uint64_t raw_bytes = 0;
  uint64_t packed_bytes = 0;
  bool complete = false;          // the process ended normally (or this image exec'd another)
  bool replaced_by_exec = false;  // an exec replaced this image (the runtime's kExec record)
  // Events missing from the merged order (a thread's batch lost when the process was
  // killed), and events that came after their place had been given up.
  uint64_t missing_events = 0;
  uint64_t late_events = 0;
};

// Packs one raw file into one packed file. Not thread safe: one thread drives it (and it
// starts one more, for the compression).
class ProfilePacker {
 public:
  // Nothing is opened yet: the runtime may not have written the raw header.
  ProfilePacker(std::string raw_path, std::string out_path);
  ~ProfilePacker();
  ProfilePacker(const ProfilePacker&) = delete;
  ProfilePacker& operator=(const ProfilePacker&) = delete;

  // Packs what the runtime has appended since the last call: every record that is whole is
  // encoded and every full chunk compressed and written. Creates the packed file once the raw
  // header is there. Returns whether anything new was read. Throws Error for a corrupt input
  // or an unwritable output.
  bool step();

  // The process has ended: packs the rest (up to the last whole record: a raw file cut short
  // by SIGKILL ends inside one), then writes the metadata, the index and the footer.
  PackStats finish();

  // While the process runs: packs what the runtime has appended, then makes the packed file
  // whole as it stands (a reader sees every event packed so far, in a last chunk that may be
  // short, with the stacks so far), so that it can be analysed before the process ends.
  // Events waiting for another thread's batch are not in it yet. The next step() that fills
  // a chunk, the next checkpoint() and finish() write over that tail: the file is readable
  // only until then. Throws Error as step() does, and when there is no raw header yet.
  PackStats checkpoint();

  // Removes the packed file (a run that failed before finish()).
  void abandon();

  const std::string& raw_path() const;
  const std::string& out_path() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Writes `out` from the complete file `raw`. Throws Error for an unreadable or corrupt input
// or an unwritable output.
PackStats pack_profile(const std::string& raw, const std::string& out);

}  // namespace memtrack::profile
