// Symbolization and the text, JSON and collapsed renderings of a heap profile analysis (see
// profile_report.h).
#include "profile/profile_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "report/collapsed_renderer.h"
#include "report/json_renderer.h"
#include "report/text_format.h"
#include "report/text_renderer.h"
#include "symbolize/symbolizer.h"

namespace memtrack::profile {

using report::count_of;
using report::with_commas;

StackNames::StackNames(const ProfileMeta& meta)
    : meta_(meta), symbolizer_(std::make_unique<symbolize::Symbolizer>(meta.modules)) {}

StackNames::~StackNames() = default;

const std::vector<Frame>& StackNames::stack(uint32_t id) {
  auto [it, inserted] = cache_.try_emplace(id);
  if (!inserted) return it->second;
  auto frames = meta_.stacks.find(id);
  if (frames == meta_.stacks.end()) return it->second;
  for (uint64_t address : frames->second) {
    const std::vector<Frame>& expanded = symbolizer_->symbolize(address, true);
    it->second.insert(it->second.end(), expanded.begin(), expanded.end());
  }
  return it->second;
}

const std::vector<std::string>& StackNames::notes() const {
  return symbolizer_->notes();
}

uint64_t site_value(const SiteStats& site, Ranking ranking) {
  switch (ranking) {
    case Ranking::kAllocated:
      return site.allocated_bytes;
    case Ranking::kAllocations:
      return site.allocations;
    case Ranking::kTemporary:
      return site.temporary;
    case Ranking::kLeaked:
      return site.live_bytes;
    case Ranking::kPeak:
      return site.peak_bytes;
    case Ranking::kWindow:
      return site.window_bytes;
  }
  return 0;
}

bool site_listed(const ProfileAnalysis& a, uint32_t id) {
  return id != 0 || !a.sampled();
}

std::vector<uint32_t> top_sites(const ProfileAnalysis& a, Ranking ranking, size_t count) {
  std::vector<uint32_t> ids;
  for (uint32_t id = 0; id < a.sites.size(); ++id) {
    if (site_listed(a, id) && site_value(a.sites[id], ranking) > 0) ids.push_back(id);
  }
  auto more = [&](uint32_t x, uint32_t y) {
    uint64_t vx = site_value(a.sites[x], ranking);
    uint64_t vy = site_value(a.sites[y], ranking);
    return vx != vy ? vx > vy : x < y;
  };
  size_t n = std::min(count, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(), more);
  ids.resize(n);
  return ids;
}

namespace {

std::string seconds(uint64_t us) {
  return fmt::format("{:.3f} s", static_cast<double>(us) / 1e6);
}

std::string percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "0%";
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// One line of block characters, the series' highest live bytes scaled to the tallest.
std::string sparkline(const std::vector<SeriesPoint>& series) {
  static const char* const kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  uint64_t top = 0;
  for (const SeriesPoint& p : series) top = std::max(top, p.heap_max_bytes);
  std::string line;
  for (const SeriesPoint& p : series) {
    size_t level = top == 0 ? 0 : static_cast<size_t>((p.heap_max_bytes * 7 + top - 1) / top);
    line += kBars[std::min<size_t>(level, 7)];
  }
  return line;
}

void text_series(const ProfileAnalysis& a, std::ostream& out) {
  out << fmt::format("\nHeap over time ({} points of {} ms; each bar: the highest live bytes):\n",
                     a.series.size(), static_cast<double>(a.bucket_us) / 1000.0);
  out << "  " << sparkline(a.series) << "\n";
  out << fmt::format("  {:>10}  {:>15}  {:>15}  {:>12}  {:>15}\n", "time", "live bytes",
                     "allocated", "allocations", "RSS bytes");
  size_t step = std::max<size_t>(1, (a.series.size() + 9) / 10);
  for (size_t i = 0; i < a.series.size(); i += step) {
    // A row sums its `step` buckets: highest live, total allocated, highest RSS.
    SeriesPoint row = a.series[i];
    for (size_t j = i + 1; j < std::min(i + step, a.series.size()); ++j) {
      const SeriesPoint& p = a.series[j];
      row.heap_max_bytes = std::max(row.heap_max_bytes, p.heap_max_bytes);
      row.allocated_bytes += p.allocated_bytes;
      row.allocations += p.allocations;
      row.rss_bytes = std::max(row.rss_bytes, p.rss_bytes);
    }
    out << fmt::format("  {:>10}  {:>15}  {:>15}  {:>12}  {:>15}\n", seconds(row.time_us),
                       with_commas(row.heap_max_bytes), with_commas(row.allocated_bytes),
                       with_commas(row.allocations),
                       row.rss_bytes == 0 ? std::string("-") : with_commas(row.rss_bytes));
  }
}

// "~1,230 bytes": an estimate of the sampled mode, to 3 significant digits.
std::string estimated(uint64_t value, const char* singular, const char* plural) {
  return "~" + count_of(report::three_digits(value), singular, plural);
}

std::string estimated_summary(const SiteStats& s, Ranking ranking) {
  switch (ranking) {
    case Ranking::kAllocated:
    case Ranking::kAllocations:
      return fmt::format("{} allocated in {} ({} sampled)",
                         estimated(s.allocated_bytes, "byte", "bytes"),
                         estimated(s.allocations, "allocation", "allocations"),
                         with_commas(s.sampled_allocations));
    case Ranking::kTemporary:
      return fmt::format("{} of {} ({} sampled)",
                         estimated(s.temporary, "temporary allocation", "temporary allocations"),
                         estimated(s.allocations, "allocation", "allocations"),
                         with_commas(s.sampled_allocations));
    case Ranking::kLeaked:
      return report::estimate_phrase(s.live_bytes, s.live_blocks, s.sampled_live_blocks) +
             " not freed";
    case Ranking::kPeak:
      return report::estimate_phrase(s.peak_bytes, s.peak_blocks, s.sampled_peak_blocks) +
             " at the peak";
    case Ranking::kWindow:
      return fmt::format("{} in {} allocated in the window and not freed in it",
                         estimated(s.window_bytes, "byte", "bytes"),
                         estimated(s.window_blocks, "block", "blocks"));
  }
  return "";
}

std::string site_summary(const ProfileAnalysis& a, const SiteStats& s, Ranking ranking) {
  if (a.sampled()) return estimated_summary(s, ranking);
  switch (ranking) {
    case Ranking::kAllocated:
    case Ranking::kAllocations:
      return fmt::format("{} allocated in {}", count_of(s.allocated_bytes, "byte", "bytes"),
                         count_of(s.allocations, "allocation", "allocations"));
    case Ranking::kTemporary:
      return fmt::format("{} of {}",
                         count_of(s.temporary, "temporary allocation", "temporary allocations"),
                         count_of(s.allocations, "allocation", "allocations"));
    case Ranking::kLeaked:
      return fmt::format("{} in {} not freed", count_of(s.live_bytes, "byte", "bytes"),
                         count_of(s.live_blocks, "block", "blocks"));
    case Ranking::kPeak:
      return fmt::format("{} in {} at the peak", count_of(s.peak_bytes, "byte", "bytes"),
                         count_of(s.peak_blocks, "block", "blocks"));
    case Ranking::kWindow:
      return fmt::format("{} in {} allocated in the window and not freed in it",
                         count_of(s.window_bytes, "byte", "bytes"),
                         count_of(s.window_blocks, "block", "blocks"));
  }
  return "";
}

// The sampled mode (docs/sampling.md): what is exact, what is estimated, and the blocks that
// have no stack, which the sites' estimates stand for.
void text_sampling(const ProfileAnalysis& a, std::ostream& out) {
  uint64_t sampled = 0;
  for (const SiteStats& s : a.sites) sampled += s.sampled_allocations;
  out << fmt::format(
      "  SAMPLED: {} with a stack, about one per {} allocated; the totals and the heap over "
      "time are exact, the sites are estimates (~)\n",
      count_of(sampled, "allocation", "allocations"),
      count_of(a.meta.sample_interval_bytes, "byte", "bytes"));
  SiteStats none = a.sites.empty() ? SiteStats{} : a.sites[0];
  out << fmt::format(
      "  not sampled (no stack; the estimates stand for them): {} of {}, {} in {} not freed at "
      "the end\n",
      count_of(none.allocations, "allocation", "allocations"),
      count_of(none.allocated_bytes, "byte", "bytes"), count_of(none.live_bytes, "byte", "bytes"),
      count_of(none.live_blocks, "block", "blocks"));
}

void text_sites(const ProfileAnalysis& a, StackNames& names, Ranking ranking,
                const std::string& title, size_t count, std::ostream& out) {
  std::vector<uint32_t> ids = top_sites(a, ranking, count);
  out << "\n" << title << (ids.empty() ? ": none\n" : ":\n");
  int rank = 0;
  for (uint32_t id : ids) {
    out << fmt::format("  {}. {}\n", ++rank, site_summary(a, a.sites[id], ranking));
    const std::vector<Frame>& stack = names.stack(id);
    size_t shown = report::printed_frame_count(stack);
    for (size_t i = 0; i < shown; ++i) {
      out << fmt::format("       #{} {}\n", i, report::format_frame(stack[i]));
    }
  }
}

}  // namespace

void render_profile_text(const ProfileAnalysis& a, StackNames& names,
                         const ProfileOutputOptions& options, std::ostream& out) {
  out << fmt::format("memtrack heap profile: {} (pid {}), {}{}\n", options.program, a.meta.pid,
                     seconds(a.end_time_us),
                     options.running   ? " (still running: what it has recorded so far)"
                     : a.meta.complete ? ""
                                       : " (incomplete: the process did not end normally)");
  out << fmt::format("  {}, {} ({} by realloc), {} allocated\n",
                     count_of(a.allocations, "allocation", "allocations"),
                     count_of(a.frees, "free", "frees"), with_commas(a.reallocs),
                     count_of(a.allocated_bytes, "byte", "bytes"));
  out << fmt::format("  peak: {} in {} at {}", count_of(a.peak_bytes, "byte", "bytes"),
                     count_of(a.peak_blocks, "block", "blocks"), seconds(a.peak_time_us));
  if (a.peak_rss_bytes > 0) out << "; RSS peak " << count_of(a.peak_rss_bytes, "byte", "bytes");
  out << "\n";
  out << fmt::format("  temporary allocations: {} ({} of all allocations)\n",
                     with_commas(a.temporary), percent(a.temporary, a.allocations));
  out << fmt::format("  not freed at the end: {} in {}\n", count_of(a.live_bytes, "byte", "bytes"),
                     count_of(a.live_blocks, "block", "blocks"));
  if (a.unknown_frees > 0) {
    out << fmt::format("  frees of blocks allocated before the recording started: {}\n",
                       with_commas(a.unknown_frees));
  }
  if (a.sampled()) text_sampling(a, out);
  text_series(a, out);
  text_sites(a, names, Ranking::kPeak,
             fmt::format("Peak of {} at {}, held by", count_of(a.peak_bytes, "byte", "bytes"),
                         seconds(a.peak_time_us)),
             options.sites, out);
  text_sites(a, names, Ranking::kAllocated, "Top sites by bytes allocated", options.sites, out);
  text_sites(a, names, Ranking::kAllocations, "Top sites by allocations", options.sites, out);
  text_sites(a, names, Ranking::kTemporary, "Top sites by temporary allocations", options.sites,
             out);
  text_sites(a, names, Ranking::kLeaked, "Top sites by bytes not freed at the end", options.sites,
             out);
  if (a.has_window) {
    text_sites(a, names, Ranking::kWindow,
               fmt::format("Window {} to {}: {} in {} allocated and not freed in it",
                           seconds(a.window_from_us), seconds(a.window_to_us),
                           count_of(a.window_bytes, "byte", "bytes"),
                           count_of(a.window_blocks, "block", "blocks")),
               options.sites, out);
  }
  for (const std::string& note : names.notes()) out << "note: " << note << "\n";
}

nlohmann::ordered_json profile_to_json(const ProfileAnalysis& a, StackNames& names,
                                       const ProfileOutputOptions& options) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["format"] = "memtrack-heap-profile";
  j["version"] = 1;
  j["pid"] = a.meta.pid;
  j["program"] = options.program;
  j["complete"] = a.meta.complete;
  if (options.running) j["running"] = true;
  j["duration_us"] = a.end_time_us;
  j["summary"] = {{"allocations", a.allocations},   {"frees", a.frees},
                  {"reallocs", a.reallocs},         {"allocated_bytes", a.allocated_bytes},
                  {"temporary", a.temporary},       {"leaked_bytes", a.live_bytes},
                  {"leaked_blocks", a.live_blocks}, {"unknown_frees", a.unknown_frees}};
  if (a.sampled()) {
    // docs/sampling.md: the sites' figures are estimates; the blocks not sampled (no stack)
    // are not a site, the estimates stand for them.
    uint64_t sampled = 0;
    for (const SiteStats& s : a.sites) sampled += s.sampled_allocations;
    SiteStats none = a.sites.empty() ? SiteStats{} : a.sites[0];
    j["sampling"] = {{"interval_bytes", a.meta.sample_interval_bytes},
                     {"sampled_allocations", sampled},
                     {"not_sampled",
                      {{"allocations", none.allocations},
                       {"allocated_bytes", none.allocated_bytes},
                       {"leaked_bytes", none.live_bytes},
                       {"leaked_blocks", none.live_blocks}}}};
  }
  j["peak"] = {{"time_us", a.peak_time_us},
               {"bytes", a.peak_bytes},
               {"blocks", a.peak_blocks},
               {"rss_bytes", a.peak_rss_bytes}};
  ordered_json points = ordered_json::array();
  for (const SeriesPoint& p : a.series) {
    points.push_back({{"time_us", p.time_us},
                      {"heap_bytes", p.heap_bytes},
                      {"heap_max_bytes", p.heap_max_bytes},
                      {"allocated_bytes", p.allocated_bytes},
                      {"allocations", p.allocations},
                      {"rss_bytes", p.rss_bytes}});
  }
  j["series"] = {{"bucket_us", a.bucket_us}, {"points", points}};
  std::vector<std::pair<const char*, Ranking>> lists = {{"peak", Ranking::kPeak},
                                                        {"allocated", Ranking::kAllocated},
                                                        {"allocations", Ranking::kAllocations},
                                                        {"temporary", Ranking::kTemporary},
                                                        {"leaked", Ranking::kLeaked}};
  if (a.has_window) lists.emplace_back("window", Ranking::kWindow);
  ordered_json top;
  std::map<uint32_t, bool> shown;
  for (const auto& [name, ranking] : lists) {
    std::vector<uint32_t> ids = top_sites(a, ranking, options.sites);
    top[name] = ids;
    for (uint32_t id : ids) shown[id] = true;
  }
  j["top"] = top;
  if (a.has_window) {
    j["window"] = {{"from_us", a.window_from_us},
                   {"to_us", a.window_to_us},
                   {"bytes", a.window_bytes},
                   {"blocks", a.window_blocks}};
  }
  ordered_json sites = ordered_json::array();
  for (const auto& [id, unused] : shown) {
    const SiteStats& s = a.sites[id];
    ordered_json site = {{"stack_id", id},
                         {"allocations", s.allocations},
                         {"allocated_bytes", s.allocated_bytes},
                         {"temporary", s.temporary},
                         {"peak_bytes", s.peak_bytes},
                         {"peak_blocks", s.peak_blocks},
                         {"leaked_bytes", s.live_bytes},
                         {"leaked_blocks", s.live_blocks},
                         {"window_bytes", s.window_bytes},
                         {"window_blocks", s.window_blocks}};
    if (a.sampled()) {
      site["sampled_allocations"] = s.sampled_allocations;
      site["sampled_peak_blocks"] = s.sampled_peak_blocks;
      site["sampled_leaked_blocks"] = s.sampled_live_blocks;
    }
    site["stack"] = report::stack_to_json(names.stack(id));
    sites.push_back(std::move(site));
  }
  j["sites"] = sites;
  return j;
}

