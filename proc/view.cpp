// Selecting, sorting and nesting the rows of memtrack top.
#include "proc/view.h"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>

namespace memtrack::top {
namespace {

constexpr std::array<std::pair<SortColumn, const char*>, 9> kColumnNames = {{
    {SortColumn::kPid, "pid"},
    {SortColumn::kUser, "user"},
    {SortColumn::kRss, "rss"},
    {SortColumn::kPss, "pss"},
    {SortColumn::kUss, "uss"},
    {SortColumn::kSwap, "swap"},
    {SortColumn::kGrowth, "growth"},
    {SortColumn::kRate, "rate"},
    {SortColumn::kCommand, "command"},
}};

template <typename T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Unknown values ('-') order below every known one.
template <typename T>
int three_way(const std::optional<T>& a, const std::optional<T>& b) {
  if (a.has_value() != b.has_value()) return a.has_value() ? 1 : -1;
  return a ? three_way(*a, *b) : 0;
}

// Ascending order of `column`.
int compare(const ProcessRow& a, const ProcessRow& b, SortColumn column) {
  switch (column) {
    case SortColumn::kPid:
      return three_way(a.info.pid, b.info.pid);
    case SortColumn::kUser:
      return three_way(a.user, b.user);
    case SortColumn::kRss:
      return three_way(a.info.rss_kb, b.info.rss_kb);
    case SortColumn::kPss:
      return three_way(a.info.pss_kb, b.info.pss_kb);
    case SortColumn::kUss:
      return three_way(a.info.uss_kb, b.info.uss_kb);
    case SortColumn::kSwap:
      return three_way(a.info.swap_kb, b.info.swap_kb);
    case SortColumn::kGrowth:
      return three_way(a.growth_kb, b.growth_kb);
    case SortColumn::kRate:
      return three_way(a.kb_per_min, b.kb_per_min);
    case SortColumn::kCommand:
      return three_way(display_command(a.info), display_command(b.info));
  }
  return 0;
}

bool contains_ignoring_case(std::string_view text, std::string_view part) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return std::search(text.begin(), text.end(), part.begin(), part.end(),
                     [&](char x, char y) { return lower(x) == lower(y); }) != text.end();
}

class Arranger {
 public:
  explicit Arranger(const ViewOptions& options) : options_(options) {}

  bool before(const ProcessRow* a, const ProcessRow* b) const {
    int order = compare(*a, *b, options_.sort);
    if (sorts_descending(options_.sort) != options_.reverse) order = -order;
    return order != 0 ? order < 0 : a->info.pid < b->info.pid;
  }

  // The process's line and its threads' lines; `more_below`: child processes follow, so
  // the last thread's branch line goes on.
  void add(const ProcessRow* process, const std::string& prefix, const std::string& children_prefix,
           bool more_below, std::vector<ViewRow>* rows) const {
    rows->push_back({process, nullptr, prefix});
    if (!options_.threads) return;
    const std::vector<ThreadInfo>& threads = process->info.threads;  // in tid order
    for (size_t i = 0; i < threads.size(); ++i) {
      bool last = i + 1 == threads.size() && !more_below;
      rows->push_back({process, &threads[i], children_prefix + (last ? "`- " : "|- ")});
    }
  }

  // Depth-first: each process, then its children sorted, with ps-like branch lines.
  void add_tree(const ProcessRow* process, const std::string& prefix, bool last, bool root,
                std::vector<ViewRow>* rows) const {
    std::string own = root ? "" : prefix + (last ? "`- " : "|- ");
    std::string below = root ? "" : prefix + (last ? "   " : "|  ");
    auto it = children_.find(process->info.pid);
    add(process, own, below, it != children_.end(), rows);
    if (it == children_.end()) return;
    const std::vector<const ProcessRow*>& kids = it->second;
    for (size_t i = 0; i < kids.size(); ++i) {
      add_tree(kids[i], below, i + 1 == kids.size(), false, rows);
    }
  }

  std::vector<ViewRow> arrange(std::vector<const ProcessRow*> selected) {
    auto by_order = [this](const ProcessRow* a, const ProcessRow* b) { return before(a, b); };
    std::sort(selected.begin(), selected.end(), by_order);
    if (options_.limit > 0 && selected.size() > options_.limit) selected.resize(options_.limit);
    std::vector<ViewRow> rows;
    if (!options_.tree) {
      for (const ProcessRow* p : selected) add(p, "", "", false, &rows);
      return rows;
    }
    std::unordered_set<uint32_t> shown;
    for (const ProcessRow* p : selected) shown.insert(p->info.pid);
    std::vector<const ProcessRow*> roots;
    for (const ProcessRow* p : selected) {  // sorted, so each sibling list is sorted too
      bool has_parent = p->info.ppid != p->info.pid && shown.count(p->info.ppid) != 0;
      (has_parent ? children_[p->info.ppid] : roots).push_back(p);
    }
    for (const ProcessRow* root : roots) add_tree(root, "", true, true, &rows);
    return rows;
  }

 private:
  const ViewOptions& options_;
  std::unordered_map<uint32_t, std::vector<const ProcessRow*>> children_;
};

}  // namespace

const char* sort_column_name(SortColumn column) {
  for (const auto& [c, name] : kColumnNames) {
    if (c == column) return name;
  }
  return "?";
}

std::optional<SortColumn> try_parse_sort_column(std::string_view name) {
  for (const auto& [c, n] : kColumnNames) {
    if (name == n) return c;
  }
  return std::nullopt;
}

std::string sort_column_list() {
  std::string out;
  for (const auto& [c, name] : kColumnNames) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

SortColumn next_sort_column(SortColumn column, int step) {
  int n = static_cast<int>(kColumnNames.size());
  int index = (static_cast<int>(column) + step % n + n) % n;
  return kColumnNames[static_cast<size_t>(index)].first;
}

bool sorts_descending(SortColumn column) {
  return column != SortColumn::kPid && column != SortColumn::kUser &&
         column != SortColumn::kCommand;
}

bool is_selected(const ProcessRow& process, const ViewOptions& options) {
  const ProcessInfo& info = process.info;
  if (!options.pids.empty() &&
      std::find(options.pids.begin(), options.pids.end(), info.pid) == options.pids.end()) {
    return false;
  }
  if (!options.users.empty()) {
    std::string uid = info.uid ? std::to_string(*info.uid) : "";
    bool found = std::any_of(options.users.begin(), options.users.end(), [&](const std::string& u) {
      return u == process.user || (!uid.empty() && u == uid);
    });
    if (!found) return false;
  }
  const std::string& f = options.filter;
  if (f.empty()) return true;
  return std::to_string(info.pid) == f || contains_ignoring_case(display_command(info), f) ||
         contains_ignoring_case(info.name, f) || contains_ignoring_case(process.user, f);
}

std::vector<ViewRow> arrange(const Snapshot& snapshot, const ViewOptions& options) {
  std::vector<const ProcessRow*> selected;
  for (const ProcessRow& p : snapshot.processes) {
    if (is_selected(p, options)) selected.push_back(&p);
  }
  return Arranger(options).arrange(std::move(selected));
}

}  // namespace memtrack::top
