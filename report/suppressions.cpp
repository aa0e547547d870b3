// LeakSanitizer-style suppressions (see suppressions.h). No global state.
#include "report/suppressions.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "report/text_format.h"

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
// more character. O(pattern * text) worst case, linear for typical patterns.
bool glob_match(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
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

// Function name, module or file, made safe to write between "leak:^" and "$".
std::string escape_for_entry(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    auto u = static_cast<unsigned char>(c);
    bool comment = c == '#' && i > 0 && is_blank(name[i - 1]);
    bool special = c == '*' || c == '^' || c == '$' || u < 0x20 || u == 0x7f;
    out += (comment || special) ? '*' : c;
  }
  return out;
}

std::string anchored_entry(std::string_view name) {
  return fmt::format("leak:^{}$", escape_for_entry(name));
}

template <typename Field>
const Frame* first_frame_with(const std::vector<Frame>& stack, Field field, bool skip_runtime) {
  for (const Frame& frame : stack) {
    if (field(frame).empty()) continue;
    if (skip_runtime && is_system_runtime_module(frame.module)) continue;
    return &frame;
  }
  return nullptr;
}

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
  return glob_match(glob, text);
}

Suppressions Suppressions::parse(std::string_view text, const std::string& source_name) {
  Suppressions result;
  size_t line_number = 0;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    line = trim(strip_comment(line));
    if (line.empty()) continue;
    std::string pattern, problem;
    if (!try_parse_line(line, &pattern, &problem)) {
      throw Error(
          fmt::format("{}:{}: {}; expected leak:PATTERN", source_name, line_number, problem));
    }
    result.patterns_.push_back(std::move(pattern));
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
}

bool Suppressions::matches(const LeakGroup& group) const {
  return matches(group.stack);
}

bool Suppressions::matches(const std::vector<Frame>& stack) const {
  for (const Frame& frame : stack) {
    for (const std::string& pattern : patterns_) {
      if (pattern_matches(pattern, frame.function) || pattern_matches(pattern, frame.module) ||
          pattern_matches(pattern, path_basename(frame.module)) ||
          pattern_matches(pattern, frame.file)) {
        return true;
      }
    }
  }
  return false;
}

std::string suggest_suppression(const LeakGroup& group) {
  auto function = [](const Frame& f) -> const std::string& { return f.function; };
  auto module = [](const Frame& f) -> const std::string& { return f.module; };
  auto file = [](const Frame& f) -> const std::string& { return f.file; };
  const std::vector<Frame>& stack = group.stack;
  if (const Frame* f = first_frame_with(stack, function, true)) return anchored_entry(f->function);
  if (const Frame* f = first_frame_with(stack, function, false)) return anchored_entry(f->function);
  if (const Frame* f = first_frame_with(stack, module, true)) {
    return anchored_entry(path_basename(f->module));
  }
  if (const Frame* f = first_frame_with(stack, module, false)) {
    return anchored_entry(path_basename(f->module));
  }
  if (const Frame* f = first_frame_with(stack, file, false)) return anchored_entry(f->file);
  return "";
}

}  // namespace memtrack::report
