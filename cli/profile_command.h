// Heap profiles from the CLI's side (docs/profiling.md): `memtrack run --profile=FILE` has
// the runtime record raw files into the result directory (profile_follower.h packs them);
// `memtrack report PROFILE` analyses one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "profile/analysis.h"

namespace memtrack::cli {

// The MEMTRACK_OPTIONS entry that makes the runtime record into `result_dir` ("" without
// --profile).
std::string profile_runtime_option(const Config& config, const std::string& result_dir);

// Whether `memtrack report` was given a heap profile. Throws Error when a profile is mixed
// with other files, or profile options are given without one.
bool is_profile_report(const Config& config);

// memtrack report PROFILE: the analysis in text (stdout or --log-file), --json, --collapsed,
// --massif, --pprof and --html. Returns the exit status.
int profile_report_command(const Config& config);

// The HTML page's model of the profile at `path` (profile/profile_html.h), for memtrack ui:
// --from/--to of `config` unless the window is given here (microseconds since the process
// started). `running`: `path` holds what a program still running has recorded so far (a
// packed file memtrack run is still writing is read so too). Throws Error for an unreadable
// profile or an empty window.
nlohmann::ordered_json profile_page_model(const std::string& path, const Config& config,
                                          std::optional<uint64_t> from_us,
                                          std::optional<uint64_t> to_us, bool running = false);

// What a running program's profile is analysed with (running_profile_page_model's `growing`).
profile::AnalyzeOptions running_profile_options();

// The same page model, "running", of a packed profile that `growing` follows as it grows
// (memtrack ui checkpoints it for each request): only the chunks added since the last call are
// read, and the window's. Throws Error as profile_page_model does.
nlohmann::ordered_json running_profile_page_model(const std::string& packed,
                                                  profile::GrowingProfileAnalysis& growing,
                                                  const Config& config,
                                                  std::optional<uint64_t> from_us,
                                                  std::optional<uint64_t> to_us);

}  // namespace memtrack::cli
