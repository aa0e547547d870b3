// Suppression entries for --gen-suppressions (see gen_suppressions.h). No global state.
#include "report/gen_suppressions.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "core/result_names.h"
#include "report/suppressions.h"
#include "report/text_format.h"

namespace memtrack::report {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// A name made safe for one line of a block: control characters, and blanks at either end
// (the parser trims them), become '?', which matches them.
std::string block_value(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  if (!out.empty() && is_blank(out.front())) out.front() = '?';
  if (!out.empty() && is_blank(out.back())) out.back() = '?';
  return out;
}

std::string frame_line(const Frame& frame, bool by_source) {
  if (by_source && !frame.file.empty() && frame.line > 0) {
    return fmt::format("src:{}:{}", block_value(path_basename(frame.file)), frame.line);
  }
  if (!frame.function.empty()) return "fun:" + block_value(frame.function);
  if (!frame.module.empty()) return "obj:" + block_value(frame.module);
  return "obj:???";
}

// The block's name: what frame #0 is called.
std::string block_name(const std::vector<Frame>& stack, std::string_view what) {
  std::string_view name = "???";
  if (!stack.empty() && !stack[0].function.empty()) {
    name = stack[0].function;
  } else if (!stack.empty() && !stack[0].module.empty()) {
    name = path_basename(stack[0].module);
  }
  return block_value(fmt::format("memtrack:{}:{}", what, name));
}

// kind_line: "Memcheck:Leak" or "memtrack:FdLeak"; kinds_line: "" or "match-leak-kinds: X".
std::string make_block(const std::vector<Frame>& stack, std::string_view what,
                       std::string_view kind_line, std::string_view kinds_line, bool by_source) {
  std::string out = "{\n   " + block_name(stack, what) + "\n   " + std::string(kind_line) + "\n";
  if (!kinds_line.empty()) out += "   " + std::string(kinds_line) + "\n";
  size_t printed = printed_frame_count(stack);
  for (size_t i = 0; i < printed; ++i) out += "   " + frame_line(stack[i], by_source) + "\n";
  return out + "}";
}

// A stack of the report and what an entry for it must match and must not.
struct Owner {
  const std::vector<Frame>* stack;
  const LeakGroup* group;  // nullptr: a descriptor site
};

bool entry_matches(const Suppressions& s, const Owner& owner) {
  return owner.group != nullptr ? s.matches(*owner.group) : s.matches_descriptors(*owner.stack);
}

// The owners a block can match. Its frame lines must match the stack's first frames: a
// fun: line only frames whose function its glob matches (looked up among the names that
// begin with the glob's text before its first wildcard), a src: line only frames with its
// line number. The owners that pass the first kIndexedFrames lines are the candidates; only
// they are matched against the whole block. Checking every owner made suggesting entries
// for 10,000 groups take minutes, and frame #0 alone is not enough: in cc1plus thousands of
// groups start in xmalloc, and C++ names often hold a '*', a wildcard in a fun: line.
class FrameIndex {
 public:
  static constexpr size_t kIndexedFrames = 16;

  explicit FrameIndex(const std::vector<Owner>& owners) {
    for (size_t i = 0; i < owners.size(); ++i) {
      const std::vector<Frame>& stack = *owners[i].stack;
      for (size_t j = 0; j < kIndexedFrames && j < stack.size(); ++j) {
        const Frame& frame = stack[j];
        at_[j].by_function[frame.function.empty() ? std::string("???") : frame.function].push_back(
            i);
        if (!frame.file.empty() && frame.line > 0) at_[j].by_line[frame.line].push_back(i);
      }
    }
    for (Position& position : at_) {
      for (const auto& entry : position.by_function) position.functions.push_back(&entry.first);
      std::sort(position.functions.begin(), position.functions.end(),
                [](const std::string* x, const std::string* y) { return *x < *y; });
    }
  }

