// Suppressions files and matching (see suppressions.h, docs/suppressions.md). No global
// state.
#include "report/suppressions.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "report/leak_kinds.h"
#include "report/text_format.h"
#include "symbolize/symbolizer.h"

namespace memtrack::report {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// The line without its comment: '#' at the start (after blanks) or after a blank.
std::string_view strip_comment(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && (i == 0 || is_blank(line[i - 1]))) return line.substr(0, i);
  }
  return line;
}

// Classic wildcard match with one backtrack point: on a mismatch, the last '*' absorbs one
// more character. O(pattern * text) worst case, linear for typical patterns. `question`:
// '?' matches any one character (valgrind), else only itself (LeakSanitizer).
bool glob_match(std::string_view pattern, std::string_view text, bool question) {
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (p < pattern.size() && (pattern[p] == text[t] || (question && pattern[p] == '?'))) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string quoted_excerpt(std::string_view s) {
  constexpr size_t kMax = 60;
  if (s.size() <= kMax) return fmt::format("'{}'", s);
  return fmt::format("'{}...'", s.substr(0, kMax));
}

// One meaningful line -> its pattern, or an explanation of what is wrong.
bool try_parse_line(std::string_view line, std::string* pattern, std::string* problem) {
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    *problem = fmt::format("{} is not a suppression", quoted_excerpt(line));
    return false;
  }
  std::string_view type = line.substr(0, colon);
  if (type != "leak") {
    *problem = fmt::format("unsupported suppression type {}", quoted_excerpt(type));
    return false;
  }
  std::string_view value = trim(line.substr(colon + 1));
  if (value.empty()) {
    *problem = "empty pattern";
    return false;
  }
  *pattern = std::string(value);
  return true;
}

// A file's lines with their numbers, one at a time.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool next(std::string_view* line) {
    if (text_.empty()) return false;
    size_t newline = text_.find('\n');
    *line = text_.substr(0, newline);
    text_.remove_prefix(newline == std::string_view::npos ? text_.size() : newline + 1);
    ++number_;
    return true;
  }
  size_t number() const { return number_; }

 private:
  std::string_view text_;
  size_t number_ = 0;
};

// The file is valgrind's format when its first meaningful line is "{".
bool is_valgrind_format(std::string_view text) {
  LineReader lines(text);
  std::string_view line;
  while (lines.next(&line)) {
    line = trim(line);
    if (line.empty() || line.starts_with('#')) continue;
    return line == "{";
  }
  return false;
}

void parse_lsan(std::string_view text, const std::string& source_name,
                std::vector<std::string>* patterns, std::vector<std::string>* origins) {
  LineReader lines(text);
  std::string_view line;
  while (lines.next(&line)) {
    line = trim(strip_comment(line));
    if (line.empty()) continue;
    std::string pattern, problem;
    if (!try_parse_line(line, &pattern, &problem)) {
      throw Error(
          fmt::format("{}:{}: {}; expected leak:PATTERN", source_name, lines.number(), problem));
    }
    patterns->push_back(std::move(pattern));
    origins->push_back(fmt::format("{}:{}", source_name, lines.number()));
  }
}

// "Memcheck:Leak" -> what the block applies to; std::nullopt for kinds memtrack does not
// report. TOOL may be a comma-separated list (valgrind: "Memcheck,Addrcheck:Leak").
std::optional<StackSuppression::Applies> block_kind(std::string_view tools, std::string_view kind) {
  bool memcheck = false, memtrack = false, core = false;
  while (!tools.empty()) {
    size_t comma = tools.find(',');
    std::string_view tool = trim(tools.substr(0, comma));
    memcheck = memcheck || tool == "Memcheck";
    memtrack = memtrack || tool == "memtrack";
    core = core || tool == "CoreError";
    tools.remove_prefix(comma == std::string_view::npos ? tools.size() : comma + 1);
  }
  if ((memcheck || memtrack) && kind == "Leak") return StackSuppression::Applies::kLeaks;
  if ((memtrack && kind == "FdLeak") || (core && kind == "FdNotClosed")) {
    return StackSuppression::Applies::kDescriptors;
  }
  return std::nullopt;
}

