// The packer and the reader on synthetic raw files: chunks that decode on their own (a
// temporary free whose allocation is in the chunk before), seeking to a window's chunk,
// packing a raw file while it grows, and merging threads' batches by sequence number.
#include "profile/packer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/error.h"
#include "core/profile_format.h"
#include "profile/analysis.h"
#include "profile/event_reader.h"
#include "profile/packed_format.h"

namespace memtrack::profile {
namespace {

namespace format = core::profile;
using format::Tag;

// A raw file of version 1: every record outside batches, in the order of the file.
class RawWriter {
 public:
  RawWriter() {
    bytes_.assign(format::kRawMagic, format::kRawMagic + 8);
    uint32_t header[2] = {1, 4242};
    uint64_t times[2] = {0, 0};
    append(header, sizeof(header));
    append(times, sizeof(times));
    tag(Tag::kModules);  // the result file's modules section: none
    varint(4);
    uint32_t no_modules = 0;
    append(&no_modules, 4);
    tag(Tag::kThread);
    varint(7);
    for (uint32_t id = 1; id <= kStacks; ++id) {
      tag(Tag::kStack);
      varint(id);
      varint(2);
      varint(format::zigzag(0x1000 + id));
      varint(format::zigzag(16));
    }
  }

  void alloc(uint64_t dt, uint64_t size, uint32_t stack, uint64_t ptr) {
    tag(Tag::kAlloc);
    varint(dt);
    varint(size);
    varint(stack);
    address(ptr);
  }
  void free(uint64_t dt, uint64_t ptr) {
    tag(Tag::kFree);
    varint(dt);
    address(ptr);
  }
  void end() { tag(Tag::kEnd); }
  void exec() { tag(Tag::kExec); }
  void exec_failed() { tag(Tag::kExecFailed); }
  void thread(uint32_t tid) {
    tag(Tag::kThread);
    varint(tid);
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  void set_version(uint32_t version) { std::memcpy(bytes_.data() + 8, &version, 4); }
  void set_sample_interval(uint64_t bytes) { std::memcpy(bytes_.data() + 24, &bytes, 8); }

  static constexpr uint32_t kStacks = 8;

 private:
  void append(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + n);
  }
  void tag(Tag t) { bytes_.push_back(static_cast<uint8_t>(t)); }
  void varint(uint64_t v) {
    uint8_t out[10];
    append(out, format::put_varint(out, v));
  }
  void address(uint64_t ptr) {
    varint(format::zigzag(static_cast<int64_t>(ptr - last_ptr_)));
    last_ptr_ = ptr;
  }
  std::vector<uint8_t> bytes_;
  uint64_t last_ptr_ = 0;
};

// `pairs` allocations each freed right after (temporaries), a microsecond apart, from the 8
// stacks in turn, with sizes 1..1000; every 100th block is kept until the end instead.
RawWriter churn(uint64_t pairs) {
  RawWriter w;
  std::vector<uint64_t> kept;
  for (uint64_t i = 0; i < pairs; ++i) {
    uint64_t ptr = i % 100 == 0 ? 0x10000000 + i * 16 : 0x100000;
    w.alloc(1, 1 + i % 1000, static_cast<uint32_t>(1 + i % RawWriter::kStacks), ptr);
    if (i % 100 == 0) {
      kept.push_back(ptr);
    } else {
      w.free(1, ptr);
    }
  }
  for (uint64_t ptr : kept) w.free(1, ptr);
  w.end();
  return w;
}

// One thread's batch of a version 2 raw file (core/profile_format.h, kBatch).
class BatchWriter {
 public:
  BatchWriter(uint32_t tid, uint64_t first_seq) : last_seq_(first_seq), first_seq_(first_seq) {
    tag(Tag::kThread);
    varint(tid);
  }
  void alloc(uint64_t seq, uint64_t time_us, uint64_t size, uint32_t stack, uint64_t ptr) {
    event(Tag::kAlloc, seq, time_us);
    varint(size);
    varint(stack);
    address(ptr);
  }
  void free(uint64_t seq, uint64_t time_us, uint64_t ptr) {
    event(Tag::kFree, seq, time_us);
    address(ptr);
  }
  // The batch as the runtime appends it to the file.
  void append_to(std::vector<uint8_t>& out) const {
    out.push_back(static_cast<uint8_t>(Tag::kBatch));
    auto size = static_cast<uint32_t>(payload_.size());
    const auto* p = reinterpret_cast<const uint8_t*>(&size);
    out.insert(out.end(), p, p + 4);
    p = reinterpret_cast<const uint8_t*>(&first_seq_);
    out.insert(out.end(), p, p + 8);
    out.insert(out.end(), payload_.begin(), payload_.end());
  }