  // The owners a block for `stack` (by source lines or by names) can match, sorted; nullopt:
  // any.
  std::optional<std::vector<size_t>> candidates(const std::vector<Frame>& stack,
                                                bool by_source) const {
    std::optional<std::vector<size_t>> out;
    size_t printed = printed_frame_count(stack);
    for (size_t j = 0; j < kIndexedFrames && j < printed; ++j) {
      std::optional<std::vector<size_t>> here = at_[j].matching(stack[j], by_source);
      if (!here) continue;
      std::sort(here->begin(), here->end());
      if (!out) {
        out = std::move(here);
      } else {
        std::vector<size_t> both;
        std::set_intersection(out->begin(), out->end(), here->begin(), here->end(),
                              std::back_inserter(both));
        out = std::move(both);
      }
    }
    return out;
  }

 private:
  struct Position {
    std::unordered_map<std::string, std::vector<size_t>> by_function;
    std::vector<const std::string*> functions;  // by_function's keys, sorted
    std::unordered_map<int, std::vector<size_t>> by_line;

    // The owners whose frame here the line frame_line(frame, by_source) can match; nullopt:
    // an obj: line, not indexed.
    std::optional<std::vector<size_t>> matching(const Frame& frame, bool by_source) const {
      if (by_source && !frame.file.empty() && frame.line > 0) {
        auto it = by_line.find(frame.line);
        return it == by_line.end() ? std::vector<size_t>{} : it->second;
      }
      if (frame.function.empty()) return std::nullopt;
      std::string glob = block_value(frame.function);
      std::string_view prefix = std::string_view(glob).substr(0, glob.find_first_of("*?"));
      auto it = std::lower_bound(functions.begin(), functions.end(), prefix,
                                 [](const std::string* x, std::string_view y) { return *x < y; });
      std::vector<size_t> out;
      for (; it != functions.end() && (*it)->starts_with(prefix); ++it) {
        if (!glob_matches(glob, **it)) continue;
        const std::vector<size_t>& list = by_function.find(**it)->second;
        out.insert(out.end(), list.begin(), list.end());
      }
      return out;
    }
  };
  std::array<Position, kIndexedFrames> at_;
};

// Other owners of the same sort (groups or sites) that `block` matches too; only those of
// `candidates` when given.
size_t other_matches(const std::string& block, const std::vector<Owner>& owners, size_t self,
                     const std::optional<std::vector<size_t>>& candidates) {
  Suppressions s = Suppressions::parse(block, "generated");
  size_t n = 0;
  auto check = [&](size_t i) {
    bool same_sort = (owners[i].group == nullptr) == (owners[self].group == nullptr);
    if (i != self && same_sort && entry_matches(s, owners[i])) ++n;
  };
  if (candidates) {
    for (size_t i : *candidates) check(i);
  } else {
    for (size_t i = 0; i < owners.size(); ++i) check(i);
  }
  return n;
}

// How many owners of the same sort each generated block matches (the owner it was made for
// included), by the block's text: owners with equal stacks get equal blocks (a stripped
// program's frames all read "obj:/usr/bin/bash"), and matching such a block against every
// candidate once per owner made a report of many such groups quadratic (a shell script's
// hundreds of subshells took minutes).
using MatchCounts = std::unordered_map<std::string, size_t>;

size_t others_matched(const std::string& block, const std::vector<Owner>& owners, size_t self,
                      const FrameIndex& first_frames, bool by_source, MatchCounts& counts) {
  auto [it, inserted] = counts.emplace(block, 0);
  if (inserted) {
    // The owner itself always matches the block made from its own stack.
    it->second = 1 + other_matches(block, owners, self,
                                   first_frames.candidates(*owners[self].stack, by_source));
  }
  return it->second - 1;
}

std::string block_for(const std::vector<Owner>& owners, size_t self, const FrameIndex& first_frames,
                      MatchCounts& counts) {
  const Owner& owner = owners[self];
  std::string what = owner.group ? "leak" : "fd";
  std::string kind_line = owner.group ? "Memcheck:Leak" : "memtrack:FdLeak";
  std::string kinds_line;
  if (owner.group && owner.group->kind != LeakKind::kUnclassified) {
    kinds_line = fmt::format("match-leak-kinds: {}", core::leak_kind_name(owner.group->kind));
  }
  std::string block = make_block(*owner.stack, what, kind_line, kinds_line, false);
  if (others_matched(block, owners, self, first_frames, false, counts) == 0) return block;
  block = make_block(*owner.stack, what, kind_line, kinds_line, true);
  size_t others = others_matched(block, owners, self, first_frames, true, counts);
  if (others == 0) return block;
  return fmt::format(
      "# also matches {} other {} with the same stack\n{}", others,
      owner.group ? (others == 1 ? "group" : "groups") : (others == 1 ? "site" : "sites"), block);
}

// --- leak: lines ---------------------------------------------------------------------------

// Function name, module or file, made safe to write between "leak:^" and "$": characters
// that the file syntax would misread become '*', which matches them.
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

// The C/C++ runtime's code: in every program, so never a good name for one group.
bool is_runtime_frame(const Frame& frame) {
  if (is_system_runtime_module(frame.module)) return true;
  std::string_view f = frame.function;
  for (std::string_view prefix :
       {"std::", "__gnu_cxx::", "operator new", "operator delete", "__cxa_", "__libc_", "_dl_"}) {
    if (f.starts_with(prefix)) return true;
  }
  return false;
}

// Which owners have a name in a field of a printed frame: the fields a leak: pattern is
// matched against.
class NameIndex {
 public:
  explicit NameIndex(const std::vector<Owner>& owners) {
    for (size_t i = 0; i < owners.size(); ++i) {
      const std::vector<Frame>& stack = *owners[i].stack;
      size_t printed = printed_frame_count(stack);
      for (size_t f = 0; f < printed; ++f) {
        for (std::string_view name :
             {std::string_view(stack[f].function), std::string_view(stack[f].module),
              path_basename(stack[f].module), std::string_view(stack[f].file)}) {
          std::vector<size_t>& list = owners_[std::string(name)];
          if (list.empty() || list.back() != i) list.push_back(i);
        }
      }
    }
  }
  // True if the owner is the only one with exactly this name.
  bool only(std::string_view name, size_t owner) const {
    auto it = owners_.find(std::string(name));
    return it != owners_.end() && it->second.size() == 1 && it->second[0] == owner;
  }