// "fun:x", "obj:/lib/*", "src:a.c:12", "..." -> a frame pattern; false if not a frame line.
bool try_parse_frame_line(std::string_view line, FramePattern* out) {
  *out = FramePattern{};
  if (line == "...") return true;
  std::string_view value = line.size() >= 4 ? line.substr(4) : std::string_view();
  if (line.starts_with("fun:")) {
    out->field = FramePattern::Field::kFunction;
  } else if (line.starts_with("obj:")) {
    out->field = FramePattern::Field::kObject;
  } else if (line.starts_with("src:")) {
    out->field = FramePattern::Field::kSource;
    size_t colon = value.rfind(':');
    std::string_view number = colon == std::string_view::npos ? "" : value.substr(colon + 1);
    bool digits = !number.empty() && number.size() < 9 &&
                  number.find_first_not_of("0123456789") == std::string_view::npos;
    if (digits) {
      out->line = std::stoi(std::string(number));
      value = value.substr(0, colon);
    }
  } else {
    return false;
  }
  out->glob = std::string(value);
  // valgrind writes mangled names (fun:_ZN6Parser5parseEPKc); frames carry demangled ones. A
  // glob cannot be demangled, so only a whole mangled name is.
  if (out->field == FramePattern::Field::kFunction && value.starts_with("_Z") &&
      value.find_first_of("*?") == std::string_view::npos) {
    out->glob = symbolize::demangle(out->glob);
  }
  return !value.empty();
}

// valgrind's stacks start in the allocator (fun:malloc in vgpreload_memcheck); memtrack's
// start at the allocator's caller, so such a leading line stands for a frame memtrack never
// records.
bool names_allocator_frame(const FramePattern& frame) {
  if (frame.field == FramePattern::Field::kObject) {
    return frame.glob.find("vgpreload") != std::string::npos;
  }
  if (frame.field != FramePattern::Field::kFunction) return false;
  std::string_view f = frame.glob;
  for (std::string_view name : {"malloc", "calloc", "realloc", "reallocarray", "memalign",
                                "posix_memalign", "aligned_alloc", "valloc", "pvalloc"}) {
    if (f == name) return true;
  }
  return f.starts_with("operator new") || f.starts_with("_Znw") || f.starts_with("_Zna");
}

// Reads valgrind-format blocks. Each problem is "LINE: what"; the caller adds the file.
class ValgrindParser {
 public:
  ValgrindParser(std::string_view text, const std::string& source_name)
      : lines_(text), source_name_(source_name) {}

  void parse(std::vector<StackSuppression>* blocks, size_t* ignored) {
    std::string_view line;
    while (next_meaningful(&line)) {
      if (line != "{") fail(fmt::format("{} is not '{{' (a block's start)", quoted_excerpt(line)));
      parse_block(blocks, ignored);
    }
  }

 private:
  // The next line that is neither blank nor a comment, trimmed.
  bool next_meaningful(std::string_view* line) {
    while (lines_.next(line)) {
      *line = trim(*line);
      if (!line->empty() && !line->starts_with('#')) return true;
    }
    return false;
  }

  std::string_view next_in_block(size_t open_line) {
    std::string_view line;
    if (!next_meaningful(&line)) {
      throw Error(fmt::format("{}:{}: block is not closed with '}}'", source_name_, open_line));
    }
    return line;
  }

  [[noreturn]] void fail(const std::string& problem) {
    throw Error(fmt::format("{}:{}: {}", source_name_, lines_.number(), problem));
  }

