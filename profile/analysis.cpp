// The streaming analysis of a heap profile (see analysis.h).
#include "profile/analysis.h"

#include <cmath>

#include "common/error.h"
#include "core/sampling.h"
#include "report/text_format.h"

namespace memtrack::profile {
namespace {

constexpr uint64_t kFirstBucketUs = 1000;
constexpr uint32_t kMaxStackId = 1u << 24;
// The sampled mode sums the sites' block figures in fixed point, this much to one block, and
// rounds them once when the analysis is read (as the leak report's estimates are summed).
constexpr uint64_t kSampledBlockUnit = uint64_t{1} << 16;

// What one block adds to its site's figures: its bytes and, in units of blocks (a
// kSampledBlockUnit-th of one in the sampled mode), its count.
struct Weight {
  uint64_t bytes = 0;
  uint64_t blocks = 0;
};

// The weights of the blocks of a profile (docs/sampling.md): in the full mode, what each is;
// in the sampled mode, a block with a stack stands for 1 / p(size) blocks of its size, except
// those the runtime always records with their stack (called from the C/C++ runtime's own code:
// record/record.h), and a block without one for itself.
class SampleWeigher {
 public:
  // `meta` is read by weigh() only, until the next set_meta.
  void set_meta(const ProfileMeta* meta) {
    meta_ = meta;
    interval_ = meta->sample_interval_bytes;
  }
  bool sampled() const { return interval_ > 0; }
  uint64_t block_unit() const { return sampled() ? kSampledBlockUnit : 1; }

  Weight weigh(uint64_t size, uint32_t stack_id) {
    if (!sampled()) return {size, 1};
    if (stack_id == 0 || always_recorded(stack_id)) return {size, kSampledBlockUnit};
    double weight = 1.0 / core::sample_probability(size, interval_);
    return {static_cast<uint64_t>(std::llround(weight * static_cast<double>(size))),
            static_cast<uint64_t>(std::llround(weight * kSampledBlockUnit))};
  }

 private:
  bool always_recorded(uint32_t stack_id) {
    if (stack_id >= runtime_caller_.size()) runtime_caller_.resize(stack_id + 1, kUnknown);
    int8_t& known = runtime_caller_[stack_id];
    if (known == kUnknown) known = called_from_runtime(stack_id) ? 1 : 0;
    return known == 1;
  }

  bool called_from_runtime(uint32_t stack_id) const {
    auto stack = meta_->stacks.find(stack_id);
    if (stack == meta_->stacks.end() || stack->second.empty()) return false;
    uint64_t pc = stack->second.front() - 1;
    for (const RawModule& m : meta_->modules) {
      if (pc >= m.start && pc < m.end && !m.unloaded) {
        return report::is_system_runtime_module(m.path);
      }
    }
    return false;
  }

  static constexpr int8_t kUnknown = -1;
  const ProfileMeta* meta_ = nullptr;
  uint64_t interval_ = 0;
  std::vector<int8_t> runtime_caller_;  // by stack id: 1 if called from the runtime's code
};

// The block figures of `a`'s sites from units of `unit` to blocks.
void round_site_blocks(ProfileAnalysis& a, uint64_t unit) {
  if (unit == 1) return;
  auto to_blocks = [unit](uint64_t& units) { units = (units + unit / 2) / unit; };
  for (SiteStats& s : a.sites) {
    to_blocks(s.allocations);
    to_blocks(s.temporary);
    to_blocks(s.live_blocks);
    to_blocks(s.peak_blocks);
    to_blocks(s.window_blocks);
  }
}

class Analyzer {
 public:
  Analyzer(ProfileAnalysis& out, const AnalyzeOptions& options) : a_(out), options_(options) {
    a_.bucket_us = kFirstBucketUs;
    a_.has_window = options.from_us.has_value() || options.to_us.has_value();
    a_.window_from_us = options.from_us.value_or(0);
    a_.window_to_us = options.to_us.value_or(UINT64_MAX);
  }

