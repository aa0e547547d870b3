// Heap profiles from the CLI's side (see profile_command.h).
#include "cli/profile_command.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "cli/commands.h"
#include "cli/output_paths.h"
#include "common/error.h"
#include "proc/proc_parse.h"
#include "profile/analysis.h"
#include "profile/event_reader.h"
#include "profile/massif.h"
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

// Writes with `render` to `path`, or stdout for "-".
void write_output(const std::string& what, const std::string& path,
                  const std::function<void(std::ostream&)>& render) {
  if (path == "-") {
    render(std::cout);
    std::cout.flush();
    if (!std::cout) throw Error("cannot write the " + what + " to stdout");
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
  // The window's flame graph alone needs only the events of the window: the reader starts at
  // the window's chunk (docs/profiling.md, "A time window").
  options.window_only = config.collapsed_kind == "window" && config.collapsed_file == "-" &&
                        config.log_file.empty() && config.json_file.empty() &&
                        config.massif_file.empty() && config.pprof_file.empty() &&
                        config.html_file.empty();
  return options;
}

// Whether the packed file `packed` is of the image whose raw file is `raw`: memtrack run names
// the Nth image's files with ".N" after the names of the first's (profile_follower.cpp).
bool same_image(const std::string& packed, const std::string& raw) {
  size_t dot = raw.rfind('.');
  std::string image = raw.substr(dot);  // ".raw" for the first image, ".N" for the Nth
  if (image == kRawSuffix) {
    // The first image: the process has not exec'd since, or FILE would be an earlier image.
    return true;
  }
  return packed.size() > image.size() &&
         packed.compare(packed.size() - image.size(), image.size(), image) == 0;
}

// Whether a process above `pid` (memtrack run, which follows the whole tree it started) has
// `path` open: then `path` is the packed profile it writes for `pid`. The pid in a file's
// header alone could be a later process's, were the run that wrote the file killed.
bool written_by_an_ancestor(uint32_t pid, const std::string& path) {
  struct stat file {};
  if (stat(path.c_str(), &file) != 0) return false;
  for (int level = 0; level < 64 && pid > 1; ++level) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::optional<top::StatFields> stat_fields = top::try_parse_stat(text);
    if (!stat_fields) return false;
    pid = stat_fields->ppid;
    if (pid <= 1) return false;
    std::error_code error;
    std::filesystem::directory_iterator fds("/proc/" + std::to_string(pid) + "/fd", error);
    if (error) continue;  // another user's process: not a memtrack run of this user's
    for (const std::filesystem::directory_entry& fd : fds) {
      struct stat open_file {};
      if (stat(fd.path().c_str(), &open_file) == 0 && open_file.st_dev == file.st_dev &&
          open_file.st_ino == file.st_ino) {
        return true;
      }
    }
  }
  return false;
}

// The file to analyse for `path`. A packed profile memtrack run is still writing has no
// index yet: what the program has recorded so far is read from the raw file its runtime
// appends to, as memtrack ui does (`*running` is then set). Throws Error naming the way out
// when the program no longer runs.
std::string readable_profile(const std::string& path, bool* running) {
  *running = false;
  std::optional<uint32_t> pid = profile::unfinished_profile_pid(path);
  if (!pid) return path;
  if (kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH) {
    throw Error(path + " is cut short: it has no index, and process " + std::to_string(*pid) +
                " whose profile it is has ended. The file was truncated (copied while memtrack "
                "run wrote it, or the disk was full), or memtrack run was killed before it "
                "finished; in that case its result directory still holds the raw profile, "
                "profile." +
                std::to_string(*pid) + ".raw: memtrack report reads that file");
  }
  std::string why;
  try {
    std::string raw = memtrack_raw_profile(*pid);
    if (!written_by_an_ancestor(*pid, path)) {
      why = "the memtrack run above it writes another file";
    } else if (same_image(path, raw)) {
      *running = true;
      return raw;
    } else {
      why = "it runs another program now, which it exec'd";
    }
  } catch (const Error& e) {
    why = e.what();
  }
  throw Error(path + " has no index yet: memtrack run writes it when the run ends, and process " +
              std::to_string(*pid) + " is not recording it now (" + why +
              "). If memtrack run is still running, wait for it to end; if it was killed, its "
              "result directory still holds the raw profile, profile." +
              std::to_string(*pid) + ".raw: memtrack report reads that file");
}