void render_profile_json(const ProfileAnalysis& a, StackNames& names,
                         const ProfileOutputOptions& options, std::ostream& out) {
  out << profile_to_json(a, names, options).dump(2) << "\n";
}

void render_profile_collapsed(const ProfileAnalysis& a, StackNames& names, Ranking ranking,
                              const ProfileOutputOptions& options, std::ostream& out) {
  // The program's file name, not its pid: the same root in every run, so flame graphs of two
  // runs can be compared (report/process_names.h).
  std::string root(report::path_basename(options.program));
  if (root.empty()) root = "?";
  std::map<std::string, uint64_t> lines;  // sites whose cut stacks are equal add up
  std::vector<std::string> order;
  for (uint32_t id = 0; id < a.sites.size(); ++id) {
    uint64_t value = site_value(a.sites[id], ranking);
    if (value == 0 || !site_listed(a, id)) continue;
    const std::vector<Frame>& stack = names.stack(id);
    std::string line = root;
    for (size_t i = report::printed_frame_count(stack); i-- > 0;) {
      line += ";" + report::collapsed_frame(stack[i]);
    }
    auto [it, inserted] = lines.emplace(line, 0);
    if (inserted) order.push_back(line);
    it->second += value;
  }
  for (const std::string& line : order) out << line << ' ' << lines[line] << '\n';
}

}  // namespace memtrack::profile
