// The packed file's writer and its compressing thread (see chunk_compressor.h).
#include "profile/chunk_compressor.h"

#include <filesystem>

#include "common/error.h"

namespace memtrack::profile {
namespace {

constexpr size_t kLayoutTrial = 8;
constexpr size_t kRowsMargin = 110;  // percent

int level_of(ChunkLayout layout) {
  switch (layout) {
    case ChunkLayout::kRows:
      return kRowsLevel;
    case ChunkLayout::kPairs:
      return kPairsLevel;
    case ChunkLayout::kColumns:
      break;
  }
  return kColumnsLevel;
}

}  // namespace

ChunkWriter::ChunkWriter(const std::string& path) : path_(path), ctx_(ZSTD_createCCtx()) {}

ChunkWriter::~ChunkWriter() {
  ZSTD_freeCCtx(ctx_);
}

void ChunkWriter::open() {
  out_.open(path_, std::ios::binary | std::ios::trunc);
  if (!out_) throw Error("cannot write the heap profile " + path_);
}

std::span<const uint8_t> ChunkWriter::compress(const std::vector<uint8_t>& raw, int level) {
  ZSTD_CCtx_setParameter(ctx_, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(ctx_, ZSTD_c_checksumFlag, 1);  // packed_format.h, "Integrity"
  size_t bound = ZSTD_compressBound(raw.size());
  if (compressed_.size() < bound) compressed_.resize(bound);
  size_t n = ZSTD_compress2(ctx_, compressed_.data(), bound, raw.data(), raw.size());
  if (ZSTD_isError(n))
    throw Error("cannot compress the heap profile: " + std::string(ZSTD_getErrorName(n)));
  return {compressed_.data(), n};
}

uint32_t ChunkWriter::write(const std::vector<uint8_t>& raw) {
  std::span<const uint8_t> compressed = compress(raw, kRowsLevel);
  write_plain(compressed);
  return static_cast<uint32_t>(compressed.size());
}

void ChunkWriter::write_plain(std::span<const uint8_t> bytes) {
  out_.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  if (!out_) throw Error("cannot write " + path_);
  offset_ += bytes.size();
}

void ChunkWriter::flush() {
  out_.flush();
  if (!out_) throw Error("cannot write " + path_);
}

void ChunkWriter::truncate(uint64_t offset) {
  flush();
  std::error_code error;
  std::filesystem::resize_file(path_, offset, error);
  if (error) throw Error("cannot write " + path_ + ": " + error.message());
  out_.seekp(static_cast<std::streamoff>(offset));
  if (!out_) throw Error("cannot write " + path_);
  offset_ = offset;
}

void ChunkWriter::close() {
  out_.close();
  if (!out_) throw Error("cannot write the heap profile " + path_);
}

void ChunkCompressor::submit(std::vector<uint8_t>& records, std::vector<uint8_t>& ages,
                             const ChunkInfo& start) {
  std::unique_lock lock(mutex_);
  if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
  changed_.wait(lock, [this] { return queue_.size() < kQueuedChunks || error_; });
  rethrow_locked();
  Job job;
  job.start = start;
  job.records.swap(records);
  job.ages.swap(ages);
  if (!spare_.empty()) {
    records.swap(spare_.back().records);
    ages.swap(spare_.back().ages);
    spare_.pop_back();
  }
  queue_.push_back(std::move(job));
  changed_.notify_all();
}

std::vector<ChunkInfo> ChunkCompressor::written() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return (queue_.empty() && !busy_) || error_; });
  rethrow_locked();
  return index_;  // the thread is idle: nothing writes it until the next submit()
}

std::vector<ChunkInfo> ChunkCompressor::finish() {
  std::vector<ChunkInfo> index = written();
  stop();
  return index;
}

void ChunkCompressor::rethrow_locked() {
  if (error_) std::rethrow_exception(error_);
}

void ChunkCompressor::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

void ChunkCompressor::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (stopping_) return;  // finish() waited for the queue; the destructor drops it
    Job job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    try {
      write(job);
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
      busy_ = false;
      changed_.notify_all();
      return;
    }
    job.records.clear();
    job.ages.clear();
    lock.lock();
    spare_.push_back(std::move(job));
    busy_ = false;
    changed_.notify_all();
  }
}

// Every kLayoutTrial-th chunk is compressed in every layout at level 1, and the layout
// chosen is used until the next trial (a program's allocation pattern rarely changes its
// nature; compressing three times every time would triple the packing's cost). Pairs win
// when they are the smallest at level 1 (few distinct sizes and stacks); otherwise rows win
// when they come within kRowsMargin of columns at level 1: level 7 then makes them 15-25%
// smaller than columns at level 3, where columns gain next to nothing from level 7
// (measured per chunk on malloc churn and C++ containers, docs/performance.md).
// Returns the layout chosen and sets `*raw` to the chunk laid out so.
ChunkLayout ChunkCompressor::trial_layout(const Job& job, std::vector<uint8_t>* raw) {
  std::vector<uint8_t> columns = encode_chunk(job.records, job.ages, ChunkLayout::kColumns);
  std::vector<uint8_t> rows = encode_chunk(job.records, job.ages, ChunkLayout::kRows);
  std::vector<uint8_t> pairs = encode_chunk(job.records, job.ages, ChunkLayout::kPairs);
  size_t columns_size = writer_.compress(columns, 1).size();
  size_t rows_size = writer_.compress(rows, 1).size();
  size_t pairs_size = writer_.compress(pairs, 1).size();
  if (pairs_size <= columns_size && pairs_size <= rows_size) {
    *raw = std::move(pairs);
    return ChunkLayout::kPairs;
  }
  if (rows_size * 100 <= columns_size * kRowsMargin) {
    *raw = std::move(rows);
    return ChunkLayout::kRows;
  }
  *raw = std::move(columns);
  return ChunkLayout::kColumns;
}

void ChunkCompressor::write(const Job& job) {
  std::vector<uint8_t> raw;
  if (index_.size() % kLayoutTrial == 0) {
    layout_ = trial_layout(job, &raw);
  } else {
    raw = encode_chunk(job.records, job.ages, layout_);
  }
  std::span<const uint8_t> compressed = writer_.compress(raw, level_of(layout_));
  ChunkInfo info = job.start;
  info.offset = writer_.offset();
  info.raw_size = static_cast<uint32_t>(raw.size());
  info.compressed_size = static_cast<uint32_t>(compressed.size());
  writer_.write_plain(compressed);
  index_.push_back(info);
}

}  // namespace memtrack::profile