// The analysis of `path`. For a page (`page`), its chart's finer series goes to `chart`: the
// analysis makes up to kPageSeriesPoints points, and the series every other output shows
// (the JSON's) is merged from them, as an analysis with its own max_points would make it.
profile::ProfileAnalysis analyse(const std::string& path, profile::AnalyzeOptions options,
                                 bool page, std::vector<profile::SeriesPoint>* chart,
                                 uint64_t* chart_bucket_us, bool* running) {
  if (page) options.max_points = profile::kPageSeriesPoints;
  profile::ProfileAnalysis analysis =
      profile::analyze_profile(readable_profile(path, running), options);
  *chart = analysis.series;
  *chart_bucket_us = analysis.bucket_us;
  profile::coarsen_series(analysis, profile::AnalyzeOptions{}.max_points);
  return analysis;
}

// The page's model of an analysis made with max_points = kPageSeriesPoints.
nlohmann::ordered_json page_model(profile::ProfileAnalysis analysis, const Config& config,
                                  bool running) {
  std::vector<profile::SeriesPoint> chart = analysis.series;
  uint64_t chart_bucket_us = analysis.bucket_us;
  profile::coarsen_series(analysis, profile::AnalyzeOptions{}.max_points);
  profile::StackNames names(analysis.meta);
  profile::ProfileOutputOptions output;
  output.sites = static_cast<size_t>(config.profile_sites);
  output.program = program_of(analysis.meta);
  output.running = running;
  return profile::profile_html_model(analysis, chart, chart_bucket_us, names, output,
                                     MEMTRACK_VERSION);
}

void check_window(std::optional<uint64_t> from_us, std::optional<uint64_t> to_us) {
  if (from_us && to_us && *from_us >= *to_us) {
    throw Error("the window's start must be before its end");
  }
}

}  // namespace

std::string profile_runtime_option(const Config& config, const std::string& result_dir) {
  if (config.profile_file.empty()) return "";
  return "profile=" + quoted_option_value(result_dir + "/" + kRawPrefix + "%p" + kRawSuffix);
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
  bool running = false;
  profile::ProfileAnalysis analysis =
      analyse(path, options, !config.html_file.empty(), &chart, &chart_bucket_us, &running);
  if (running) {
    std::cerr << "memtrack: " << path << " is still being written (pid " << analysis.meta.pid
              << " runs): the report is of what it has recorded so far\n";
  }
  profile::StackNames names(analysis.meta);
  profile::ProfileOutputOptions output;
  output.sites = static_cast<size_t>(config.profile_sites);
  output.program = program_of(analysis.meta);
  output.running = running;
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
                                          std::optional<uint64_t> to_us, bool running) {
  profile::AnalyzeOptions options = analyze_options(config);
  if (from_us) options.from_us = from_us;
  if (to_us) options.to_us = to_us;
  check_window(options.from_us, options.to_us);
  options.max_points = profile::kPageSeriesPoints;
  bool file_running = false;
  profile::ProfileAnalysis analysis =
      profile::analyze_profile(readable_profile(path, &file_running), options);
  return page_model(std::move(analysis), config, running || file_running);
}

profile::AnalyzeOptions running_profile_options() {
  profile::AnalyzeOptions options;
  options.max_points = profile::kPageSeriesPoints;
  return options;
}

nlohmann::ordered_json running_profile_page_model(const std::string& packed,
                                                  profile::GrowingProfileAnalysis& growing,
                                                  const Config& config,
                                                  std::optional<uint64_t> from_us,
                                                  std::optional<uint64_t> to_us) {
  check_window(from_us, to_us);
  return page_model(growing.update(packed, from_us, to_us), config, true);
}

}  // namespace memtrack::cli
