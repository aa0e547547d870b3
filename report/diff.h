// memtrack diff: the leak groups of two reports matched by their symbolized stacks (new,
// grown, shrunk, gone, unchanged), a JSON report read back into the model, and the diff's
// text and JSON renderings. Ordinary C++ (may allocate, may throw memtrack::Error).
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/model.h"

namespace memtrack::report {

// Reads a JSON report written by `memtrack run --json` (docs/json-schema.md) back into the
// model: processes (pid, command, leaks with kind, bytes, blocks and stack). Summaries are
// not read. Throws Error naming `source` when the text is not such a report.
Report read_json_report(std::istream& in, const std::string& source);

// One frame of a match key: "function (file basename)" with debug info, "function (module
// basename)" without it, "?? (module basename)" without a symbol. Line numbers, columns,
// addresses and directories are left out, so that edits elsewhere in a file, a rebuild or a
// new checkout do not change it.
std::string key_frame(const Frame& frame);

enum class DiffStatus { kNew, kGrown, kShrunk, kGone, kUnchanged };
const char* diff_status_name(DiffStatus status);

// One match key with its totals on each side: the sum over every process of the report and
// every group with that key (processes are not matched: their pids differ between runs).
struct DiffEntry {
  DiffStatus status = DiffStatus::kUnchanged;
  LeakKind kind = LeakKind::kUnclassified;
  std::vector<std::string> frames;  // key_frame() of the printed frames, innermost first
  uint64_t base_bytes = 0, base_blocks = 0;
  uint64_t new_bytes = 0, new_blocks = 0;
};

struct Diff {
  // new, grown, shrunk, gone, unchanged; within each, most bytes first (the larger side).
  std::vector<DiffEntry> entries;
  uint64_t count(DiffStatus status) const;
};

// Matches the unsuppressed leak groups of the kinds in `kinds` (runtime-internal ones left
// out) of `base` and `now` (`processes` only: on-demand `checks` are left out). A key is
// (kind, key_frame() of each frame the text report prints: down to main, or the whole stack
// of a thread); groups with the same key are summed. Grown/shrunk compare bytes, then blocks.
Diff diff_reports(const Report& base, const Report& now, LeakKinds kinds);

// The text rendering: a summary line per status, then each entry that is not unchanged with
// its bytes and blocks on both sides and its key frames.
void render_diff_text(const Diff& diff, std::ostream& out);

// {"memtrack": {...}, "diff": {"new": N, ...}, "entries": [...]} (docs/json-schema.md).
nlohmann::ordered_json diff_to_json(const Diff& diff, const std::string& version);

}  // namespace memtrack::report