  // True if `owner` is the only owner with a name that the anchored pattern "^glob$" matches
  // (first_pattern_match's test). Only the names that begin with the glob's text before its
  // first '*' can match, so those are looked up in the sorted names instead of matching the
  // pattern against every frame of every owner (which took minutes for cc1plus's 11,000
  // groups: C++ names with '*' in their parameters are common).
  bool only_match(const std::string& glob, size_t owner) {
    if (sorted_.empty()) {
      for (const auto& [name, list] : owners_) {
        if (!name.empty()) sorted_.push_back(&name);
      }
      std::sort(sorted_.begin(), sorted_.end(),
                [](const std::string* a, const std::string* b) { return *a < *b; });
    }
    std::string_view prefix = std::string_view(glob).substr(0, glob.find('*'));
    std::string pattern = "^" + glob + "$";
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), prefix,
                               [](const std::string* a, std::string_view b) { return *a < b; });
    bool self = false;
    for (; it != sorted_.end() && (*it)->starts_with(prefix); ++it) {
      if (!pattern_matches(pattern, **it)) continue;
      for (size_t other : owners_.find(**it)->second) {
        if (other != owner) return false;
        self = true;
      }
    }
    return self;
  }

 private:
  std::unordered_map<std::string, std::vector<size_t>> owners_;
  std::vector<const std::string*> sorted_;  // owners_'s non-empty names, built on first use
};

bool singles_out(const std::string& name, size_t self, NameIndex& index) {
  std::string escaped = escape_for_entry(name);
  if (escaped == name && name.find('*') == std::string::npos) return index.only(name, self);
  // A '*' matches more than one name: every name it matches must be this owner's alone.
  return index.only_match(escaped, self);
}

