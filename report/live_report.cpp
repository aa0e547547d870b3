// Live reports: growth per site between reports, and their text and JSON forms.
#include "report/live_report.h"

#include <fmt/format.h>

#include "report/build_report.h"
#include "report/json_renderer.h"
#include "report/retention_text.h"
#include "report/text_format.h"
#include "report/text_renderer.h"

namespace memtrack::report {
namespace {

std::vector<Frame> symbolize_stack(const std::vector<uint64_t>& addresses,
                                   const SymbolizeFn& symbolize) {
  std::vector<Frame> frames;
  for (size_t i = 0; i < addresses.size(); ++i) {
    const std::vector<Frame>& expanded = symbolize(addresses[i], true);
    frames.insert(frames.end(), expanded.begin(), expanded.end());
  }
  return frames;
}

std::string seconds(uint64_t ms) {
  if (ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  if (ms < 1000) return fmt::format("{} ms", ms);
  return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000.0);
}

std::string signed_count(int64_t n, std::string_view singular, std::string_view plural) {
  std::string sign = n > 0 ? "+" : n < 0 ? "-" : "+";
  uint64_t magnitude = n < 0 ? static_cast<uint64_t>(-n) : static_cast<uint64_t>(n);
  return sign + count_of(magnitude, singular, plural);
}

constexpr const char* kBold = "\x1b[1m";
constexpr const char* kBoldRed = "\x1b[1;31m";
constexpr const char* kReset = "\x1b[0m";

}  // namespace

LiveReport LiveHistory::add(const ResultFile& file, const SymbolizeFn& symbolize,
                            const Suppressions& suppressions,
                            const LocateVariableFn& locate_variable) {
  const RawLive& live = *file.live;
  LiveReport report;
  report.pid = file.pid;
  report.command = file.command;
  report.sequence = live.sequence;
  report.uptime_ms = live.uptime_ms;
  report.expire_ms = live.expire_ms;
  report.interval_ms = live.interval_ms;
  report.live_blocks = live.live_blocks;
  report.live_bytes = live.live_bytes;
  report.sample_interval = file.sample_interval;
  std::optional<Retention> retention;
  if (file.retention) retention = build_retention(file, symbolize, locate_variable);
  std::map<uint32_t, SiteHistory>& history = processes_[file.pid];
  for (const RawLiveSite& site : live.sites) {
    // A sampled site's growth is that of its estimates: what it stands for.
    bool estimated = file.sample_interval != 0 && !site.not_sampled;
    uint64_t blocks = estimated ? site.estimated_blocks : site.old_blocks;
    uint64_t bytes = estimated ? site.estimated_bytes : site.old_bytes;
    SiteHistory& past = history[site.stack_id];
    bool in_previous = past.last_sequence != 0 && past.last_sequence + 1 == live.sequence;
    uint64_t freed = site.freed_after_report >= past.freed_after_report
                         ? site.freed_after_report - past.freed_after_report
                         : 0;
    uint64_t before_blocks = in_previous ? past.old_blocks : 0;
    uint64_t before_bytes = in_previous ? past.old_bytes : 0;
    bool rose = bytes > before_bytes && freed == 0;
    past.rising = rose ? past.rising + 1 : 0;
    past.old_blocks = blocks;
    past.old_bytes = bytes;
    past.freed_after_report = site.freed_after_report;
    past.last_sequence = live.sequence;
    if (site.runtime_internal) continue;
    LeakGroup group;  // for the suppression matcher; the blocks not sampled have no stack
    if (!site.not_sampled) {
      group.stack = symbolize_stack(file.stacks.at(site.stack_id), symbolize);
      if (suppressions.matches(group)) continue;
    }
    report.freed_since_last += freed;
    if (site.old_blocks == 0) continue;
    LiveSiteReport out;
    out.stack = std::move(group.stack);
    out.old_blocks = site.old_blocks;
    out.old_bytes = site.old_bytes;
    if (estimated) {
      out.sampling = LeakGroup::Sampling::kEstimated;
      out.estimated_blocks = site.estimated_blocks;
      out.estimated_bytes = site.estimated_bytes;
    } else if (site.not_sampled) {
      out.sampling = LeakGroup::Sampling::kNotSampled;
    }
    out.growth_blocks = static_cast<int64_t>(blocks) - static_cast<int64_t>(before_blocks);
    out.growth_bytes = static_cast<int64_t>(bytes) - static_cast<int64_t>(before_bytes);
    out.freed_since_last = freed;
    out.first_report = !in_previous;
    out.growing = past.rising >= kGrowingReports;
    if (retention) {
      for (const RetentionGroup& g : retention->groups) {  // most bytes first
        if (g.stack_id != site.stack_id) continue;
        out.held_by = holder_chain(*retention, g, file.pid);
        break;
      }
    }
    report.old_blocks += out.old_blocks;
    report.old_bytes += out.old_bytes;
    report.sites.push_back(std::move(out));
  }
  // A site missing from this report lost all its old blocks: its streak ends.
  for (auto& [id, past] : history) {
    if (past.last_sequence != live.sequence) {
      past.rising = 0;
      past.old_blocks = past.old_bytes = 0;
    }
  }
  return report;
}

void render_live_text(const LiveReport& report, std::ostream& out, bool color) {
  std::string prefix = fmt::format("=={}==", report.pid);
  auto line = [&](const std::string& text, const char* style = nullptr) {
    std::string clean = text;
    for (char& c : clean) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    out << prefix << ' ';
    if (color && style != nullptr) {
      out << style << clean << kReset;
    } else {
      out << clean;
    }
    out << '\n';
  };
  std::string expire = seconds(report.expire_ms);
  line(fmt::format("memtrack live report #{} for {} (pid {}), after {}: {} in {} older than {}, "
                   "at {}",
                   report.sequence, format_command(report.command), report.pid,
                   seconds(report.uptime_ms), count_of(report.old_bytes, "byte", "bytes"),
                   count_of(report.old_blocks, "block", "blocks"), expire,
                   count_of(report.sites.size(), "site", "sites")),
       kBold);
  if (report.sample_interval != 0) {
    line(
        fmt::format("SAMPLED: about one allocation per {} has a stack; the totals are exact, "
                    "the sites are estimates (~)",
                    count_of(report.sample_interval, "byte", "bytes")));
  }
  for (const LiveSiteReport& site : report.sites) {
    bool estimated = site.sampling == LeakGroup::Sampling::kEstimated;
    const char* approx = estimated ? "~" : "";
    std::string change;
    if (site.first_report) {
      change = "first reported";
    } else if (site.growth_bytes == 0 && site.growth_blocks == 0) {
      change = "unchanged since the last report";
    } else {
      change = fmt::format("{}{}, {}{} since the last report", approx,
                           signed_count(site.growth_bytes, "byte", "bytes"), approx,
                           signed_count(site.growth_blocks, "block", "blocks"));
    }
    if (site.freed_since_last > 0) {
      change += fmt::format("; {} reported before freed since",
                            count_of(site.freed_since_last, "block", "blocks"));
    }
    if (site.growing) change += "; GROWING";
    const char* style = site.growing ? kBoldRed : nullptr;
    if (site.sampling == LeakGroup::Sampling::kNotSampled) {
      line(fmt::format("{} in {} older than {} were not sampled ({}; no stack, the estimates "
                       "above stand for them)",
                       count_of(site.old_bytes, "byte", "bytes"),
                       count_of(site.old_blocks, "block", "blocks"), expire, change),
           style);
      continue;
    }
    std::string amount =
        estimated ? estimate_phrase(site.estimated_bytes, site.estimated_blocks, site.old_blocks)
                  : fmt::format("{} in {}", count_of(site.old_bytes, "byte", "bytes"),
                                count_of(site.old_blocks, "block", "blocks"));
    line(fmt::format("{} older than {} ({}), allocated at:", amount, expire, change), style);
    size_t printed = printed_frame_count(site.stack);
    for (size_t i = 0; i < printed; ++i) {
      line(fmt::format("   #{} {}", i, format_frame(site.stack[i])));
    }
    if (!site.held_by.empty()) line(fmt::format("   held by {}", site.held_by));
  }
  if (report.freed_since_last > 0) {
    line(fmt::format("{} counted by earlier live reports {} freed since the last one",
                     count_of(report.freed_since_last, "block", "blocks"),
                     report.freed_since_last == 1 ? "was" : "were"));
  }
  out << prefix << '\n';
  out.flush();
}

nlohmann::ordered_json live_to_json(const LiveReport& report, const std::string& version) {
  nlohmann::ordered_json out;
  out["memtrack"] = {{"version", version}, {"schema", kJsonSchemaVersion}};
  out["type"] = "live";
  out["pid"] = report.pid;
  out["command"] = report.command;
  out["sequence"] = report.sequence;
  out["uptime_ms"] = report.uptime_ms;
  out["expire_ms"] = report.expire_ms;
  out["interval_ms"] = report.interval_ms;
  out["live_bytes"] = report.live_bytes;
  out["live_blocks"] = report.live_blocks;
  out["old_bytes"] = report.old_bytes;
  out["old_blocks"] = report.old_blocks;
  out["freed_since_last"] = report.freed_since_last;
  if (report.sample_interval != 0) out["sample_interval_bytes"] = report.sample_interval;
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  for (const LiveSiteReport& site : report.sites) {
    nlohmann::ordered_json s;
    s["bytes"] = site.old_bytes;
    s["blocks"] = site.old_blocks;
    if (site.sampling == LeakGroup::Sampling::kEstimated) {
      s["sampling"] = "estimated";
      s["estimated_bytes"] = site.estimated_bytes;
      s["estimated_blocks"] = site.estimated_blocks;
    } else if (site.sampling == LeakGroup::Sampling::kNotSampled) {
      s["sampling"] = "not_sampled";
    }
    s["growth_bytes"] = site.growth_bytes;
    s["growth_blocks"] = site.growth_blocks;
    s["freed_since_last"] = site.freed_since_last;
    s["first_report"] = site.first_report;
    s["growing"] = site.growing;
    if (!site.held_by.empty()) s["held_by"] = site.held_by;
    s["stack"] = stack_to_json(site.stack);
    sites.push_back(std::move(s));
  }
  out["sites"] = std::move(sites);
  return out;
}

}  // namespace memtrack::report
