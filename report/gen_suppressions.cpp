// Suppression entries for --gen-suppressions (see gen_suppressions.h). No global state.
#include "report/gen_suppressions.h"

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

// The owners by the function of their frame #0. A block's first frame line must match frame
// #0, and a fun: line without glob characters matches that one name only: a block by names
// is checked against the owners of its frame #0's function, not against every owner (which
// made suggesting entries for 10,000 groups take minutes).
class FirstFrameIndex {
 public:
  explicit FirstFrameIndex(const std::vector<Owner>& owners) {
    for (size_t i = 0; i < owners.size(); ++i) {
      if (!owners[i].stack->empty()) owners_[owners[i].stack->front().function].push_back(i);
    }
  }
  // The owners a block by names for `stack` can match; nullptr: it may match any.
  const std::vector<size_t>* candidates(const std::vector<Frame>& stack) const {
    if (stack.empty()) return nullptr;
    const std::string& function = stack.front().function;
    if (function.empty() || function.find_first_of("*?") != std::string::npos ||
        block_value(function) != function) {
      return nullptr;
    }
    auto it = owners_.find(function);
    return it == owners_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<std::string, std::vector<size_t>> owners_;
};

// Other owners of the same sort (groups or sites) that `block` matches too; only those of
// `candidates` when given.
size_t other_matches(const std::string& block, const std::vector<Owner>& owners, size_t self,
                     const std::vector<size_t>* candidates = nullptr) {
  Suppressions s = Suppressions::parse(block, "generated");
  size_t n = 0;
  auto check = [&](size_t i) {
    bool same_sort = (owners[i].group == nullptr) == (owners[self].group == nullptr);
    if (i != self && same_sort && entry_matches(s, owners[i])) ++n;
  };
  if (candidates != nullptr) {
    for (size_t i : *candidates) check(i);
  } else {
    for (size_t i = 0; i < owners.size(); ++i) check(i);
  }
  return n;
}

std::string block_for(const std::vector<Owner>& owners, size_t self,
                      const FirstFrameIndex& first_frames) {
  const Owner& owner = owners[self];
  std::string what = owner.group ? "leak" : "fd";
  std::string kind_line = owner.group ? "Memcheck:Leak" : "memtrack:FdLeak";
  std::string kinds_line;
  if (owner.group && owner.group->kind != LeakKind::kUnclassified) {
    kinds_line = fmt::format("match-leak-kinds: {}", core::leak_kind_name(owner.group->kind));
  }
  std::string block = make_block(*owner.stack, what, kind_line, kinds_line, false);
  if (other_matches(block, owners, self, first_frames.candidates(*owner.stack)) == 0) {
    return block;
  }
  block = make_block(*owner.stack, what, kind_line, kinds_line, true);
  size_t others = other_matches(block, owners, self);
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

 private:
  std::unordered_map<std::string, std::vector<size_t>> owners_;
};

bool singles_out(const std::string& name, const std::vector<Owner>& owners, size_t self,
                 const NameIndex& index) {
  std::string escaped = escape_for_entry(name);
  if (escaped == name && name.find('*') == std::string::npos) return index.only(name, self);
  // A '*' matches more than one name: check every stack.
  Suppressions s = Suppressions::parse("leak:^" + escaped + "$", "generated");
  if (!entry_matches(s, owners[self])) return false;
  for (size_t i = 0; i < owners.size(); ++i) {
    if (i != self && entry_matches(s, owners[i])) return false;
  }
  return true;
}

std::string lsan_for(const std::vector<Owner>& owners, size_t self, const NameIndex& index) {
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
    if (singles_out(name, owners, self, index)) return "leak:^" + escape_for_entry(name) + "$";
  }
  return "";
}

}  // namespace

ProcessSuggestions suggest_suppressions(const ProcessReport& process) {
  std::vector<Owner> owners;
  for (const LeakGroup& group : process.leaks) owners.push_back({&group.stack, &group});
  for (const ResourceSite& site : process.resource_sites) owners.push_back({&site.stack, nullptr});
  NameIndex index(owners);
  FirstFrameIndex first_frames(owners);
  ProcessSuggestions out;
  for (size_t i = 0; i < owners.size(); ++i) {
    SuggestedSuppression entry;  // no stack recorded: nothing can name it
    if (!owners[i].stack->empty())
      entry = {block_for(owners, i, first_frames), lsan_for(owners, i, index)};
    (i < process.leaks.size() ? out.leaks : out.resource_sites).push_back(std::move(entry));
  }
  return out;
}

}  // namespace memtrack::report