  void parse_block(std::vector<StackSuppression>* blocks, size_t* ignored) {
    size_t open_line = lines_.number();
    StackSuppression block;
    block.origin = fmt::format("{}:{}", source_name_, open_line);
    std::string_view line = next_in_block(open_line);
    if (line == "}") fail("block has no name");
    block.name = std::string(line);
    line = next_in_block(open_line);
    size_t colon = line.rfind(':');
    if (colon == std::string_view::npos || line == "}") {
      fail(fmt::format("{} is not TOOL:KIND (e.g. Memcheck:Leak)", quoted_excerpt(line)));
    }
    std::optional<StackSuppression::Applies> applies =
        block_kind(line.substr(0, colon), line.substr(colon + 1));
    if (!applies) {  // another tool's or error kind's block: skipped whole
      while (next_in_block(open_line) != "}") {
      }
      ++*ignored;
      return;
    }
    block.applies = *applies;
    line = next_in_block(open_line);
    if (block.applies == StackSuppression::Applies::kLeaks &&
        line.starts_with("match-leak-kinds:")) {
      block.kinds = parse_kinds(trim(line.substr(17)));
      line = next_in_block(open_line);
    }
    for (; line != "}"; line = next_in_block(open_line)) {
      FramePattern frame;
      if (!try_parse_frame_line(line, &frame)) {
        fail(fmt::format("{} is not a frame line; expected fun:, obj:, src:, ... or '}}'",
                         quoted_excerpt(line)));
      }
      if (!(block.frames.empty() && names_allocator_frame(frame))) {
        block.frames.push_back(std::move(frame));
      }
    }
    if (block.frames.empty()) fail(fmt::format("block '{}' has no frame lines", block.name));
    blocks->push_back(std::move(block));
  }

  // valgrind's set; an explicit list also matches groups the runtime did not classify.
  LeakKinds parse_kinds(std::string_view value) {
    if (value == "all") return LeakKinds::all();
    std::optional<LeakKinds> kinds = try_parse_leak_kinds(value);
    if (!kinds) {
      fail(
          fmt::format("match-leak-kinds expects all, none or a comma-separated list of "
                      "definite, indirect, possible, reachable, not {}",
                      quoted_excerpt(value)));
    }
    return *kinds == LeakKinds{} ? *kinds : kinds->with(LeakKind::kUnclassified);
  }

  LineReader lines_;
  const std::string& source_name_;
};

}  // namespace

bool pattern_matches(std::string_view pattern, std::string_view text) {
  if (text.empty()) return false;
  bool anchored_start = pattern.starts_with('^');
  if (anchored_start) pattern.remove_prefix(1);
  bool anchored_end = pattern.ends_with('$');
  if (anchored_end) pattern.remove_suffix(1);
  // An unanchored side behaves as if the pattern had a '*' there.
  std::string glob;
  glob.reserve(pattern.size() + 2);
  if (!anchored_start) glob += '*';
  glob += pattern;
  if (!anchored_end) glob += '*';
  return glob_match(glob, text, false);
}

bool glob_matches(std::string_view glob, std::string_view text) {
  return glob_match(glob, text, true);
}

bool FramePattern::matches(const Frame& frame) const {
  auto or_unknown = [](const std::string& s) -> std::string_view {
    return s.empty() ? std::string_view("???") : std::string_view(s);
  };
  switch (field) {
    case Field::kFunction:
      return glob_matches(glob, or_unknown(frame.function));
    case Field::kObject:
      return glob_matches(glob, or_unknown(frame.module));
    case Field::kSource:
      if (frame.file.empty() || (line != 0 && frame.line != line)) return false;
      return glob_matches(glob, frame.file) || glob_matches(glob, path_basename(frame.file));
    case Field::kAnyFrames:
      return true;
  }
  return false;
}

