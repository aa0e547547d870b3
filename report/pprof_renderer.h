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
  // The running heap (`memtrack run --pprof-http`, docs/sampling.md): every kind, as Go's
  // heap profile names its sample types (alloc_objects, alloc_space, inuse_objects,
  // inuse_space; the alloc_* values come from ProcessReport::allocation_totals).
  bool in_use = false;
};

// The sample types, in sample order: leaked_objects/count, leaked_space/bytes (pprof's
// default, as heap profiles put the objects before the space).
inline constexpr const char* kLeakedObjects = "leaked_objects";
inline constexpr const char* kLeakedSpace = "leaked_space";
inline constexpr const char* kAllocObjects = "alloc_objects";
inline constexpr const char* kAllocSpace = "alloc_space";
inline constexpr const char* kInuseObjects = "inuse_objects";
inline constexpr const char* kInuseSpace = "inuse_space";

// One sample per unsuppressed group of the shown kinds (runtime-internal ones left out) of
// every process of report.processes, with the group's printed frames (printed_frame_count;
// inlined frames as several lines of one location), values {blocks, bytes} and the labels
// kind (its JSON name: "definite", "indirect", ...) and pid (a number). Each process's
// modules become mappings (path, address range, build-id). Comments: "memtrack VERSION" and
// one "PID: COMMAND" per process. With the default kinds each pid's samples add up to its
// summary.leaked(). In the sampled mode a site's values are its estimates, and the blocks not
// sampled (no stack; the estimates stand for them) are left out. With in_use, each process's
// allocation_totals are samples of their own, labelled with the pid only, whose alloc_*
// values are the totals (the in-use values 0), and the groups' alloc_* values are 0: pprof
// adds them up by stack.
void render_pprof(const Report& report, std::ostream& out, const PprofOptions& options = {});

}  // namespace memtrack::report
