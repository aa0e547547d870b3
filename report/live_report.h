// Live reports (memtrack run --expire): the allocation sites that hold blocks older than the
// age threshold while the program runs, with their growth between reports. Built from the
// runtime's live result files (section 9) by a LiveHistory per run, which remembers what each
// process's previous reports said. Rendered as text and as one JSON object per report.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/model.h"
#include "report/suppressions.h"

namespace memtrack::report {

// A site is marked growing when its old bytes rose in each of this many consecutive reports
// and none of its reported blocks was freed meanwhile.
inline constexpr int kGrowingReports = 3;

struct LiveSiteReport {
  std::vector<Frame> stack;  // innermost first
  uint64_t old_blocks = 0;   // blocks older than the threshold now
  uint64_t old_bytes = 0;
  // The sampled mode (docs/sampling.md), as LeakGroup's: kEstimated, old_* count the site's
  // sampled blocks and estimated_* the old blocks it stands for; kNotSampled, the old blocks
  // without a stack (no stack).
  LeakGroup::Sampling sampling = LeakGroup::Sampling::kFull;
  uint64_t estimated_blocks = 0;
  uint64_t estimated_bytes = 0;
  // Since the previous report of this process; of the estimates for a kEstimated site.
  int64_t growth_blocks = 0;
  int64_t growth_bytes = 0;
  uint64_t freed_since_last = 0;  // counted by an earlier report, freed since the last one
  bool first_report = false;      // not in the previous report
  bool growing = false;
  // With retainers (memtrack run --show-retainers): what holds the site's reachable blocks,
  // from a root down (retention_text.h's holder_chain for its group with the most bytes);
  // "" without.
  std::string held_by;
};

struct LiveReport {
  uint32_t pid = 0;
  std::vector<std::string> command;
  uint32_t sequence = 0;
  uint64_t uptime_ms = 0;
  uint64_t expire_ms = 0;
  uint64_t interval_ms = 0;
  uint64_t live_blocks = 0;  // every live block, old or not
  uint64_t live_bytes = 0;
  uint64_t old_blocks = 0;  // over the shown sites (exact in the sampled mode too)
  uint64_t old_bytes = 0;
  uint64_t sample_interval = 0;       // the sampled mode's mean interval; 0 in the full mode
  uint64_t freed_since_last = 0;      // over all sites
  std::vector<LiveSiteReport> sites;  // with old blocks, by old bytes, largest first
};

using SymbolizeFn = std::function<const std::vector<Frame>&(uint64_t address, bool is_return)>;

// Not thread safe.
class LiveHistory {
 public:
  // Builds the report of one live result file (file.live must be set). Sites kept by the C
  // and C++ runtimes themselves and suppressed sites are left out.
  LiveReport add(const ResultFile& file, const SymbolizeFn& symbolize,
                 const Suppressions& suppressions, const LocateVariableFn& locate_variable = {});

 private:
  struct SiteHistory {
    uint64_t old_blocks = 0;
    uint64_t old_bytes = 0;
    uint64_t freed_after_report = 0;  // the running total at the previous report
    int rising = 0;                   // consecutive reports with more old bytes, none freed
    uint32_t last_sequence = 0;
  };
  std::map<uint32_t, std::map<uint32_t, SiteHistory>> processes_;  // pid -> stack id -> ...
};

// ==PID== lines, as the exit report's.
void render_live_text(const LiveReport& report, std::ostream& out, bool color);

// One object, for JSON Lines (docs/json-schema.md, "Live reports").
nlohmann::ordered_json live_to_json(const LiveReport& report, const std::string& version);

}  // namespace memtrack::report
