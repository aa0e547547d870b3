// The text renderer's output as a string, for its unit tests. Test-only.
#pragma once

#include <sstream>
#include <string>

#include "report/test_fixtures.h"
#include "report/text_renderer.h"

namespace memtrack::report::testing {

inline std::string render(const Report& report, const TextOptions& options) {
  std::ostringstream out;
  render_text(report, out, options);
  return out.str();
}

inline std::string render(const ProcessReport& process, const TextOptions& options = {}) {
  std::ostringstream out;
  render_process_text(process, out, options);
  return out.str();
}

// Options with the version the golden outputs show.
inline TextOptions with_version() {
  TextOptions o;
  o.version = "0.1.0";
  return o;
}

// A process with no leaks, exited with status 0; callers add what they test.
inline ProcessReport quiet_process() {
  ProcessReport p;
  p.pid = 77;
  p.ppid = 1;
  p.command = {"./prog"};
  p.exit.how = ExitInfo::How::kExit;
  p.summary.allocations = 3;
  p.summary.frees = 3;
  return p;
}

// A group of `kind` with one frame, f (f.c:1:2).
inline LeakGroup group(LeakKind kind, uint64_t bytes, uint64_t blocks) {
  LeakGroup g;
  g.kind = kind;
  g.bytes = bytes;
  g.blocks = blocks;
  g.stack = {debug_frame(0x555555555100, "f", "f.c", 1, 2)};
  return g;
}

}  // namespace memtrack::report::testing