std::string lsan_for(const std::vector<Owner>& owners, size_t self, NameIndex& index) {
  const std::vector<Frame>& stack = *owners[self].stack;
  size_t printed = printed_frame_count(stack);
  std::vector<std::string> candidates;
  for (size_t i = 0; i < printed; ++i) {
    const Frame& f = stack[i];
    if (!f.function.empty() && !is_main_function(f.function) && !is_runtime_frame(f)) {
      candidates.push_back(f.function);
    }
  }
  // Not main's module or file: the program's every leak has them (main is the last printed
  // frame, so stack[printed - 1]).
  const Frame* main_frame =
      printed > 0 && is_main_function(stack[printed - 1].function) ? &stack[printed - 1] : nullptr;
  for (size_t i = 0; i < printed; ++i) {
    const Frame& f = stack[i];
    if (!f.module.empty() && !is_runtime_frame(f) &&
        !(main_frame && f.module == main_frame->module)) {
      candidates.emplace_back(path_basename(f.module));
    }
  }
  for (size_t i = 0; i < printed; ++i) {
    const Frame& f = stack[i];
    if (!f.file.empty() && !is_runtime_frame(f) && !(main_frame && f.file == main_frame->file)) {
      candidates.push_back(f.file);
    }
  }
  for (const std::string& name : candidates) {
    if (singles_out(name, self, index)) return "leak:^" + escape_for_entry(name) + "$";
  }
  return "";
}

}  // namespace

ProcessSuggestions suggest_suppressions(const ProcessReport& process) {
  std::vector<Owner> owners;
  for (const LeakGroup& group : process.leaks) owners.push_back({&group.stack, &group});
  for (const ResourceSite& site : process.resource_sites) owners.push_back({&site.stack, nullptr});
  NameIndex index(owners);
  FrameIndex first_frames(owners);
  MatchCounts counts;
  ProcessSuggestions out;
  for (size_t i = 0; i < owners.size(); ++i) {
    SuggestedSuppression entry;  // no stack recorded: nothing can name it
    if (!owners[i].stack->empty())
      entry = {block_for(owners, i, first_frames, counts), lsan_for(owners, i, index)};
    (i < process.leaks.size() ? out.leaks : out.resource_sites).push_back(std::move(entry));
  }
  return out;
}

namespace {

// What suggestions depend on: each group's kind and each frame's names and line.
uint64_t process_signature(const ProcessReport& p) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a 64
  auto add = [&](std::string_view text) {
    for (unsigned char c : text) {
      hash ^= c;
      hash *= 0x100000001b3ull;
    }
    hash ^= 0xff;  // a separator no name contains
    hash *= 0x100000001b3ull;
  };
  auto add_number = [&](uint64_t n) {
    add(std::string_view(reinterpret_cast<const char*>(&n), sizeof n));
  };
  auto add_stack = [&](const std::vector<Frame>& stack) {
    add_number(stack.size());
    for (const Frame& f : stack) {
      add(f.function);
      add(f.module);
      add(f.file);
      add_number(static_cast<uint64_t>(f.line));
    }
  };
  for (const LeakGroup& g : p.leaks) {
    add(core::leak_kind_name(g.kind));
    add_stack(g.stack);
  }
  add("sites");
  for (const ResourceSite& site : p.resource_sites) add_stack(site.stack);
  return hash;
}

bool same_frames(const std::vector<Frame>& a, const std::vector<Frame>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Frame& x, const Frame& y) {
    return x.line == y.line && x.function == y.function && x.module == y.module && x.file == y.file;
  });
}

bool same_owners(const ProcessReport& a, const ProcessReport& b) {
  return std::equal(a.leaks.begin(), a.leaks.end(), b.leaks.begin(), b.leaks.end(),
                    [](const LeakGroup& x, const LeakGroup& y) {
                      return x.kind == y.kind && same_frames(x.stack, y.stack);
                    }) &&
         std::equal(a.resource_sites.begin(), a.resource_sites.end(), b.resource_sites.begin(),
                    b.resource_sites.end(), [](const ResourceSite& x, const ResourceSite& y) {
                      return same_frames(x.stack, y.stack);
                    });
}

}  // namespace

const ProcessSuggestions& SuggestionCache::of(const ProcessReport& process) {
  std::deque<Entry>& bucket = entries_[process_signature(process)];
  for (const Entry& entry : bucket) {
    if (same_owners(*entry.process, process)) return entry.suggestions;
  }
  bucket.push_back(Entry{&process, suggest_suppressions(process)});
  return bucket.back().suggestions;
}

}  // namespace memtrack::report