  void add(const Event& e) {
    ++a_.events;
    a_.end_time_us = e.time_us;
    SeriesPoint& point = point_at(e.time_us);
    switch (e.kind) {
      case Event::Kind::kSample:
        --a_.events;
        if (e.size > point.rss_bytes) point.rss_bytes = e.size;
        if (e.size > a_.peak_rss_bytes) a_.peak_rss_bytes = e.size;
        return;
      case Event::Kind::kAlloc:
        alloc(e, point);
        break;
      case Event::Kind::kFree:
      case Event::Kind::kReallocFree:
        free(e);
        break;
    }
    point.heap_bytes = a_.live_bytes;
    if (a_.live_bytes > point.heap_max_bytes) point.heap_max_bytes = a_.live_bytes;
  }

  // The profile's stacks and modules, and its sample interval, before the events (a growing
  // profile's: every update's).
  void set_meta(const ProfileMeta* meta) { weigher_.set_meta(meta); }

  void finish() {
    for (SiteStats& site : a_.sites) bring_to_peak(site);
    if (a_.has_window && a_.window_to_us == UINT64_MAX) a_.window_to_us = a_.end_time_us;
    round_site_blocks(a_, weigher_.block_unit());
  }

  // What finish() would make of the analysis so far, leaving it to go on.
  ProfileAnalysis finished_copy() const {
    ProfileAnalysis copy = a_;
    for (SiteStats& site : copy.sites) bring_to_peak(site);
    if (copy.has_window && copy.window_to_us == UINT64_MAX) copy.window_to_us = copy.end_time_us;
    round_site_blocks(copy, weigher_.block_unit());
    return copy;
  }

 private:
  SiteStats& site(uint32_t stack_id) {
    if (stack_id >= kMaxStackId) throw Error("corrupt heap profile (stack id out of range)");
    if (stack_id >= a_.sites.size()) a_.sites.resize(stack_id + 1);
    return a_.sites[stack_id];
  }

  // The per-site peak figures are brought up to date lazily: a site not changed since the
  // latest peak held then what it holds now (see docs/profiling.md, "The peak").
  void bring_to_peak(SiteStats& s) const {
    if (s.peak_epoch == peak_epoch_) return;
    s.peak_epoch = peak_epoch_;
    s.peak_bytes = s.live_bytes;
    s.peak_blocks = s.live_blocks;
    s.sampled_peak_blocks = s.sampled_live_blocks;
  }

  // The totals count every block as it is; the sites, by its weight (SiteStats).
  void alloc(const Event& e, SeriesPoint& point) {
    SiteStats& s = site(e.stack_id);
    bring_to_peak(s);
    Weight w = weigher_.weigh(e.size, e.stack_id);
    ++a_.allocations;
    a_.allocated_bytes += e.size;
    ++point.allocations;
    point.allocated_bytes += e.size;
    s.allocations += w.blocks;
    s.allocated_bytes += w.bytes;
    s.live_bytes += w.bytes;
    s.live_blocks += w.blocks;
    if (weigher_.sampled() && e.stack_id != 0) {
      ++s.sampled_allocations;
      ++s.sampled_live_blocks;
    }
    if (in_window(e.time_us)) add_window(s, e, w, 1);
    a_.live_bytes += e.size;
    ++a_.live_blocks;
    if (a_.live_bytes > a_.peak_bytes) {
      a_.peak_bytes = a_.live_bytes;
      a_.peak_blocks = a_.live_blocks;
      a_.peak_time_us = e.time_us;
      ++peak_epoch_;  // every site now holds its peak figures
    }
  }

  void free(const Event& e) {
    if (e.kind == Event::Kind::kReallocFree) ++a_.reallocs;
    if (e.unknown_block) {
      ++a_.unknown_frees;
      return;
    }
    SiteStats& s = site(e.stack_id);
    Weight w = weigher_.weigh(e.size, e.stack_id);  // what the block's allocation added
    if (s.live_blocks < w.blocks || s.live_bytes < w.bytes || a_.live_blocks == 0 ||
        a_.live_bytes < e.size ||
        (s.sampled_live_blocks == 0 && weigher_.sampled() && e.stack_id != 0)) {
      throw Error("corrupt heap profile (a free of more than its site holds)");
    }
    bring_to_peak(s);
    ++a_.frees;
    s.live_bytes -= w.bytes;
    s.live_blocks -= w.blocks;
    if (weigher_.sampled() && e.stack_id != 0) --s.sampled_live_blocks;
    a_.live_bytes -= e.size;
    --a_.live_blocks;
    if (e.temporary) {
      ++a_.temporary;
      s.temporary += w.blocks;
    }
    // Freed inside the window: the window did not keep it.
    if (in_window(e.alloc_time_us) && e.time_us < a_.window_to_us) add_window(s, e, w, -1);
  }