// The set of stack positions reachable after each frame line, as a bitmap: O(lines * frames)
// even with several "...".
bool StackSuppression::matches_stack(const std::vector<Frame>& stack) const {
  size_t n = printed_frame_count(stack);
  auto any_frames = [](const FramePattern& f) {
    return f.field == FramePattern::Field::kAnyFrames;
  };
  if (std::none_of(frames.begin(), frames.end(), any_frames)) {
    // One frame per line (every generated block): no sets needed.
    if (frames.size() > n) return false;
    for (size_t i = 0; i < frames.size(); ++i) {
      if (!frames[i].matches(stack[i])) return false;
    }
    return true;
  }
  std::vector<char> at(n + 1, 0), next(n + 1, 0);
  at[0] = 1;
  for (const FramePattern& pattern : frames) {
    std::fill(next.begin(), next.end(), 0);
    bool any = false;
    if (pattern.field == FramePattern::Field::kAnyFrames) {
      bool reached = false;
      for (size_t j = 0; j <= n; ++j) {
        reached = reached || at[j];
        next[j] = reached;
        any = any || reached;
      }
    } else {
      for (size_t j = 0; j < n; ++j) {
        if (at[j] && pattern.matches(stack[j])) next[j + 1] = any = true;
      }
    }
    if (!any) return false;
    at.swap(next);
  }
  return true;
}

Suppressions Suppressions::parse(std::string_view text, const std::string& source_name) {
  Suppressions result;
  if (is_valgrind_format(text)) {
    ValgrindParser(text, source_name).parse(&result.blocks_, &result.ignored_blocks_);
  } else {
    parse_lsan(text, source_name, &result.patterns_, &result.pattern_origins_);
  }
  return result;
}

Suppressions Suppressions::load(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) {
    throw Error(fmt::format("cannot read suppressions file {}: {}", path, std::strerror(errno)));
  }
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) text.append(buffer, n);
  if (std::ferror(file.get())) {  // e.g. EISDIR: fopen succeeds on a directory
    throw Error(fmt::format("cannot read suppressions file {}: {}", path, std::strerror(errno)));
  }
  return parse(text, path);
}

void Suppressions::append(const Suppressions& other) {
  patterns_.insert(patterns_.end(), other.patterns_.begin(), other.patterns_.end());
  pattern_origins_.insert(pattern_origins_.end(), other.pattern_origins_.begin(),
                          other.pattern_origins_.end());
  blocks_.insert(blocks_.end(), other.blocks_.begin(), other.blocks_.end());
  ignored_blocks_ += other.ignored_blocks_;
}

std::optional<size_t> Suppressions::match(const LeakGroup& group) const {
  if (auto pattern = first_pattern_match(group.stack)) return pattern;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const StackSuppression& block = blocks_[i];
    if (block.applies == StackSuppression::Applies::kLeaks && block.kinds.contains(group.kind) &&
        block.matches_stack(group.stack)) {
      return patterns_.size() + i;
    }
  }
  return std::nullopt;
}

std::optional<size_t> Suppressions::match_descriptors(const std::vector<Frame>& stack) const {
  if (auto pattern = first_pattern_match(stack)) return pattern;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const StackSuppression& block = blocks_[i];
    if (block.applies == StackSuppression::Applies::kDescriptors && block.matches_stack(stack)) {
      return patterns_.size() + i;
    }
  }
  return std::nullopt;
}

std::string Suppressions::entry_name(size_t index) const {
  if (index < patterns_.size()) return "leak:" + patterns_[index];
  return blocks_.at(index - patterns_.size()).name;
}

std::string Suppressions::entry_origin(size_t index) const {
  if (index < patterns_.size()) return pattern_origins_[index];
  return blocks_.at(index - patterns_.size()).origin;
}

// Only the printed frames: the C start-up code below main is in every stack of the program,
// so a pattern matching it (leak:libc.so.6, leak:_start) would suppress everything.
std::optional<size_t> Suppressions::first_pattern_match(const std::vector<Frame>& stack) const {
  if (patterns_.empty()) return std::nullopt;
  size_t printed = printed_frame_count(stack);
  for (size_t i = 0; i < printed; ++i) {
    const Frame& frame = stack[i];
    for (size_t p = 0; p < patterns_.size(); ++p) {
      const std::string& pattern = patterns_[p];
      if (pattern_matches(pattern, frame.function) || pattern_matches(pattern, frame.module) ||
          pattern_matches(pattern, path_basename(frame.module)) ||
          pattern_matches(pattern, frame.file)) {
        return p;
      }
    }
  }
  return std::nullopt;
}

}  // namespace memtrack::report
