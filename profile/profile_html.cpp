// The heap profile's HTML page and its model (see profile_html.h).
#include "profile/profile_html.h"

#include <algorithm>
#include <map>
#include <set>

#include "report/html_renderer.h"
#include "report/json_renderer.h"
#include "report/text_format.h"

namespace memtrack::profile {

void coarsen_series(ProfileAnalysis& a, size_t max_points) {
  while (max_points > 0 && a.series.size() > max_points) {
    std::vector<SeriesPoint> merged;
    for (size_t i = 0; i < a.series.size(); i += 2) {
      SeriesPoint p = a.series[i];
      if (i + 1 < a.series.size()) {
        const SeriesPoint& q = a.series[i + 1];
        p.heap_bytes = q.heap_bytes;
        p.heap_max_bytes = std::max(p.heap_max_bytes, q.heap_max_bytes);
        p.allocated_bytes += q.allocated_bytes;
        p.allocations += q.allocations;
        p.rss_bytes = std::max(p.rss_bytes, q.rss_bytes);
      }
      merged.push_back(p);
    }
    a.series = std::move(merged);
    a.bucket_us *= 2;
  }
}

namespace {

using nlohmann::ordered_json;

ordered_json chart_json(const std::vector<SeriesPoint>& chart, uint64_t bucket_us) {
  ordered_json time = ordered_json::array();
  ordered_json heap = ordered_json::array();
  ordered_json heap_max = ordered_json::array();
  ordered_json allocated = ordered_json::array();
  ordered_json allocations = ordered_json::array();
  ordered_json rss = ordered_json::array();
  for (const SeriesPoint& p : chart) {
    time.push_back(p.time_us);
    heap.push_back(p.heap_bytes);
    heap_max.push_back(p.heap_max_bytes);
    allocated.push_back(p.allocated_bytes);
    allocations.push_back(p.allocations);
    rss.push_back(p.rss_bytes);
  }
  return {{"bucket_us", bucket_us},
          {"time_us", time},
          {"heap_bytes", heap},
          {"heap_max_bytes", heap_max},
          {"allocated_bytes", allocated},
          {"allocations", allocations},
          {"rss_bytes", rss}};
}

// The sites the flame graphs draw: the kFlameSitesPerKind largest of each kind, in id order.
std::set<uint32_t> flame_sites(const ProfileAnalysis& a) {
  std::set<uint32_t> ids;
  for (Ranking ranking : {Ranking::kAllocated, Ranking::kAllocations, Ranking::kTemporary,
                          Ranking::kPeak, Ranking::kLeaked, Ranking::kWindow}) {
    for (uint32_t id : top_sites(a, ranking, kFlameSitesPerKind)) ids.insert(id);
  }
  return ids;
}

}  // namespace

ordered_json profile_html_model(const ProfileAnalysis& a, const std::vector<SeriesPoint>& chart,
                                uint64_t chart_bucket_us, StackNames& names,
                                const ProfileOutputOptions& options, const std::string& version) {
  ordered_json model;
  model["version"] = version;
  model["profile"] = profile_to_json(a, names, options);
  model["chart"] = chart_json(chart, chart_bucket_us);
  // Frames are shared by many stacks: each is written once, stacks name them by index.
  ordered_json frames = ordered_json::array();
  std::map<std::string, size_t> frame_index;
  ordered_json stacks = ordered_json::array();
  for (uint32_t id : flame_sites(a)) {
    const SiteStats& s = a.sites[id];
    const std::vector<Frame>& stack = names.stack(id);
    ordered_json indices = ordered_json::array();
    for (size_t i = 0; i < report::printed_frame_count(stack); ++i) {
      ordered_json frame = report::stack_to_json({stack[i]})[0];
      auto [it, inserted] = frame_index.emplace(frame.dump(), frames.size());
      if (inserted) frames.push_back(std::move(frame));
      indices.push_back(it->second);
    }
    stacks.push_back({{"stack_id", id},
                      {"frames", indices},
                      {"allocated_bytes", s.allocated_bytes},
                      {"allocations", s.allocations},
                      {"temporary", s.temporary},
                      {"peak_bytes", s.peak_bytes},
                      {"leaked_bytes", s.live_bytes},
                      {"window_bytes", s.window_bytes}});
  }
  size_t total = 0;
  for (uint32_t id = 0; id < a.sites.size(); ++id) {
    total += a.sites[id].allocations > 0 && site_listed(a, id) ? 1 : 0;
  }
  model["frames"] = std::move(frames);
  model["stacks"] = std::move(stacks);
  model["sites_total"] = total;
  return model;
}

void render_profile_html(const ordered_json& model, const std::string& program, std::ostream& out,
                         const std::string& version) {
  report::render_html_page("memtrack heap profile: " + program, model, out, version);
}

}  // namespace memtrack::profile
