// Suppressions: LeakSanitizer "leak:PATTERN" files and valgrind-style multi-frame blocks
// ("{ name, Memcheck:Leak, fun:..., }"), and the matcher that applies them to symbolized leak
// groups and descriptor sites. How matching works: docs/suppressions.md.
// Ordinary C++: allocates; bad files throw memtrack::Error.
#pragma once

#include <cstddef>
#include <optional>
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

// valgrind's glob: the whole text must match; '*' matches any run of characters (also none),
// '?' exactly one; every other character only itself.
bool glob_matches(std::string_view glob, std::string_view text);

// One line of a multi-frame block: what a frame must look like.
struct FramePattern {
  enum class Field {
    kFunction,   // fun:GLOB, the demangled function name ("???" when unknown); a whole
                 // mangled name (fun:_ZN1A1fEv, no '*' or '?') is demangled when read
    kObject,     // obj:GLOB, the module's full path ("???" when unknown)
    kSource,     // src:GLOB or src:GLOB:LINE, the source file's name or full path
    kAnyFrames,  // "...": any number of frames, none included
  };
  Field field = Field::kAnyFrames;
  std::string glob;
  int line = 0;  // src: only; 0 = any line

  bool matches(const Frame& frame) const;
};

// One multi-frame block. It matches a stack when its frame lines match the first printed
// frames (printed_frame_count()) in order, frame #0 first; the stack may have more frames.
struct StackSuppression {
  enum class Applies { kLeaks, kDescriptors };
  std::string name;
  std::string origin;  // "FILE:LINE" of its '{'
  Applies applies = Applies::kLeaks;
  // match-leak-kinds; without that line every kind, unclassified included.
  LeakKinds kinds = LeakKinds::all();
  std::vector<FramePattern> frames;

  bool matches_stack(const std::vector<Frame>& stack) const;
};

// A set of suppressions from one or more files. Immutable after parse/append; const methods
// are thread safe.
class Suppressions {
 public:
  // Parses a suppressions file's text. The format is chosen per file: valgrind's if its first
  // line that is neither blank nor a comment is "{", else LeakSanitizer's.
  //  - LeakSanitizer: each line is blank, a comment (first non-blank character '#'), or
  //    "leak:PATTERN"; a '#' after whitespace starts a trailing comment, and whitespace around
  //    the pattern is ignored.
  //  - valgrind: blocks "{", name, "TOOL:KIND", optional "match-leak-kinds: SET", frame lines
  //    (fun:, obj:, src:, ...), "}"; lines whose first non-blank character is '#' are
  //    comments. KIND Memcheck:Leak applies to leaks, memtrack:FdLeak and
  //    CoreError:FdNotClosed to descriptors; blocks of other kinds are kept out and counted
  //    (ignored_blocks()). Leading frame lines naming an allocator entry point
  //    (fun:malloc, fun:operator new*, obj:*vgpreload_memcheck*, ...) are dropped: valgrind's
  //    stacks start in the allocator, memtrack's at its caller.
  // Anything else throws memtrack::Error "SOURCE_NAME:LINE: <what is wrong>".
  static Suppressions parse(std::string_view text, const std::string& source_name);

  // Reads and parses a file. Throws memtrack::Error "cannot read suppressions file PATH:
  // <reason>" if it cannot be read, and parse's errors if it is malformed.
  static Suppressions load(const std::string& path);

  // Adds other's suppressions after this set's (several --suppressions files).
  void append(const Suppressions& other);

  // The entry that suppresses the group: a leak: pattern that matches the function, module
  // path, module basename or source file of one of the group's printed frames (empty fields
  // never match; frames in order, then patterns in order), else the first leak block whose
  // kinds include the group's kind and that matches its stack. An entry is numbered as in
  // entry_name: patterns first, then blocks. std::nullopt if none matches.
  std::optional<size_t> match(const LeakGroup& group) const;
  bool matches(const LeakGroup& group) const { return match(group).has_value(); }
  // The same for the stack that opened descriptors left open: leak: patterns and
  // descriptor blocks.
  std::optional<size_t> match_descriptors(const std::vector<Frame>& stack) const;
  bool matches_descriptors(const std::vector<Frame>& stack) const {
    return match_descriptors(stack).has_value();
  }
  // Entry `index` (< size()) as the used-suppressions list names it: "leak:PATTERN" or the
  // block's name, and where it was read, "FILE:LINE".
  std::string entry_name(size_t index) const;
  std::string entry_origin(size_t index) const;

  size_t size() const { return patterns_.size() + blocks_.size(); }
  const std::vector<std::string>& patterns() const { return patterns_; }
  const std::vector<StackSuppression>& blocks() const { return blocks_; }
  // valgrind blocks of kinds that memtrack does not report (Memcheck:Cond, Helgrind:Race...).
  size_t ignored_blocks() const { return ignored_blocks_; }

 private:
  std::optional<size_t> first_pattern_match(const std::vector<Frame>& stack) const;

  std::vector<std::string> patterns_;
  std::vector<std::string> pattern_origins_;  // "FILE:LINE", one per pattern
  std::vector<StackSuppression> blocks_;
  size_t ignored_blocks_ = 0;
};

}  // namespace memtrack::report
