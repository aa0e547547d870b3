// The packed file's writer and the thread that lays out, compresses and writes its chunks
// (the packer's back end, packer.cpp; the layouts are chunk_columns.h, the file
// packed_format.h).
#pragma once

#include <zstd.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <fstream>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "profile/chunk_columns.h"
#include "profile/packed_format.h"

namespace memtrack::profile {

// The packed file being written, and one zstd context. Throws Error when it cannot write.
class ChunkWriter {
 public:
  explicit ChunkWriter(const std::string& path);
  ~ChunkWriter();
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  void open();
  bool is_open() const { return out_.is_open(); }

  // Compresses `raw` into a buffer the writer keeps (valid until the next call): a new
  // vector per chunk was zeroed and faulted in again every time (4 MiB a chunk).
  std::span<const uint8_t> compress(const std::vector<uint8_t>& raw, int level);
  // Compresses `raw` and writes it at the current end of the file. Returns its size.
  uint32_t write(const std::vector<uint8_t>& raw);
  void write_plain(std::span<const uint8_t> bytes);
  // Pushes what was written to the file, for a reader of it (a checkpoint, packer.h).
  void flush();
  // Cuts the file at `offset` and writes from there on (what a checkpoint wrote after it).
  void truncate(uint64_t offset);
  void close();
  uint64_t offset() const { return offset_; }

 private:
  std::ofstream out_;
  const std::string& path_;
  ZSTD_CCtx* ctx_;
  std::vector<uint8_t> compressed_;  // grown, never shrunk
  uint64_t offset_ = 0;
};

// Lays out, compresses and writes the chunks in order on a thread of its own, so that the
// packer's thread goes on decoding while a chunk is compressed (half the packing's CPU on
// malloc churn; with a core to spare the program then waits for neither). At most
// kQueuedChunks wait; their buffers are handed back for the next chunks, so no chunk's
// memory is faulted in anew.
class ChunkCompressor {
 public:
  explicit ChunkCompressor(ChunkWriter& writer) : writer_(writer) {}
  ~ChunkCompressor() { stop(); }
  ChunkCompressor(const ChunkCompressor&) = delete;
  ChunkCompressor& operator=(const ChunkCompressor&) = delete;

  // Takes the chunk (`records` and `ages` come back empty, with the capacity of a chunk
  // done). Throws the compressing thread's error, if it had one.
  void submit(std::vector<uint8_t>& records, std::vector<uint8_t>& ages, const ChunkInfo& start);

  // Waits until every chunk submitted is written; returns the index of them all. The
  // compressor takes more chunks after it.
  std::vector<ChunkInfo> written();
  // written(), then stops the thread.
  std::vector<ChunkInfo> finish();

 private:
  static constexpr size_t kQueuedChunks = 2;
  struct Job {
    std::vector<uint8_t> records;
    std::vector<uint8_t> ages;
    ChunkInfo start;
  };

  void rethrow_locked();
  void stop();
  void run();
  ChunkLayout trial_layout(const Job& job, std::vector<uint8_t>* raw);
  void write(const Job& job);

  ChunkWriter& writer_;
  // The compressing thread's own: layout_, index_ (read by finish() once it is idle).
  ChunkLayout layout_ = ChunkLayout::kColumns;
  std::vector<ChunkInfo> index_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queue_;     // guarded by mutex_
  std::vector<Job> spare_;    // guarded by mutex_: written chunks' buffers, for reuse
  bool busy_ = false;         // guarded by mutex_: a job is being written
  bool stopping_ = false;     // guarded by mutex_
  std::exception_ptr error_;  // guarded by mutex_
  std::thread worker_;
};

}  // namespace memtrack::profile
