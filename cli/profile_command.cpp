// Heap profiles from the CLI's side (see profile_command.h).
#include "cli/profile_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "cli/pipeline.h"
#include "common/error.h"
#include "profile/analysis.h"
#include "profile/event_reader.h"
#include "profile/massif.h"
#include "profile/packer.h"
#include "profile/profile_html.h"
#include "profile/profile_pprof.h"
#include "profile/profile_report.h"
#include "report/text_format.h"

#ifndef MEMTRACK_VERSION
#define MEMTRACK_VERSION "0.0.0"
#endif

namespace memtrack::cli {
namespace {

constexpr const char* kRawPrefix = "profile.";
constexpr const char* kRawSuffix = ".raw";

struct RawProfile {
  std::string path;
  uint32_t pid = 0;
  std::string image;  // "" for a process's first image, ".2", ".3" for the ones it exec'd
};

// profile.PID.raw, or profile.PID.raw.N for the Nth image of one process.
std::vector<RawProfile> raw_profiles(const std::string& dir) {
  std::vector<RawProfile> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(kRawPrefix, 0) != 0) continue;
    size_t suffix = name.find(kRawSuffix);
    if (suffix == std::string::npos) continue;
    std::string pid = name.substr(std::char_traits<char>::length(kRawPrefix),
                                  suffix - std::char_traits<char>::length(kRawPrefix));
    if (pid.empty() || !std::all_of(pid.begin(), pid.end(), ::isdigit)) continue;
    RawProfile p{entry.path().string(), static_cast<uint32_t>(std::stoul(pid)),
                 name.substr(suffix + std::char_traits<char>::length(kRawSuffix))};
    found.push_back(p);
  }
  std::sort(found.begin(), found.end(), [](const RawProfile& a, const RawProfile& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.image < b.image;
  });
  return found;
}

std::string packed_name(const Config& config, const RawProfile& raw, uint32_t main_pid) {
  std::string name = config.profile_file;
  if (name.find("%p") != std::string::npos) {
    name = expand_pid(name, raw.pid);
  } else if (raw.pid != main_pid) {
    name += "." + std::to_string(raw.pid);
  }
  return name + raw.image;
}

// Writes with `render` to `path`, or stdout for "-".
void write_output(const std::string& what, const std::string& path,
                  const std::function<void(std::ostream&)>& render) {
  if (path == "-") {
    render(std::cout);
    std::cout.flush();
    return;
  }
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw Error("cannot write the " + what + " " + path);
  render(out);
  out.close();
  if (!out) throw Error("cannot write the " + what + " " + path);
}

profile::Ranking ranking_of(const std::string& kind) {
  if (kind == "allocations") return profile::Ranking::kAllocations;
  if (kind == "temporary") return profile::Ranking::kTemporary;
  if (kind == "peak") return profile::Ranking::kPeak;
  if (kind == "leaked") return profile::Ranking::kLeaked;
  if (kind == "window") return profile::Ranking::kWindow;
  return profile::Ranking::kAllocated;
}

// The main program: the first module the runtime listed.
std::string program_of(const profile::ProfileMeta& meta) {
  for (const RawModule& m : meta.modules) {
    if (!m.unloaded && !m.path.empty()) return m.path;
  }
  return "?";
}

// --from and --to, checked.
profile::AnalyzeOptions analyze_options(const Config& config) {
  profile::AnalyzeOptions options;
  if (config.from_ms) options.from_us = static_cast<uint64_t>(*config.from_ms) * 1000;
  if (config.to_ms) options.to_us = static_cast<uint64_t>(*config.to_ms) * 1000;
  if (options.from_us && options.to_us && *options.from_us >= *options.to_us) {
    throw Error("--from must be before --to");
  }
  if (config.collapsed_kind == "window" && !options.from_us && !options.to_us) {
    throw Error("--collapsed-kind=window needs --from or --to");
  }
  return options;
}

// The analysis of `path`. For a page (`page`), its chart's finer series goes to `chart`: the
// analysis makes up to kPageSeriesPoints points, and the series every other output shows
// (the JSON's) is merged from them, as an analysis with its own max_points would make it.
profile::ProfileAnalysis analyse(const std::string& path, profile::AnalyzeOptions options,
                                 bool page, std::vector<profile::SeriesPoint>* chart,
                                 uint64_t* chart_bucket_us) {
  if (page) options.max_points = profile::kPageSeriesPoints;
  profile::ProfileAnalysis analysis = profile::analyze_profile(path, options);
  *chart = analysis.series;
  *chart_bucket_us = analysis.bucket_us;
  profile::coarsen_series(analysis, profile::AnalyzeOptions{}.max_points);
  return analysis;
}

}  // namespace

std::string profile_runtime_option(const Config& config, const std::string& result_dir) {
  if (config.profile_file.empty()) return "";
  return "profile=" + quoted_option_value(result_dir + "/" + kRawPrefix + "%p" + kRawSuffix);
}