 private:
  // The sequence number's difference as the runtime writes it: in the tag byte when 1 to 15.
  void event(Tag t, uint64_t seq, uint64_t time_us) {
    uint64_t delta = seq - last_seq_;
    if (delta >= 1 && delta <= format::kMaxTagSeqDelta) {
      payload_.push_back(static_cast<uint8_t>(static_cast<uint8_t>(t) | delta << 4));
    } else {
      tag(t);
      varint(delta);
    }
    last_seq_ = seq;
    varint(time_us - last_us_);
    last_us_ = time_us;
  }
  void tag(Tag t) { payload_.push_back(static_cast<uint8_t>(t)); }
  void varint(uint64_t v) {
    uint8_t out[10];
    size_t n = format::put_varint(out, v);
    payload_.insert(payload_.end(), out, out + n);
  }
  void address(uint64_t ptr) {
    varint(format::zigzag(static_cast<int64_t>(ptr - last_ptr_)));
    last_ptr_ = ptr;
  }
  std::vector<uint8_t> payload_;
  uint64_t last_seq_;
  uint64_t first_seq_;
  uint64_t last_us_ = 0;
  uint64_t last_ptr_ = 0;
};

// The start of a version 2 file: RawWriter's header, modules and stacks.
std::vector<uint8_t> batch_file_start() {
  RawWriter w;
  w.set_version(2);
  return w.bytes();
}

class PackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = ::testing::TempDir() + "packer_test." + std::to_string(getpid());
    raw_ = base + ".raw";
    packed_ = base + ".prof";
  }
  void TearDown() override {
    std::remove(raw_.c_str());
    std::remove(packed_.c_str());
  }
  void write_raw(const std::vector<uint8_t>& bytes, size_t from, size_t to, bool truncate) {
    std::ofstream out(raw_, std::ios::binary | (truncate ? std::ios::trunc : std::ios::app));
    out.write(reinterpret_cast<const char*>(bytes.data() + from),
              static_cast<std::streamsize>(to - from));
  }
  std::vector<uint8_t> read_packed() const {
    std::ifstream in(packed_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::string raw_;
  std::string packed_;
};

TEST_F(PackerTest, TemporariesAcrossChunkBoundariesKeepTheirBlock) {
  const uint64_t pairs = 2'000'000;
  RawWriter w = churn(pairs);
  write_raw(w.bytes(), 0, w.bytes().size(), true);
  PackStats stats = pack_profile(raw_, packed_);
  EXPECT_TRUE(stats.complete);
  EXPECT_EQ(stats.events, 2 * pairs);
  ProfileAnalysis a = analyze_profile(packed_, AnalyzeOptions{});
  EXPECT_EQ(a.allocations, pairs);
  EXPECT_EQ(a.frees, pairs);
  EXPECT_EQ(a.temporary, pairs - pairs / 100);
  EXPECT_EQ(a.unknown_frees, 0u);
  EXPECT_EQ(a.live_bytes, 0u);
  ProfileAnalysis from_raw = analyze_profile(raw_, AnalyzeOptions{});
  EXPECT_EQ(from_raw.temporary, a.temporary);
  EXPECT_EQ(from_raw.peak_bytes, a.peak_bytes);
  EXPECT_EQ(from_raw.allocated_bytes, a.allocated_bytes);
}

TEST_F(PackerTest, WindowOnlyAnalysisSkipsChunksAndAgreesWithTheWholePass) {
  RawWriter w = churn(2'000'000);
  write_raw(w.bytes(), 0, w.bytes().size(), true);
  pack_profile(raw_, packed_);
  AnalyzeOptions options;
  options.from_us = 3'000'000;
  options.to_us = 3'500'000;
  ProfileAnalysis whole = analyze_profile(packed_, options);
  options.window_only = true;
  ProfileAnalysis window = analyze_profile(packed_, options);
  EXPECT_GT(window.skipped_events, 2'000'000u);
  EXPECT_LT(window.events, whole.events - window.skipped_events);
  EXPECT_EQ(window.window_bytes, whole.window_bytes);
  EXPECT_EQ(window.window_blocks, whole.window_blocks);
  EXPECT_GT(window.window_blocks, 1000u);
  ASSERT_LE(window.sites.size(), whole.sites.size());
  for (size_t id = 0; id < window.sites.size(); ++id) {
    EXPECT_EQ(window.sites[id].window_bytes, whole.sites[id].window_bytes) << "stack " << id;
  }
  ProfileAnalysis from_raw = analyze_profile(raw_, options);  // packed first, then the same
  EXPECT_EQ(from_raw.skipped_events, window.skipped_events);
  EXPECT_EQ(from_raw.window_bytes, whole.window_bytes);
}

// Two threads hand a block to each other (thread 7 frees 0x5000, thread 8 gets the same
// address next): their batches, written in the opposite order to the file, must give exactly
// the packed file of the same events written in one order.
TEST_F(PackerTest, BatchesOfThreadsAreMergedBySequenceNumber) {
  struct E {
    uint32_t tid;
    bool alloc;
    uint64_t size;
    uint64_t ptr;
  };
  const std::vector<E> events = {
      {7, true, 100, 0x5000}, {8, true, 30, 0x9000},  {7, false, 0, 0x5000},
      {8, true, 64, 0x5000},  {7, true, 200, 0x6000}, {8, false, 0, 0x9000},
      {8, false, 0, 0x5000},  {7, false, 0, 0x6000},  {8, true, 5, 0xa000}};
  RawWriter ordered;
  ordered.thread(0);  // the batch file starts with thread 7's record only at its first event
  BatchWriter seven(7, 0);
  BatchWriter eight(8, 1);
  uint32_t tid = 0;
  for (uint64_t seq = 0; seq < events.size(); ++seq) {
    const E& e = events[seq];
    uint64_t time_us = 10 * (seq + 1);
    if (e.tid != tid) ordered.thread(e.tid);
    tid = e.tid;
    BatchWriter& batch = e.tid == 7 ? seven : eight;
    if (e.alloc) {
      ordered.alloc(10, e.size, 1, e.ptr);
      batch.alloc(seq, time_us, e.size, 1, e.ptr);
    } else {
      ordered.free(10, e.ptr);
      batch.free(seq, time_us, e.ptr);
    }
  }
  ordered.end();
  write_raw(ordered.bytes(), 0, ordered.bytes().size(), true);
  PackStats one_order = pack_profile(raw_, packed_);
  std::vector<uint8_t> expected = read_packed();

  std::vector<uint8_t> batches = batch_file_start();
  eight.append_to(batches);
  seven.append_to(batches);
  batches.push_back(static_cast<uint8_t>(Tag::kEnd));
  write_raw(batches, 0, batches.size(), true);
  PackStats merged = pack_profile(raw_, packed_);
  EXPECT_EQ(merged.events, one_order.events);
  EXPECT_EQ(merged.missing_events, 0u);
  EXPECT_EQ(read_packed(), expected);
  ProfileAnalysis a = analyze_profile(packed_, AnalyzeOptions{});
  EXPECT_EQ(a.unknown_frees, 0u);
  EXPECT_EQ(a.live_bytes, 5u);
  EXPECT_EQ(a.peak_bytes, 30u + 64 + 200);
}

// A batch that never reached the file (its thread held it when the process was killed):
// the events after it are packed in order once the file ends, and the gap is counted.
TEST_F(PackerTest, ABatchThatNeverCameIsCountedAndTheRestPacked) {
  BatchWriter first(7, 0);
  first.alloc(0, 1, 10, 1, 0x1000);
  first.alloc(1, 2, 20, 2, 0x2000);
  BatchWriter later(7, 5);
  later.free(5, 8, 0x1000);
  later.alloc(26, 9, 40, 3, 0x3000);  // 21 after its predecessor: a varint after the tag
  std::vector<uint8_t> bytes = batch_file_start();
  later.append_to(bytes);  // seqs 2-4 and 6-25 (other threads' batches) are missing
  first.append_to(bytes);
  write_raw(bytes, 0, bytes.size(), true);
  PackStats stats = pack_profile(raw_, packed_);
  EXPECT_FALSE(stats.complete);
  EXPECT_EQ(stats.events, 4u);
  EXPECT_EQ(stats.missing_events, 3u + 20);
  ProfileAnalysis a = analyze_profile(packed_, AnalyzeOptions{});
  EXPECT_EQ(a.allocations, 3u);
  EXPECT_EQ(a.live_bytes, 20u + 40);
  EXPECT_EQ(a.unknown_frees, 0u);
}

// Everything an analysis found, as text: two equal fingerprints are the same report.
std::string fingerprint(const ProfileAnalysis& a) {
  std::string out = std::to_string(a.meta.pid) + (a.meta.complete ? " complete" : " partial");
  auto add = [&out](uint64_t v) { out += " " + std::to_string(v); };
  for (const auto& [id, frames] : a.meta.stacks) {
    add(id);
    for (uint64_t f : frames) add(f);
  }
  for (uint64_t v : {a.events, a.allocations, a.frees, a.reallocs, a.allocated_bytes, a.temporary,
                     a.unknown_frees, a.peak_bytes, a.peak_blocks, a.peak_time_us, a.end_time_us,
                     a.live_bytes, a.live_blocks}) {
    add(v);
  }
  for (const SiteStats& site : a.sites) {
    for (uint64_t v : {site.allocations, site.allocated_bytes, site.temporary, site.live_bytes,
                       site.live_blocks, site.peak_bytes, site.peak_blocks}) {
      add(v);
    }
  }
  for (const SeriesPoint& p : a.series) {
    for (uint64_t v :
         {p.time_us, p.heap_bytes, p.heap_max_bytes, p.allocated_bytes, p.allocations}) {
      add(v);
    }
  }
  return out;
}

TEST_F(PackerTest, EveryFlippedByteOfAPackedFileIsAnErrorOrChangesNothing) {
  RawWriter w = churn(3000);
  write_raw(w.bytes(), 0, w.bytes().size(), true);
  pack_profile(raw_, packed_);
  const std::vector<uint8_t> good = read_packed();
  const std::string expected = fingerprint(analyze_profile(packed_, AnalyzeOptions{}));
  size_t errors = 0;
  size_t wrong = 0;
  for (size_t at = 0; at < good.size() && wrong < 4; ++at) {
    for (uint8_t bit : {0x01, 0x10, 0x80}) {
      std::vector<uint8_t> bad = good;
      bad[at] ^= bit;
      {
        std::ofstream out(packed_, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(bad.data()),
                  static_cast<std::streamsize>(bad.size()));
      }
      try {
        // Bits zstd's format leaves unused change nothing; any other flip must be seen.
        if (fingerprint(analyze_profile(packed_, AnalyzeOptions{})) != expected) {
          ++wrong;
          ADD_FAILURE() << "bit " << int{bit} << " of byte " << at << " of " << good.size()
                        << " flipped gave another report without an error";
        }
      } catch (const Error& e) {
        ++errors;
        EXPECT_NE(std::string(e.what()).find(packed_), std::string::npos) << e.what();
      }
    }
  }
  EXPECT_GT(errors, good.size() * 3 * 9 / 10);  // nearly every flip is an error
}

// Cuts shorter than the raw header once left the stream failed and the footer read from
// uninitialized memory (found by fuzz.profile_reader): every cut must be one error naming the file.
TEST_F(PackerTest, EveryCutOfAPackedFileIsAnErrorNamingIt) {
  RawWriter w = churn(300);
  write_raw(w.bytes(), 0, w.bytes().size(), true);
  pack_profile(raw_, packed_);
  const std::vector<uint8_t> good = read_packed();
  for (size_t cut = 8; cut < good.size(); cut += cut < 64 ? 1 : 7) {
    {
      std::ofstream out(packed_, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(good.data()), static_cast<std::streamsize>(cut));
    }
    try {
      analyze_profile(packed_, AnalyzeOptions{});
      ADD_FAILURE() << "a packed file cut at byte " << cut << " of " << good.size()
                    << " was read without an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(packed_ + ": corrupt heap profile"), std::string::npos)
          << "cut at " << cut << ": " << e.what();
    }
  }
}

TEST_F(PackerTest, ARawFileOfANewerVersionIsRefusedByName) {
  std::vector<uint8_t> bytes = batch_file_start();
  uint32_t version = format::kVersion + 1;
  std::memcpy(bytes.data() + 8, &version, 4);
  write_raw(bytes, 0, bytes.size(), true);
  try {
    pack_profile(raw_, packed_);
    FAIL() << "packed a file of an unknown version";
  } catch (const Error& e) {
    std::string expected = "raw heap profile version " + std::to_string(version) +
                           " is not supported (this memtrack reads versions 1 to " +
                           std::to_string(format::kVersion) + ")";
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

// The sampled mode (docs/sampling.md): blocks not sampled have no stack (id 0) and are
// counted exactly, apart from the frees of blocks from before the recording; a block with a
// stack stands for 1 / p(size) blocks of its size in its site's figures, the totals count
// every block once.
TEST_F(PackerTest, ASampledProfileEstimatesItsSitesAndCountsEveryBlockExactly) {
  constexpr uint64_t kInterval = 1000;
  RawWriter w;
  w.set_sample_interval(kInterval);
  for (uint64_t i = 0; i < 100; ++i) w.alloc(1, 10, 0, 0x10000 + i * 16);  // not sampled
  for (uint64_t i = 0; i < 40; ++i) w.free(1, 0x10000 + i * 16);
  for (uint64_t i = 0; i < 3; ++i) w.alloc(1, 100, 1, 0x20000 + i * 128);
  w.free(1, 0x20000);
  w.alloc(1, 5000, 2, 0x30000);
  w.free(1, 0xdead0);  // a block from before the recording
  w.end();
  write_raw(w.bytes(), 0, w.bytes().size(), true);
  pack_profile(raw_, packed_);
  for (const std::string& path : {raw_, packed_}) {
    SCOPED_TRACE(path);
    ProfileAnalysis a = analyze_profile(path, AnalyzeOptions{});
    EXPECT_TRUE(a.sampled());
    EXPECT_EQ(a.meta.sample_interval_bytes, kInterval);
    EXPECT_EQ(a.allocations, 104u);
    EXPECT_EQ(a.frees, 41u);
    EXPECT_EQ(a.unknown_frees, 1u);
    EXPECT_EQ(a.allocated_bytes, 1000u + 300u + 5000u);
    EXPECT_EQ(a.live_blocks, 60u + 2u + 1u);
    EXPECT_EQ(a.live_bytes, 600u + 200u + 5000u);
    EXPECT_EQ(a.peak_bytes, a.live_bytes);  // the 5,000-byte block came last
    ASSERT_EQ(a.sites.size(), 3u);
    const SiteStats& none = a.sites[0];
    EXPECT_EQ(std::tie(none.allocations, none.allocated_bytes, none.live_blocks, none.live_bytes),
              std::make_tuple(100u, 1000u, 60u, 600u));
    EXPECT_EQ(none.sampled_allocations, 0u);
    // A 100-byte block stands for 1 / (1 - e^-0.1) = 10.51 blocks and 1,051 bytes.
    double w100 = 1.0 / (1.0 - std::exp(-100.0 / kInterval));
    const SiteStats& small = a.sites[1];
    EXPECT_EQ(small.allocations, static_cast<uint64_t>(std::llround(3 * w100)));  // 32
    EXPECT_EQ(small.allocated_bytes, 3 * static_cast<uint64_t>(std::llround(100 * w100)));
    EXPECT_EQ(small.live_blocks, static_cast<uint64_t>(std::llround(2 * w100)));  // 21
    EXPECT_EQ(small.live_bytes, 2 * static_cast<uint64_t>(std::llround(100 * w100)));
    EXPECT_EQ(std::tie(small.sampled_allocations, small.sampled_live_blocks),
              std::make_tuple(3u, 2u));
    // At the peak (the 5,000-byte block's allocation) the small site held 2 of its blocks.
    EXPECT_EQ(small.peak_bytes, small.live_bytes);
    EXPECT_EQ(small.sampled_peak_blocks, 2u);
    // A 5,000-byte block is sampled with probability 1 - e^-5: it stands for 1.0068 blocks.
    const SiteStats& large = a.sites[2];
    EXPECT_EQ(large.allocated_bytes,
              static_cast<uint64_t>(std::llround(5000 / (1 - std::exp(-5.0)))));  // 5,034
    EXPECT_EQ(std::tie(large.allocations, large.live_blocks), std::make_tuple(1u, 1u));
  }
}

TEST_F(PackerTest, ASampleIntervalOutOfRangeIsCorruption) {
  RawWriter w;
  w.set_sample_interval(uint64_t{1} << 40);  // the runtime's sample_bytes is an int
  w.alloc(1, 10, 1, 0x10000);
  w.end();
  write_raw(w.bytes(), 0, w.bytes().size(), true);
  try {
    pack_profile(raw_, packed_);
    FAIL() << "packed a sample interval of 2^40";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sample interval out of range"), std::string::npos)
        << e.what();
  }
}

// In the full mode every block counts as itself, a block without a stack too (the depot was
// out of memory when it was allocated).
TEST_F(PackerTest, AFullModeBlockWithoutAStackIsASiteOfItsOwn) {
  RawWriter w;
  w.alloc(1, 10, 0, 0x10000);
  w.alloc(1, 20, 0, 0x10100);
  w.free(1, 0x10000);
  w.alloc(1, 30, 1, 0x20000);
  w.end();
  write_raw(w.bytes(), 0, w.bytes().size(), true);
  ProfileAnalysis a = analyze_profile(raw_, AnalyzeOptions{});
  EXPECT_FALSE(a.sampled());
  EXPECT_EQ(a.unknown_frees, 0u);
  ASSERT_EQ(a.sites.size(), 2u);
  EXPECT_EQ(std::tie(a.sites[0].allocations, a.sites[0].live_blocks, a.sites[0].live_bytes),
            std::make_tuple(2u, 1u, 20u));
  EXPECT_EQ(std::tie(a.sites[1].allocations, a.sites[1].live_bytes), std::make_tuple(1u, 30u));
  EXPECT_EQ(a.live_bytes, 50u);
}

TEST_F(PackerTest, FollowingAGrowingFileGivesTheSameFile) {
  RawWriter w = churn(300'000);
  const std::vector<uint8_t>& bytes = w.bytes();
  write_raw(bytes, 0, bytes.size(), true);
  pack_profile(raw_, packed_);
  std::vector<uint8_t> at_once = read_packed();

  write_raw(bytes, 0, 20, true);  // not even the header yet
  ProfilePacker packer(raw_, packed_);
  EXPECT_TRUE(packer.step());
  size_t done = 20;
  for (size_t cut : {size_t{1001}, size_t{1 << 20}, bytes.size() / 2 + 3, bytes.size()}) {
    write_raw(bytes, done, cut, false);  // cuts fall inside records
    done = cut;
    EXPECT_TRUE(packer.step());
    EXPECT_FALSE(packer.step());
  }
  packer.finish();
  EXPECT_EQ(read_packed(), at_once);
}

// The packer finds each freed block by its address: dense blocks, blocks a page apart and
// blocks a power of two apart (an allocator's size-class regions), freed in shuffled order,
// every free naming its block's size.
TEST_F(PackerTest, EveryFreeFindsItsBlockWhateverTheAddresses) {
  RawWriter w;
  std::vector<std::pair<uint64_t, uint64_t>> blocks;  // address, size
  for (uint64_t i = 0; i < 60'000; ++i) {
    blocks.emplace_back(0x10000000 + i * 16, 16);
    blocks.emplace_back(0x40000000 + i * 4096, 100 + i % 7);
    blocks.emplace_back(0x100000000 + (i << 20), 1000);
  }
  uint64_t bytes = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    w.alloc(1, blocks[i].second, static_cast<uint32_t>(1 + i % RawWriter::kStacks),
            blocks[i].first);
    bytes += blocks[i].second;
  }
  uint64_t x = 12345;
  for (size_t i = blocks.size() - 1; i > 0; --i) {  // Fisher-Yates with an LCG
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(blocks[i], blocks[(x >> 33) % (i + 1)]);
  }
  for (size_t i = 0; i < blocks.size() / 2; ++i) w.free(1, blocks[i].first);
  w.end();
  write_raw(w.bytes(), 0, w.bytes().size(), true);
  pack_profile(raw_, packed_);
  ProfileAnalysis a = analyze_profile(packed_, AnalyzeOptions{});
  uint64_t kept = 0;
  for (size_t i = blocks.size() / 2; i < blocks.size(); ++i) kept += blocks[i].second;
  EXPECT_EQ(a.unknown_frees, 0u);
  EXPECT_EQ(a.allocated_bytes, bytes);
  EXPECT_EQ(a.peak_bytes, bytes);
  EXPECT_EQ(a.live_bytes, kept);
}

// What memtrack ui does with a running program's profile: checkpoints while the raw file
// grows, each analysed as it stands, then the finished file.
TEST_F(PackerTest, ACheckpointIsReadableAndTheFileGoesOnAfterIt) {
  RawWriter w = churn(1'000'000);  // several chunks
  const std::vector<uint8_t>& bytes = w.bytes();
  auto analysis_of_prefix = [&](size_t cut) {
    write_raw(bytes, 0, cut, true);
    pack_profile(raw_, packed_);
    return analyze_profile(packed_, AnalyzeOptions{});
  };
  const size_t first_cut = bytes.size() / 3 + 1;  // inside a record
  ProfileAnalysis third = analysis_of_prefix(first_cut);
  ProfileAnalysis whole = analysis_of_prefix(bytes.size());
  ASSERT_GT(third.allocations, 1000u);
  ASSERT_LT(third.allocations, whole.allocations);

  write_raw(bytes, 0, first_cut, true);
  ProfilePacker packer(raw_, packed_);
  auto expect_same = [](const ProfileAnalysis& got, const ProfileAnalysis& want) {
    EXPECT_EQ(got.allocations, want.allocations);
    EXPECT_EQ(got.frees, want.frees);
    EXPECT_EQ(got.allocated_bytes, want.allocated_bytes);
    EXPECT_EQ(got.temporary, want.temporary);
    EXPECT_EQ(got.peak_bytes, want.peak_bytes);
    EXPECT_EQ(got.live_bytes, want.live_bytes);
    EXPECT_EQ(got.unknown_frees, 0u);
  };
  PackStats stats = packer.checkpoint();
  EXPECT_FALSE(stats.complete);
  expect_same(analyze_profile(packed_, AnalyzeOptions{}), third);
  stats = packer.checkpoint();  // nothing new: the same tail written again
  expect_same(analyze_profile(packed_, AnalyzeOptions{}), third);

  write_raw(bytes, first_cut, bytes.size(), false);
  stats = packer.checkpoint();  // chunks written over the first tail
  EXPECT_TRUE(stats.complete);
  expect_same(analyze_profile(packed_, AnalyzeOptions{}), whole);
  PackStats finished = packer.finish();
  EXPECT_EQ(finished.events, whole.allocations + whole.frees);
  ProfileAnalysis after = analyze_profile(packed_, AnalyzeOptions{});
  expect_same(after, whole);
  EXPECT_TRUE(after.meta.complete);
  // The checkpoints' tails were written over, not left between the chunks.
  std::vector<uint8_t> file = read_packed();
  std::string text(file.begin(), file.end());
  EXPECT_EQ(text.find("MTPRFEND"), text.size() - 8);
}

void expect_same_analysis(const ProfileAnalysis& got, const ProfileAnalysis& want) {
  EXPECT_EQ(got.events, want.events);
  EXPECT_EQ(got.allocations, want.allocations);
  EXPECT_EQ(got.frees, want.frees);
  EXPECT_EQ(got.reallocs, want.reallocs);
  EXPECT_EQ(got.allocated_bytes, want.allocated_bytes);
  EXPECT_EQ(got.temporary, want.temporary);
  EXPECT_EQ(got.unknown_frees, want.unknown_frees);
  EXPECT_EQ(got.peak_bytes, want.peak_bytes);
  EXPECT_EQ(got.peak_blocks, want.peak_blocks);
  EXPECT_EQ(got.peak_time_us, want.peak_time_us);
  EXPECT_EQ(got.end_time_us, want.end_time_us);
  EXPECT_EQ(got.live_bytes, want.live_bytes);
  EXPECT_EQ(got.live_blocks, want.live_blocks);
  EXPECT_EQ(got.has_window, want.has_window);
  EXPECT_EQ(got.window_from_us, want.window_from_us);
  EXPECT_EQ(got.window_to_us, want.window_to_us);
  EXPECT_EQ(got.window_bytes, want.window_bytes);
  EXPECT_EQ(got.window_blocks, want.window_blocks);
  EXPECT_EQ(got.bucket_us, want.bucket_us);
  EXPECT_EQ(got.meta.complete, want.meta.complete);
  EXPECT_EQ(got.meta.stacks.size(), want.meta.stacks.size());
  ASSERT_EQ(got.series.size(), want.series.size());
  for (size_t i = 0; i < got.series.size(); ++i) {
    const SeriesPoint& g = got.series[i];
    const SeriesPoint& w = want.series[i];
    EXPECT_EQ(std::tie(g.time_us, g.heap_bytes, g.heap_max_bytes, g.allocated_bytes, g.allocations,
                       g.rss_bytes),
              std::tie(w.time_us, w.heap_bytes, w.heap_max_bytes, w.allocated_bytes, w.allocations,
                       w.rss_bytes))
        << "point " << i;
  }
  // A window analysed apart ends its sites where its last one is; the whole pass has them all.
  ASSERT_LE(got.sites.size(), want.sites.size());
  for (size_t id = 0; id < want.sites.size(); ++id) {
    SiteStats g = id < got.sites.size() ? got.sites[id] : SiteStats{};
    const SiteStats& w = want.sites[id];
    EXPECT_EQ(std::tie(g.allocations, g.allocated_bytes, g.temporary, g.live_bytes, g.live_blocks,
                       g.peak_bytes, g.peak_blocks, g.window_bytes, g.window_blocks),
              std::tie(w.allocations, w.allocated_bytes, w.temporary, w.live_bytes, w.live_blocks,
                       w.peak_bytes, w.peak_blocks, w.window_bytes, w.window_blocks))
        << "stack " << id;
  }
}

// memtrack ui's analysis of a running program's profile reads, at each checkpoint, only the
// chunks added since the last one, and gives what a whole pass over the file gives, window
// and all. That it reads no chunk twice shows when an early chunk is damaged after it was
// read: the whole pass fails on it, the growing analysis does not read it again.
TEST_F(PackerTest, AGrowingAnalysisReadsOnlyNewChunksAndAgreesWithAWholePass) {
  RawWriter w = churn(1'500'000);  // several chunks
  const std::vector<uint8_t>& bytes = w.bytes();
  const std::vector<size_t> cuts = {bytes.size() / 5 + 3, bytes.size() / 2 + 1,
                                    bytes.size() / 2 + 2, bytes.size()};
  AnalyzeOptions options;
  options.max_points = 1000;
  GrowingProfileAnalysis growing(options);
  write_raw(bytes, 0, cuts[0], true);
  ProfilePacker packer(raw_, packed_);
  size_t written = cuts[0];
  for (size_t cut : cuts) {
    write_raw(bytes, written, cut, false);
    written = cut;
    packer.checkpoint();
    ProfileAnalysis whole = analyze_profile(packed_, options);
    if (cut == cuts.back()) {
      std::fstream file(packed_, std::ios::binary | std::ios::in | std::ios::out);
      file.seekp(static_cast<std::streamoff>(kPackedHeaderSize + 16));
      file.write("damaged!", 8);
      file.close();
      EXPECT_THROW(analyze_profile(packed_, options), Error);
    }
    SCOPED_TRACE("cut at byte " + std::to_string(cut));
    expect_same_analysis(growing.update(packed_), whole);
    expect_same_analysis(growing.update(packed_), whole);  // nothing new
  }
  EXPECT_TRUE(growing.update(packed_).meta.complete);
  EXPECT_THROW(growing.update(raw_), Error);  // a raw file is cut into chunks anew each time
}

TEST_F(PackerTest, AGrowingAnalysisTakesItsWindowFromTheWindowsChunks) {
  RawWriter w = churn(1'000'000);
  write_raw(w.bytes(), 0, w.bytes().size(), true);
  pack_profile(raw_, packed_);
  AnalyzeOptions options;
  GrowingProfileAnalysis growing(options);
  for (auto [from, to] :
       {std::pair<std::optional<uint64_t>, std::optional<uint64_t>>{1'000'000, 1'400'000},
        {std::nullopt, 200'000},
        {1'700'000, std::nullopt}}) {
    options.from_us = from;
    options.to_us = to;
    ProfileAnalysis whole = analyze_profile(packed_, options);
    // churn frees the blocks it keeps at its end: a window up to the end keeps none.
    EXPECT_EQ(whole.window_blocks > 0, to.has_value());
    expect_same_analysis(growing.update(packed_, from, to), whole);
  }
}

TEST_F(PackerTest, ACheckpointBeforeTheRawHeaderIsAnError) {
  write_raw({}, 0, 0, true);
  ProfilePacker packer(raw_, packed_);
  EXPECT_THROW(packer.checkpoint(), Error);
}

// The runtime marks an exec (kExec) after writing every batch: the image it replaces has a
// whole profile; an exec that returned (kExecFailed) leaves the process going on.
TEST_F(PackerTest, AnExecMarksTheImageCompleteUnlessItFailed) {
  for (bool failed : {false, true}) {
    RawWriter w = churn(100);
    std::vector<uint8_t> bytes = w.bytes();
    bytes.pop_back();  // churn's end record: the process did not end
    RawWriter marks;
    size_t header = marks.bytes().size();
    marks.exec();
    if (failed) marks.exec_failed();
    bytes.insert(bytes.end(), marks.bytes().begin() + static_cast<std::ptrdiff_t>(header),
                 marks.bytes().end());
    std::memcpy(bytes.data() + 8, &format::kVersion, 4);
    write_raw(bytes, 0, bytes.size(), true);
    PackStats stats = pack_profile(raw_, packed_);
    EXPECT_EQ(stats.replaced_by_exec, !failed) << "failed " << failed;
    EXPECT_EQ(stats.complete, !failed) << "failed " << failed;
    EXPECT_EQ(analyze_profile(packed_, AnalyzeOptions{}).meta.complete, !failed);
  }
}

TEST_F(PackerTest, ARawFileCutInsideARecordIsPackedUpToIt) {
  RawWriter w = churn(1000);
  write_raw(w.bytes(), 0, w.bytes().size() - 3, true);  // no end record, a free cut short
  PackStats stats = pack_profile(raw_, packed_);
  EXPECT_FALSE(stats.complete);
  EXPECT_EQ(stats.events, 1999u);
}

}  // namespace
}  // namespace memtrack::profile