  bool in_window(uint64_t time_us) const {
    return a_.has_window && time_us >= a_.window_from_us && time_us < a_.window_to_us;
  }

  void add_window(SiteStats& s, const Event& e, Weight w, int direction) {
    if (direction > 0) {
      s.window_bytes += w.bytes;
      s.window_blocks += w.blocks;
      a_.window_bytes += e.size;
      ++a_.window_blocks;
    } else {
      s.window_bytes -= w.bytes;
      s.window_blocks -= w.blocks;
      a_.window_bytes -= e.size;
      --a_.window_blocks;
    }
  }

  SeriesPoint& point_at(uint64_t time_us) {
    uint64_t index = time_us / a_.bucket_us;
    while (index >= options_.max_points) {
      merge_pairs();
      index = time_us / a_.bucket_us;
    }
    while (a_.series.size() <= index) {
      SeriesPoint p;
      p.time_us = a_.series.size() * a_.bucket_us;
      p.heap_bytes = a_.live_bytes;
      p.heap_max_bytes = a_.live_bytes;
      a_.series.push_back(p);
    }
    return a_.series[index];
  }

  void merge_pairs() {
    std::vector<SeriesPoint> merged;
    for (size_t i = 0; i < a_.series.size(); i += 2) {
      SeriesPoint p = a_.series[i];
      if (i + 1 < a_.series.size()) {
        const SeriesPoint& q = a_.series[i + 1];
        p.heap_bytes = q.heap_bytes;
        if (q.heap_max_bytes > p.heap_max_bytes) p.heap_max_bytes = q.heap_max_bytes;
        p.allocated_bytes += q.allocated_bytes;
        p.allocations += q.allocations;
        if (q.rss_bytes > p.rss_bytes) p.rss_bytes = q.rss_bytes;
      }
      merged.push_back(p);
    }
    a_.series = std::move(merged);
    a_.bucket_us *= 2;
  }

  ProfileAnalysis& a_;
  const AnalyzeOptions& options_;
  SampleWeigher weigher_;
  uint64_t peak_epoch_ = 0;
};

// The window alone (AnalyzeOptions::window_only): what [from, to) allocated and did not
// free before `to` needs only the events in it, since a free carries its block's time.
class WindowAnalyzer {
 public:
  WindowAnalyzer(ProfileAnalysis& out, const AnalyzeOptions& options, const ProfileMeta* meta)
      : a_(out) {
    a_.has_window = true;
    a_.window_from_us = options.from_us.value_or(0);
    a_.window_to_us = options.to_us.value_or(UINT64_MAX);
    weigher_.set_meta(meta);
  }

  // False once the window is over.
  bool add(const Event& e) {
    if (e.time_us >= a_.window_to_us) return false;
    ++a_.events;
    a_.end_time_us = e.time_us;
    if (e.kind == Event::Kind::kAlloc && e.time_us >= a_.window_from_us) {
      SiteStats& s = site(e.stack_id);
      Weight w = weigher_.weigh(e.size, e.stack_id);
      s.window_blocks += w.blocks;
      s.window_bytes += w.bytes;
      ++a_.window_blocks;
      a_.window_bytes += e.size;
    } else if ((e.kind == Event::Kind::kFree || e.kind == Event::Kind::kReallocFree) &&
               !e.unknown_block && e.alloc_time_us >= a_.window_from_us) {
      SiteStats& s = site(e.stack_id);
      Weight w = weigher_.weigh(e.size, e.stack_id);
      if (s.window_blocks < w.blocks || s.window_bytes < w.bytes || a_.window_blocks == 0 ||
          a_.window_bytes < e.size) {
        throw Error("corrupt heap profile (a free of more than its site holds)");
      }
      s.window_blocks -= w.blocks;
      s.window_bytes -= w.bytes;
      --a_.window_blocks;
      a_.window_bytes -= e.size;
    }
    if (e.kind == Event::Kind::kSample) --a_.events;
    return true;
  }

  void finish() {
    if (a_.window_to_us == UINT64_MAX) a_.window_to_us = a_.end_time_us;
    round_site_blocks(a_, weigher_.block_unit());
  }

