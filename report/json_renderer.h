// The machine-readable report: JSON, schema documented in docs/json-schema.md (version
// kJsonSchemaVersion; bump it when a field changes meaning or disappears). No I/O but the
// given stream.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "report/gen_suppressions.h"
#include "report/model.h"

namespace memtrack::report {

inline constexpr int kJsonSchemaVersion = 1;

struct JsonOptions {
  // Groups of other kinds are left out of "leaks" and "suppressed"; the summary still
  // totals every kind.
  LeakKinds show_kinds = kDefaultShownKinds;
};

// {"memtrack": {"version": version, "schema": 1}, "processes": [...]}. Keys keep the
// documented order. Addresses and offsets are "0x..." strings (JSON numbers lose 64-bit
// precision). Every listed group and descriptor carries its suggested suppressions
// (gen_suppressions.h: "suppression", the leak: line or "", and "suppression_block"; both
// "" in "suppressed") and
// its indirect_bytes/indirect_blocks (0 unless it is definitely lost with blocks hanging off
// it). Every process has "errors" (allocator misuse, never filtered by kind or suppressed),
// and "resources" (one element per descriptor open at exit, with its site's stack) when the
// runtime tracked descriptors. Stacks are complete: frames below main are kept.
nlohmann::ordered_json to_json(const Report& report, const std::string& version,
                               const JsonOptions& options = {});

// One element of "processes". `suggestions`: where its suppression entries come from (one
// cache for all processes of a report makes equal processes cost one); nullptr makes them.
nlohmann::ordered_json process_to_json(const ProcessReport& process,
                                       const JsonOptions& options = {},
                                       SuggestionCache* suggestions = nullptr);

// One element of "processes" written as text (the one definition of a process's JSON; the
// documents above are parsed from it).
class JsonText;
void write_process_json(JsonText& j, const ProcessReport& process, const JsonOptions& options,
                        SuggestionCache& suggestions);

// Frames as in every "stack" array.
nlohmann::ordered_json stack_to_json(const std::vector<Frame>& stack);

// to_json(...) indented by 2 spaces (or, with indent -1, on one line), plus a final newline.
// Invalid UTF-8 in names (ELF and DWARF strings are untrusted) is written as U+FFFD instead of
// throwing. Written process by process, never the whole document in memory at once.
void write_report_json(const Report& report, std::ostream& out, const std::string& version,
                       const JsonOptions& options, int indent);
// The same, appended to `out`.
void append_report_json(const Report& report, std::string& out, const std::string& version,
                        const JsonOptions& options, int indent);
// The same, handed to `sink` a piece at a time (a process's text at most).
void write_report_json(const Report& report, const std::function<void(std::string_view)>& sink,
                       const std::string& version, const JsonOptions& options, int indent);
// write_report_json indented by 2 spaces.
void render_json(const Report& report, std::ostream& out, const std::string& version,
                 const JsonOptions& options = {});

}  // namespace memtrack::report
