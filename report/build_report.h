// Turns one decoded result file into a ProcessReport: symbolizes each leak's and error's
// stacks, sets runtime-internal blocks aside, applies suppressions, sorts and totals. No I/O.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "report/model.h"
#include "report/suppressions.h"

namespace memtrack::report {

// The frames for one code address, innermost first (inlined calls, then their function).
// is_return_address says to look the address up at address - 1, inside the call instruction;
// build_process_report passes true for every address (see docs/format.md). The returned
// reference only needs to stay valid until the next call. Wrap
// symbolize::Symbolizer::symbolize with an explicit return type, or the lambda returns a
// copy and the std::function a dangling reference:
//   [&](uint64_t a, bool r) -> const std::vector<Frame>& { return symbolizer.symbolize(a, r); }
using SymbolizeFn =
    std::function<const std::vector<Frame>&(uint64_t address, bool is_return_address)>;

// For each RawLeak of `file`:
//   - runtime_internal leaks are only counted (summary.runtime_internal_*), never
//     symbolized or listed;
//   - the others get stack = symbolize(a0, true) + symbolize(a1, true) + ... over the
//     addresses of file.stacks[stack_id] (an unknown stack id gives an empty stack), if
//     their kind is one of `stack_kinds`; groups of the other kinds keep an empty stack and
//     are only counted and sorted (a program that exits with its heap full leaves tens of
//     thousands of still reachable groups, whose symbolization would cost more than the
//     report no output lists them in);
//   - groups matched by `suppressions` go to `suppressed` (summary.suppressed_*), the rest to
//     `leaks` (summary.leaked()); used_suppressions counts, per matching entry in the order
//     of the suppressions, the groups, bytes and blocks (and descriptors, below) it took.
// Both lists are sorted by total bytes (own plus indirect), then blocks (largest first), then
// by the first frame's
// address (groups with an empty stack last), ties kept in file order: deterministic.
// Each RawError becomes an ErrorReport, in file order, with its three stacks symbolized the
// same way (stack id 0, "not known", gives an empty stack). Errors are never suppressed:
// suppression patterns describe leaks one accepts, while a double or mismatched free is a bug
// whatever library it is in. summary.errors counts them, summary.error_occurrences adds up
// their occurrences.
// The descriptors open at exit (file.resources) are grouped by the stack that opened them
// into ResourceSites (stack symbolized as above, descriptors by fd); sites whose stack a
// suppression matches are only counted (summary.suppressed_descriptors), the others are
// listed, most descriptors first, then by the first frame's address, and counted in
// summary.open_descriptors. tracks_resources and summary.untracked_descriptors are copied.
// The counters (core/stats.inc: allocations, frees, ...) come from file.stats;
// pid, ppid, command, exit and modules are copied; notes = symbolizer_notes as they are after the
// stacks were symbolized (pass the symbolizer's live list).
// A suppression may match a group of any kind: with any suppression every stack is symbolized,
// whatever `stack_kinds` says.
ProcessReport build_process_report(const ResultFile& file, const SymbolizeFn& symbolize,
                                   const std::vector<std::string>& symbolizer_notes,
                                   const Suppressions& suppressions,
                                   LeakKinds stack_kinds = LeakKinds::all(),
                                   const LocateVariableFn& locate_variable = {});

// Section 14 of `file` (which must have one), symbolized: variables demangled and located,
// stack frames named, the groups' sites, and the C/C++ runtime's own blocks left out of the
// groups.
Retention build_retention(const ResultFile& file, const SymbolizeFn& symbolize,
                          const LocateVariableFn& locate_variable = {});
// Section 15 of `file` (which must have one), symbolized; its roots named from `retention`.
BlockRetention build_block_retention(const ResultFile& file,
                                     const std::optional<Retention>& retention,
                                     const SymbolizeFn& symbolize);

// The order build_process_report sorts groups in: true if a is listed before b.
bool leak_group_before(const LeakGroup& a, const LeakGroup& b);

}  // namespace memtrack::report
