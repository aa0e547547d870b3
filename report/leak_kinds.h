// Leak-kind selections as valgrind spells them (--show-leak-kinds, --errors-for-leak-kinds)
// and the question the exit status asks: are there leaks of these kinds? Pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "report/model.h"

namespace memtrack::report {

// Parses valgrind's <set> syntax: "all", "none", or a comma-separated list of "definite",
// "indirect", "possible" and "reachable" (repeats allowed, no spaces, no empty items).
// The result never contains kUnclassified: a runtime without reachability scan produces
// only that kind, so callers that always want it add it. std::nullopt if malformed.
std::optional<LeakKinds> try_parse_leak_kinds(std::string_view text);

// True if `process` has an unsuppressed group of one of `kinds` (runtime-internal blocks are
// never groups). The test behind --error-exitcode.
bool has_leaks_of_kinds(const ProcessReport& process, LeakKinds kinds);

}  // namespace memtrack::report
