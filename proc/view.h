// What memtrack top shows of a snapshot: which processes (--pid, --user, the '/' filter),
// in which order (sort column, reverse, tree by parent), with or without their threads, and
// how many (--limit). Pure functions over a Snapshot; rows point into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proc/model.h"

namespace memtrack::top {

// The sortable columns, in the order '<' and '>' walk through them.
enum class SortColumn { kPid, kUser, kRss, kPss, kUss, kSwap, kGrowth, kRate, kCommand };

// "pid", "user", "rss", "pss", "uss", "swap", "growth", "rate", "command".
const char* sort_column_name(SortColumn column);
std::optional<SortColumn> try_parse_sort_column(std::string_view name);
std::string sort_column_list();                            // "pid, user, rss, ..., command"
SortColumn next_sort_column(SortColumn column, int step);  // wraps around

// Numbers sort largest first, text (and pids) A to Z, unless reversed.
bool sorts_descending(SortColumn column);

struct ViewOptions {
  SortColumn sort = SortColumn::kRss;
  bool reverse = false;
  std::string filter;              // case-insensitive part of the command, name or user; or a pid
  std::vector<uint32_t> pids;      // only these (empty: all)
  std::vector<std::string> users;  // only these names or uids (empty: all)
  size_t limit = 0;                // at most this many processes (0: all)
  bool threads = false;            // each process's threads under it
  bool tree = false;               // children under their parent
};

// One line of the table: a process, or one of its threads (thread != nullptr).
struct ViewRow {
  const ProcessRow* process = nullptr;
  const ThreadInfo* thread = nullptr;
  std::string tree_prefix;  // "|- ", "`- ", "|  " ... before the command (tree view, threads)
};

// The lines to show, in order. Ties in the sort column are broken by pid (and threads are in
// tid order), so the result is deterministic. In the tree view a process whose parent is not
// shown is a root, and siblings are sorted by the sort column.
std::vector<ViewRow> arrange(const Snapshot& snapshot, const ViewOptions& options);

// True when the process passes --pid, --user and the filter.
bool is_selected(const ProcessRow& process, const ViewOptions& options);

}  // namespace memtrack::top