 private:
  SiteStats& site(uint32_t stack_id) {
    if (stack_id >= kMaxStackId) throw Error("corrupt heap profile (stack id out of range)");
    if (stack_id >= a_.sites.size()) a_.sites.resize(stack_id + 1);
    return a_.sites[stack_id];
  }

  ProfileAnalysis& a_;
  SampleWeigher weigher_;
};

template <typename Read>
void with_path_in_errors(const std::string& path, Read read) {
  try {
    read();
  } catch (const Error& e) {
    std::string what = e.what();
    if (what.rfind(path, 0) == 0) throw;
    throw Error(path + ": " + what);
  }
}

ProfileAnalysis analyze_window(const std::string& path, const AnalyzeOptions& options) {
  ProfileAnalysis result;
  EventReader reader(path);
  if (options.from_us && reader.skip_to(*options.from_us)) {
    result.skipped_events = reader.skipped_events();
  }
  WindowAnalyzer analyzer(result, options, &reader.meta());
  Event event;
  with_path_in_errors(path, [&] {
    while (reader.next(&event) && analyzer.add(event)) {
    }
  });
  analyzer.finish();
  result.meta = reader.meta();
  return result;
}

}  // namespace

struct GrowingProfileAnalysis::State {
  explicit State(const AnalyzeOptions& given) : options(given) {
    options.from_us.reset();
    options.to_us.reset();
    options.window_only = false;
  }
  AnalyzeOptions options;
  ProfileAnalysis analysis;
  Analyzer analyzer{analysis, options};
  size_t chunks_read = 0;
};

GrowingProfileAnalysis::GrowingProfileAnalysis(const AnalyzeOptions& options)
    : state_(std::make_unique<State>(options)) {}

GrowingProfileAnalysis::~GrowingProfileAnalysis() = default;

namespace {

// The window's figures of `window` (analyze_window's) in `a`, which has none.
void add_window_of(ProfileAnalysis& a, const ProfileAnalysis& window) {
  a.has_window = true;
  a.window_from_us = window.window_from_us;
  a.window_to_us = window.window_to_us;
  a.window_bytes = window.window_bytes;
  a.window_blocks = window.window_blocks;
  if (window.sites.size() > a.sites.size()) a.sites.resize(window.sites.size());
  for (size_t i = 0; i < window.sites.size(); ++i) {
    a.sites[i].window_bytes = window.sites[i].window_bytes;
    a.sites[i].window_blocks = window.sites[i].window_blocks;
  }
}

}  // namespace

ProfileAnalysis GrowingProfileAnalysis::update(const std::string& path,
                                               std::optional<uint64_t> from_us,
                                               std::optional<uint64_t> to_us) {
  try {
    EventReader reader(path);
    // A raw file's chunks are cut anew by every pass over it.
    if (reader.raw()) throw Error(path + " is a raw heap profile; only a packed one can grow");
    if (!reader.start_at_chunk(state_->chunks_read)) {  // cannot go on: from the start
      state_ = std::make_unique<State>(state_->options);
    }
    Event event;
    state_->analyzer.set_meta(&reader.meta());
    with_path_in_errors(path, [&] {
      while (reader.next(&event)) state_->analyzer.add(event);
    });
    state_->chunks_read = reader.chunk_count();
    ProfileAnalysis result = state_->analyzer.finished_copy();
    result.meta = reader.meta();
    if (from_us || to_us) {
      AnalyzeOptions window = state_->options;
      window.from_us = from_us;
      window.to_us = to_us;
      add_window_of(result, analyze_window(path, window));
    }
    return result;
  } catch (...) {
    state_ = std::make_unique<State>(state_->options);  // half a chunk was added
    throw;
  }
}

ProfileAnalysis analyze_profile(const std::string& path, const AnalyzeOptions& options) {
  if (options.window_only && (options.from_us || options.to_us)) {
    return analyze_window(path, options);
  }
  ProfileAnalysis result;
  EventReader reader(path);
  Analyzer analyzer(result, options);
  analyzer.set_meta(&reader.meta());
  Event event;
  with_path_in_errors(path, [&] {
    while (reader.next(&event)) analyzer.add(event);
  });
  analyzer.finish();
  result.meta = reader.meta();
  return result;
}

}  // namespace memtrack::profile
