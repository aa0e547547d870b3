// Leak-kind lists (see leak_kinds.h). No state.
#include "report/leak_kinds.h"

#include <algorithm>
#include <array>
#include <utility>

namespace memtrack::report {

namespace {

// The kinds a user can name, in valgrind's order and spelling.
constexpr std::array<std::pair<std::string_view, LeakKind>, 4> kNamedKinds = {{
    {"definite", LeakKind::kDefinite},
    {"indirect", LeakKind::kIndirect},
    {"possible", LeakKind::kPossible},
    {"reachable", LeakKind::kReachable},
}};

}  // namespace

std::optional<LeakKinds> try_parse_leak_kinds(std::string_view text) {
  if (text == "none") return LeakKinds{};
  if (text == "all") {
    return LeakKinds{LeakKind::kDefinite, LeakKind::kIndirect, LeakKind::kPossible,
                     LeakKind::kReachable};
  }
  LeakKinds kinds;
  for (;;) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    auto it = std::find_if(kNamedKinds.begin(), kNamedKinds.end(),
                           [&](const auto& named) { return named.first == item; });
    if (it == kNamedKinds.end()) return std::nullopt;  // also "" and "all" inside a list
    kinds = kinds.with(it->second);
    if (comma == std::string_view::npos) return kinds;
    text.remove_prefix(comma + 1);
  }
}

bool has_leaks_of_kinds(const ProcessReport& process, LeakKinds kinds) {
  return std::any_of(process.leaks.begin(), process.leaks.end(),
                     [&](const LeakGroup& group) { return kinds.contains(group.kind); });
}

}  // namespace memtrack::report
