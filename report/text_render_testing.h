// The text renderer's output as a string, for its unit tests. Test-only.
#pragma once

#include <sstream>
#include <string>

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

}  // namespace memtrack::report::testing