bool pack_profiles(const Config& config, const std::string& result_dir, uint32_t main_pid) {
  if (config.profile_file.empty()) return true;
  bool ok = true;
  std::vector<RawProfile> raws = raw_profiles(result_dir);
  if (raws.empty()) {
    std::cerr << "memtrack: warning: no heap profile was recorded (the program was not "
                 "tracked)\n";
  }
  for (const RawProfile& raw : raws) {
    std::string out = packed_name(config, raw, main_pid);
    try {
      profile::PackStats stats = profile::pack_profile(raw.path, out);
      std::cerr << "memtrack: heap profile of pid " << raw.pid << ": " << out << " ("
                << report::count_of(stats.events, "event", "events") << ", "
                << report::count_of(stats.packed_bytes, "byte", "bytes")
                << (stats.complete ? "" : "; the process did not end normally") << ")\n";
    } catch (const Error& e) {
      std::cerr << "memtrack: error: " << e.what() << "\n";
      ok = false;
    }
  }
  return ok;
}

bool is_profile_report(const Config& config) {
  size_t profiles = 0;
  for (const std::string& file : config.files) {
    if (!std::filesystem::is_directory(file) && std::filesystem::exists(file) &&
        profile::is_profile_file(file)) {
      ++profiles;
    }
  }
  if (profiles > 0 && config.files.size() > 1) {
    throw Error("memtrack report analyses one heap profile at a time (" +
                std::to_string(config.files.size()) + " files given)");
  }
  if (profiles == 0) {
    if (!config.massif_file.empty())
      throw Error("--massif needs a heap profile (memtrack run --profile=FILE)");
    if (config.from_ms || config.to_ms) {
      throw Error("--from and --to need a heap profile (memtrack run --profile=FILE)");
    }
  }
  return profiles == 1;
}

int profile_report_command(const Config& config) {
  const std::string& path = config.files.front();
  // The leak report's other formats have no counterpart for a heap profile: said, not
  // silently dropped.
  for (const auto& [option, file] : {std::pair{"--junit", &config.junit_file},
                                     {"--xml-file", &config.xml_file},
                                     {"--sarif", &config.sarif_file},
                                     {"--speedscope", &config.speedscope_file}}) {
    if (!file->empty()) {
      throw Error(std::string(option) +
                  " writes leak reports; a heap profile has text, --json, --collapsed, "
                  "--massif, --pprof and --html");
    }
  }
  check_binary_stdout(config);
  profile::AnalyzeOptions options = analyze_options(config);
  std::vector<profile::SeriesPoint> chart;
  uint64_t chart_bucket_us = 0;
  profile::ProfileAnalysis analysis =
      analyse(path, options, !config.html_file.empty(), &chart, &chart_bucket_us);
  profile::StackNames names(analysis.meta);
  profile::ProfileOutputOptions output;
  output.sites = static_cast<size_t>(config.profile_sites);
  output.program = program_of(analysis.meta);
  bool stdout_taken = config.json_file == "-" || config.collapsed_file == "-" ||
                      config.massif_file == "-" || config.pprof_file == "-" ||
                      config.html_file == "-";
  if (!config.log_file.empty()) {
    write_output("text report", config.log_file, [&](std::ostream& out) {
      profile::render_profile_text(analysis, names, output, out);
    });
  } else if (!stdout_taken) {
    profile::render_profile_text(analysis, names, output, std::cout);
  }
  if (!config.json_file.empty()) {
    write_output("JSON report", config.json_file, [&](std::ostream& out) {
      profile::render_profile_json(analysis, names, output, out);
    });
  }
  if (!config.collapsed_file.empty()) {
    write_output("collapsed stacks", config.collapsed_file, [&](std::ostream& out) {
      profile::render_profile_collapsed(analysis, names, ranking_of(config.collapsed_kind), output,
                                        out);
    });
  }
  if (!config.massif_file.empty()) {
    write_output("massif file", config.massif_file,
                 [&](std::ostream& out) { profile::render_massif(analysis, names, output, out); });
  }
  if (!config.pprof_file.empty()) {
    write_output("pprof profile", config.pprof_file, [&](std::ostream& out) {
      profile::render_profile_pprof(analysis, names, output, MEMTRACK_VERSION, out);
    });
  }
  if (!config.html_file.empty()) {
    write_output("HTML report", config.html_file, [&](std::ostream& out) {
      profile::render_profile_html(profile::profile_html_model(analysis, chart, chart_bucket_us,
                                                               names, output, MEMTRACK_VERSION),
                                   output.program, out, MEMTRACK_VERSION);
    });
  }
  return 0;
}

nlohmann::ordered_json profile_page_model(const std::string& path, const Config& config,
                                          std::optional<uint64_t> from_us,
                                          std::optional<uint64_t> to_us) {
  profile::AnalyzeOptions options = analyze_options(config);
  if (from_us) options.from_us = from_us;
  if (to_us) options.to_us = to_us;
  if (options.from_us && options.to_us && *options.from_us >= *options.to_us) {
    throw Error("the window's start must be before its end");
  }
  std::vector<profile::SeriesPoint> chart;
  uint64_t chart_bucket_us = 0;
  profile::ProfileAnalysis analysis = analyse(path, options, true, &chart, &chart_bucket_us);
  profile::StackNames names(analysis.meta);
  profile::ProfileOutputOptions output;
  output.sites = static_cast<size_t>(config.profile_sites);
  output.program = program_of(analysis.meta);
  return profile::profile_html_model(analysis, chart, chart_bucket_us, names, output,
                                     MEMTRACK_VERSION);
}

}  // namespace memtrack::cli
