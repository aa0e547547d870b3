// The leak report as a pprof profile for `go tool pprof`, Grafana Pyroscope and Parca: the
// leaked bytes and blocks by allocation stack (gzip-compressed profile.proto, written with
// pprof_writer.h). No I/O but the given stream.
#pragma once

#include <ostream>
#include <string>

#include "report/model.h"

namespace memtrack::report {

struct PprofOptions {
  LeakKinds show_kinds = kDefaultShownKinds;  // groups of other kinds are left out
  std::string version;                        // memtrack's, for the comment line
};

// The sample types, in sample order: leaked_objects/count, leaked_space/bytes (pprof's
// default, as heap profiles put the objects before the space).
inline constexpr const char* kLeakedObjects = "leaked_objects";
inline constexpr const char* kLeakedSpace = "leaked_space";

// One sample per unsuppressed group of the shown kinds (runtime-internal ones left out) of
// every process of report.processes, with the group's printed frames (printed_frame_count;
// inlined frames as several lines of one location), values {blocks, bytes} and the labels
// kind (its JSON name: "definite", "indirect", ...) and pid (a number). Each process's
// modules become mappings (path, address range, build-id). Comments: "memtrack VERSION" and
// one "PID: COMMAND" per process. With the default kinds each pid's samples add up to its
// summary.leaked().
void render_pprof(const Report& report, std::ostream& out, const PprofOptions& options = {});

}  // namespace memtrack::report
