// LeakSanitizer-style suppressions: files of "leak:PATTERN" lines, the matcher that applies
// them to symbolized leak groups, and the entry suggested for a group (--gen-suppressions).
// Ordinary C++: allocates; bad files throw memtrack::Error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "report/model.h"

namespace memtrack::report {

// LeakSanitizer's pattern semantics (sanitizer_common TemplateMatch): '*' matches any run of
// characters (also none), a leading '^' anchors the pattern at the start of the text and a
// trailing '$' at its end; without anchors the pattern may match anywhere inside the text.
// '^' and '$' anywhere else are ordinary characters. An empty text never matches.
// Unlike LSan's greedy matcher this one backtracks, so "a*b$" matches "abab".
bool pattern_matches(std::string_view pattern, std::string_view text);

// A set of leak patterns. Immutable after parse/append; const methods are thread safe.
class Suppressions {
 public:
  // Parses a suppressions file's text. Each line is blank, a comment (first non-blank
  // character '#'), or "leak:PATTERN"; a '#' after whitespace starts a trailing comment, and
  // whitespace around the pattern is ignored. Anything else throws memtrack::Error
  // "SOURCE_NAME:LINE: <what is wrong>; expected leak:PATTERN".
  static Suppressions parse(std::string_view text, const std::string& source_name);

  // Reads and parses a file. Throws memtrack::Error "cannot read suppressions file PATH:
  // <reason>" if it cannot be read, and parse's errors if it is malformed.
  static Suppressions load(const std::string& path);

  // Adds other's patterns after this set's (several --suppressions files).
  void append(const Suppressions& other);

  // True if any pattern matches any frame's function, module path, module basename or
  // source file (empty fields never match).
  bool matches(const LeakGroup& group) const;
  // The same for any stack (the site of descriptors open at exit).
  bool matches(const std::vector<Frame>& stack) const;

  size_t size() const { return patterns_.size(); }
  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  std::vector<std::string> patterns_;
};

// A ready suppressions-file line for the group, "leak:^NAME$", naming the first frame with a
// function name outside the C/C++ runtime modules (libc, ld-linux, libstdc++, libgcc_s,
// libm), else the first frame with a function name, else a module basename (again preferring
// modules outside the runtime), else a source file. Characters that the file syntax would
// misread ('*', '^', '$', control characters, '#' after whitespace) become '*', which
// matches them (and possibly a few other names), so the entry is also valid for LSan.
// Guarantee: Suppressions::parse(suggest_suppression(g), ...).matches(g) for every group
// with at least one named frame. Returns "" if no frame has a function, module or file.
std::string suggest_suppression(const LeakGroup& group);

}  // namespace memtrack::report
