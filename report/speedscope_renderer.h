// The leak report as a speedscope file (https://www.speedscope.app, file-format-schema.json
// of the speedscope npm package): the leaked bytes by allocation stack as flame graphs. No
// I/O but the given stream.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "report/model.h"

namespace memtrack::report {

struct SpeedscopeOptions {
  LeakKinds show_kinds = kDefaultShownKinds;  // groups of other kinds are left out
  std::string version;                        // memtrack's, for "exporter"
};

// {"$schema": ..., "shared": {"frames": [...]}, "profiles": [...], "name", "exporter",
// "activeProfileIndex": 0}. One "sampled" profile (unit "bytes") per process of
// report.processes and leak kind it has of the shown kinds, named "prog[PID] definitely lost"
// (the kinds in the order definite, indirect, possible, unclassified, reachable): a sample
// per unsuppressed group (runtime-internal ones left out), its printed frames root first
// (printed_frame_count; inlined frames are frames of their own), weighted by the group's
// bytes; startValue 0, endValue the profile's total. Frames are shared by all profiles, one
// per distinct function, file and line: {"name", "file", "line", "col"} ("file", "line" and
// "col" only when known; the name of a frame without a function is "?? (module)"). With the
// default kinds a process's profiles add up to its summary.leaked().bytes.
nlohmann::ordered_json to_speedscope(const Report& report, const SpeedscopeOptions& options = {});

// to_speedscope(...) as compact JSON plus a final newline (invalid UTF-8 as U+FFFD).
void render_speedscope(const Report& report, std::ostream& out,
                       const SpeedscopeOptions& options = {});

}  // namespace memtrack::report
