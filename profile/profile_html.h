// The heap profile's HTML page (docs/profiling.md, "In the browser"): the page of the HTML
// report (report/html_renderer.h) around a model its profile views (web/src/profile.js) read.
// The model holds the JSON report as it is, plus what the JSON has not room for: a finer
// series for the chart and the stacks of the flame graphs. Both are bounded, whatever the
// number of events: the page of a 100-million-event recording stays small.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/analysis.h"
#include "profile/profile_report.h"

namespace memtrack::profile {

// The chart's points: the analysis is asked for this many (AnalyzeOptions::max_points) when a
// page is written, so the chart has between 500 and 1,000 points (about 40 bytes each).
constexpr size_t kPageSeriesPoints = 1000;
// The flame graphs draw the sites with the most bytes allocated, at the peak and not freed:
// this many of each (a site narrower than a pixel is not drawn anyway).
constexpr size_t kFlameSitesPerKind = 2000;

// Merges pairs of buckets of a.series until it has at most `max_points` points, as the
// analysis does while it reads: the series an analysis with max_points = `max_points` makes.
void coarsen_series(ProfileAnalysis& a, size_t max_points);

// {"profile": profile_to_json(a) (its series as the JSON report's), "chart": {"bucket_us",
// "time_us": [...], "heap_bytes", "heap_max_bytes", "allocated_bytes", "allocations",
// "rss_bytes"} (columns of `chart`), "frames": [frames as in the JSON report],
// "stacks": [{"stack_id", "frames": [indices into frames, frame #0 first], "allocated_bytes",
// "allocations", "temporary", "peak_bytes", "leaked_bytes", "window_bytes"}],
// "sites_total": sites with an allocation, "version": memtrack's}.
nlohmann::ordered_json profile_html_model(const ProfileAnalysis& a,
                                          const std::vector<SeriesPoint>& chart,
                                          uint64_t chart_bucket_us, StackNames& names,
                                          const ProfileOutputOptions& options,
                                          const std::string& version);

// The whole page: the report's page template with the model above.
void render_profile_html(const nlohmann::ordered_json& model, const std::string& program,
                         std::ostream& out, const std::string& version);

}  // namespace memtrack::profile
