// The human-readable report (see text_renderer.h). Writes only to the given stream.
#include "report/text_renderer.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "core/result_names.h"
#include "core/signal_names.h"
#include "report/retention_text.h"
#include "report/text_format.h"

namespace memtrack::report {

namespace {

constexpr const char* kBoldRed = "\033[1;31m";
constexpr const char* kBold = "\033[1m";
constexpr const char* kReset = "\033[0m";

// Writes "==PID== " + text lines; a blank line is "==PID==" with no trailing space.
class LineWriter {
 public:
  LineWriter(std::ostream& out, uint32_t pid, bool color)
      : out_(out), prefix_(fmt::format("=={}==", pid)), color_(color) {}

  // Control characters in text (from untrusted names) become '?' so that one line of the
  // report stays one line and cannot smuggle in escape sequences.
  void line(std::string_view text, const char* style = nullptr) {
    std::string clean(text);
    for (char& c : clean) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    out_ << prefix_ << ' ';
    if (color_ && style != nullptr) {
      out_ << style << clean << kReset;
    } else {
      out_ << clean;
    }
    out_ << '\n';
  }
  void blank() { out_ << prefix_ << '\n'; }
  // A line without the prefix (a suppression block, to be copied as it is). The caller has
  // made it free of control characters.
  void raw(std::string_view text) { out_ << text << '\n'; }

 private:
  std::ostream& out_;
  std::string prefix_;
  bool color_;
};

std::string bytes_in_blocks(uint64_t bytes, uint64_t blocks) {
  return fmt::format("{} in {}", count_of(bytes, "byte", "bytes"),
                     count_of(blocks, "block", "blocks"));
}

std::string process_phrase(const ProcessReport& process) {
  return fmt::format("{} (pid {}, parent {}) {}", format_command(process.command), process.pid,
                     process.ppid,
                     process.occasion.empty() ? exit_phrase(process.exit) : process.occasion);
}

// "12 allocations, all freed": what the no-leaks line says in its parenthesis.
std::string no_leaks_detail(const Summary& s) {
  std::string detail = count_of(s.allocations, "allocation", "allocations");
  const Amount& reachable = s.of_kind(LeakKind::kReachable);
  if (reachable.blocks > 0) {
    detail += fmt::format(", {} {}", count_of(reachable.bytes, "byte", "bytes"),
                          core::leak_kind_phrase(LeakKind::kReachable));
  }
  if (s.suppressed.blocks > 0) {
    detail += fmt::format(", {} suppressed", count_of(s.suppressed.blocks, "block", "blocks"));
  } else if (s.runtime_internal.blocks == 0 && reachable.blocks == 0) {
    detail += ", all freed";
  }
  if (s.suppressed_descriptors > 0) {
    detail += fmt::format(", {} suppressed",
                          count_of(s.suppressed_descriptors, "descriptor", "descriptors"));
  }
  if (s.untracked_allocations > 0) {
    detail += fmt::format("; {} untracked",
                          count_of(s.untracked_allocations, "allocation", "allocations"));
  }
  if (s.untracked_descriptors > 0) {
    detail += fmt::format("; {} untracked",
                          count_of(s.untracked_descriptors, "descriptor", "descriptors"));
  }
  if (s.attached_ms > 0) {
    detail += fmt::format("; attached {:.1f} s ago, older blocks not tracked",
                          static_cast<double>(s.attached_ms) / 1000);
  }
  return detail;
}

// memtrack attach (docs/attach.md): how long it has been attached and what it cannot see.
std::string attached_line(const Summary& s) {
  std::string before =
      s.preexisting_bytes > 0
          ? fmt::format("the {} in use before are not tracked",
                        count_of(s.preexisting_bytes, "byte", "bytes"))
          : "blocks from before are not tracked (their bytes are not known: the program's "
            "allocator is not glibc's)";
  return fmt::format("ATTACHED {:.1f} s ago (memtrack attach): {}; {} of them ({}) freed since",
                     static_cast<double>(s.attached_ms) / 1000, before,
                     count_of(s.preexisting_frees, "block", "blocks"),
                     count_of(s.preexisting_freed_bytes, "byte", "bytes"));
}

void write_no_leaks_line(const ProcessReport& process, LineWriter& lines) {
  lines.line(fmt::format("memtrack: {}: no leaks ({})", process_phrase(process),
                         no_leaks_detail(process.summary)));
  // What the runtime could not see qualifies "no leaks" (a malloc it never saw).
  for (size_t i = 0; i < process.runtime_notes && i < process.notes.size(); ++i) {
    lines.line("  note: " + process.notes[i]);
  }
}

void write_header(const ProcessReport& process, const TextOptions& options, LineWriter& lines) {
  std::string tool = options.version.empty() ? "memtrack" : "memtrack " + options.version;
  lines.line(fmt::format("{}: {}", tool, process_phrase(process)));
  const Summary& s = process.summary;
  lines.line(fmt::format(
      "HEAP SUMMARY: {}, {}, {} allocated, {} peak",
      count_of(s.allocations, "allocation", "allocations"), count_of(s.frees, "free", "frees"),
      count_of(s.bytes_allocated, "byte", "bytes"), count_of(s.peak_bytes, "byte", "bytes")));
  if (process.sample_interval != 0) {
    lines.line(fmt::format(
        "SAMPLED: {} with a stack, about one per {} allocated; the totals are exact, the sites "
        "are estimates (~)",
        count_of(process.sampled_allocations, "allocation", "allocations"),
        count_of(process.sample_interval, "byte", "bytes")));
  }
  if (s.attached_ms > 0) lines.line(attached_line(s));
  lines.blank();
}

// "16 bytes in 1 block is definitely lost", or with blocks hanging off the group (memcheck's
// form, the total first): "80 (16 direct, 64 indirect) bytes in 1 block is definitely lost".
// In valgrind's wording (TextOptions::valgrind_wording) "... in 1 blocks are definitely lost
// in loss record 3 of 7", `record` and `records` numbering the groups listed.
// Sampled mode (docs/sampling.md): "~4,310,000 bytes in ~830 blocks (12 sampled) are
// definitely lost", the estimate to 3 significant digits; the blocks that were not sampled:
// "2,000 bytes in 40 blocks definitely lost were not sampled (...)".
std::string group_title(const LeakGroup& group, bool valgrind_wording, size_t record,
                        size_t records) {
  if (group.sampling == LeakGroup::Sampling::kEstimated) {
    return fmt::format("{} {} {}",
                       estimate_phrase(group.estimated_bytes, group.estimated_blocks, group.blocks),
                       three_digits(group.estimated_blocks) == 1 ? "is" : "are",
                       core::leak_kind_phrase(group.kind));
  }
  if (group.sampling == LeakGroup::Sampling::kNotSampled) {
    return fmt::format(
        "{} in {} {} were not sampled (no stack; the estimates above stand for "
        "them)",
        count_of(group.bytes, "byte", "bytes"), count_of(group.blocks, "block", "blocks"),
        core::leak_kind_phrase(group.kind));
  }
  std::string bytes;
  if (group.indirect_bytes > 0) {
    uint64_t total = group.bytes + group.indirect_bytes;
    bytes =
        fmt::format("{} ({} direct, {} indirect) {}", with_commas(total), with_commas(group.bytes),
                    with_commas(group.indirect_bytes), total == 1 ? "byte" : "bytes");
  } else {
    bytes = count_of(group.bytes, "byte", "bytes");
  }
  if (valgrind_wording) {
    return fmt::format("{} in {} blocks are {} in loss record {} of {}", bytes,
                       with_commas(group.blocks), core::leak_kind_phrase(group.kind),
                       with_commas(record), with_commas(records));
  }
  return fmt::format("{} in {} {} {}", bytes, count_of(group.blocks, "block", "blocks"),
                     group.blocks == 1 ? "is" : "are", core::leak_kind_phrase(group.kind));
}

// Frames of one stack, "   #N ..." each, cut below main.
void write_stack(const std::vector<Frame>& stack, LineWriter& lines) {
  if (stack.empty()) lines.line("   (no stack recorded)");
  // As valgrind does: the C start-up frames below main say nothing useful.
  size_t printed = printed_frame_count(stack);
  for (size_t i = 0; i < printed; ++i) {
    lines.line(fmt::format("   #{} {}", i, format_frame(stack[i])));
  }
}

// The crash that ended the process, as a sanitizer shows it: the signal and its cause, then
// the crashing thread's stack.
void write_crash(const CrashReport& crash, LineWriter& lines) {
  std::string title = fmt::format("CRASH: {} (signal {}) in thread {}", signal_name(crash.signal),
                                  crash.signal, crash.tid);
  if (const char* cause = core::signal_cause(crash.signal, crash.code); cause != nullptr) {
    title += fmt::format(": {}", cause);
  }
  if (crash.has_address) title += fmt::format(" at address {:#x}", crash.address);
  lines.line(title, kBoldRed);
  write_stack(crash.stack, lines);
  lines.blank();
}

// The --gen-suppressions part under a group or site; `suggestion` is null without it.
void write_suggestion(const SuggestedSuppression* suggestion, GenSuppressions mode,
                      LineWriter& lines) {
  if (suggestion == nullptr || mode == GenSuppressions::kNo || suggestion->block.empty()) return;
  if (mode == GenSuppressions::kBlock) {
    std::string_view block = suggestion->block;
    while (!block.empty()) {
      size_t newline = block.find('\n');
      lines.raw(block.substr(0, newline));
      block.remove_prefix(newline == std::string_view::npos ? block.size() : newline + 1);
    }
  } else if (!suggestion->lsan.empty()) {
    lines.line("   suppress with: " + suggestion->lsan);
  } else {
    lines.line("   no leak: pattern singles this out (--gen-suppressions=yes prints a block)");
  }
}

void write_group(const LeakGroup& group, const SuggestedSuppression* suggestion,
                 const TextOptions& options, size_t record, size_t records, LineWriter& lines) {
  lines.line(group_title(group, options.valgrind_wording, record, records), kBoldRed);
  if (group.sampling == LeakGroup::Sampling::kNotSampled) {
    lines.blank();
    return;
  }
  write_stack(group.stack, lines);
  write_suggestion(suggestion, options.gen_suppressions, lines);
  lines.blank();
}

// memcheck's <what> line of an error of this kind (its size, for reads and writes, is not
// known: a page fault does not say it).
std::string valgrind_error_what(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kMismatchedFree:
      return "Mismatched free() / delete / delete []";
    case ErrorKind::kInvalidRead:
      return "Invalid read";
    case ErrorKind::kInvalidWrite:
    case ErrorKind::kWriteOutsideBlock:
    case ErrorKind::kWriteAfterFree:
      return "Invalid write";
    case ErrorKind::kDoubleFree:
    case ErrorKind::kInvalidFree:
    case ErrorKind::kReallocAfterFree:
      break;
  }
  return "Invalid free() / delete / delete[] / realloc()";
}

// valgrind's error block: the bad call's stack, then where the block was freed and where it
// was allocated, each only when the runtime knew it.
void write_error(const ErrorReport& error, bool valgrind_wording, LineWriter& lines) {
  std::string title = error_description(error);
  if (error.occurrences > 1) {
    title += fmt::format(", {} times", with_commas(error.occurrences));
  }
  // Found later: no stack of its own (the one stored is the allocation's or the free's,
  // shown below).
  bool own_stack = core::error_has_own_stack(error.kind, error.detail);
  if (valgrind_wording) {
    lines.line(valgrind_error_what(error.kind), kBoldRed);
    lines.line(" (" + title + ")" + (own_stack ? ", at:" : ""));
  } else {
    lines.line(title + (own_stack ? ":" : ""), kBoldRed);
  }
  if (own_stack) write_stack(error.stack, lines);
  if (!error.free_stack.empty()) {
    lines.line(" the block was freed at:");
    write_stack(error.free_stack, lines);
  }
  if (!error.alloc_stack.empty()) {
    lines.line(error.free_stack.empty() ? " the block was allocated at:" : " and allocated at:");
    write_stack(error.alloc_stack, lines);
  }
  lines.blank();
}

// "file"/"files", "pipe end"/"pipe ends", ...: what one site's descriptors are.
std::string_view kind_noun(ResourceKind kind, bool plural) {
  switch (kind) {
    case ResourceKind::kFile:
      return plural ? "files" : "file";
    case ResourceKind::kDirectory:
      return plural ? "directories" : "directory";
    case ResourceKind::kSocket:
      return plural ? "sockets" : "socket";
    case ResourceKind::kPipe:
      return plural ? "pipe ends" : "pipe end";
    case ResourceKind::kEventfd:
      return plural ? "eventfds" : "eventfd";
    case ResourceKind::kTimerfd:
      return plural ? "timerfds" : "timerfd";
    case ResourceKind::kSignalfd:
      return plural ? "signalfds" : "signalfd";
    case ResourceKind::kEpoll:
      return plural ? "epoll instances" : "epoll instance";
    case ResourceKind::kInotify:
      return plural ? "inotify instances" : "inotify instance";
    case ResourceKind::kMemfd:
      return plural ? "memfds" : "memfd";
    case ResourceKind::kOther:
      break;
  }
  return plural ? "descriptors" : "descriptor";
}

// "2 files open at exit, opened at:" (the kind when they share one, else "descriptors"), the
// stack, then one line per descriptor, "   fd 3: " + resource_line().
void write_resource_site(const ResourceSite& site, const SuggestedSuppression* suggestion,
                         GenSuppressions mode, LineWriter& lines) {
  size_t n = site.resources.size();
  ResourceKind kind = n > 0 ? site.resources.front().kind : ResourceKind::kOther;
  for (const ResourceFacts& r : site.resources) {
    if (r.kind != kind) kind = ResourceKind::kOther;
  }
  lines.line(fmt::format("{} {} open at exit, opened at:", with_commas(n), kind_noun(kind, n != 1)),
             kBoldRed);
  write_stack(site.stack, lines);
  for (const ResourceFacts& r : site.resources) {
    lines.line(fmt::format("   fd {}: {}", r.fd, resource_line(r)));
  }
  write_suggestion(suggestion, mode, lines);
  lines.blank();
}

// After the leak groups: "FILE DESCRIPTORS: 3 open at exit, from 2 sites", then the sites.
void write_resources(const ProcessReport& process, const ProcessSuggestions* suggestions,
                     GenSuppressions mode, LineWriter& lines) {
  const Summary& s = process.summary;
  if (process.resource_sites.empty() && s.suppressed_descriptors == 0 &&
      s.untracked_descriptors == 0) {
    return;
  }
  std::string title =
      fmt::format("FILE DESCRIPTORS: {} open at exit, from {}", with_commas(s.open_descriptors),
                  count_of(process.resource_sites.size(), "site", "sites"));
  if (s.suppressed_descriptors > 0) {
    title += fmt::format(", {} suppressed", with_commas(s.suppressed_descriptors));
  }
  if (s.untracked_descriptors > 0) {
    title += fmt::format("; {} more could not be tracked", with_commas(s.untracked_descriptors));
  }
  lines.line(title, kBold);
  lines.blank();
  for (size_t i = 0; i < process.resource_sites.size(); ++i) {
    write_resource_site(process.resource_sites[i],
                        suggestions ? &suggestions->resource_sites[i] : nullptr, mode, lines);
  }
}

bool has_classified_group(const ProcessReport& process) {
  auto classified = [](const LeakGroup& g) { return g.kind != LeakKind::kUnclassified; };
  return std::any_of(process.leaks.begin(), process.leaks.end(), classified) ||
         std::any_of(process.suppressed.begin(), process.suppressed.end(), classified);
}

// valgrind's per-kind block: every kind, also at 0, labels right-aligned.
void write_kind_totals(const Summary& s, LineWriter& lines) {
  auto total = [&](std::string_view label, const Amount& amount) {
    lines.line(fmt::format("{:>18}: {}", label, bytes_in_blocks(amount.bytes, amount.blocks)));
  };
  for (size_t i = 0; i < kLeakKindCount; ++i) {
    auto kind = static_cast<LeakKind>(i);
    // Only a mixed file has unclassified groups (the runtime classifies all blocks or none).
    if (kind == LeakKind::kUnclassified && s.of_kind(kind).empty()) continue;
    total(core::leak_kind_phrase(kind), s.of_kind(kind));
  }
  total("suppressed", s.suppressed);
}

// `no_leaks`: nothing leaked and nothing listed, but the process had errors, so it got the
// full report instead of the no-leaks line: the LEAK SUMMARY is that line's content.
void write_leak_summary(const ProcessReport& process, bool no_leaks, LineWriter& lines) {
  const Summary& s = process.summary;
  if (no_leaks) {
    // With descriptors listed above, "no leaks" alone would deny them.
    const char* what = process.resource_sites.empty() ? "no leaks" : "no memory leaks";
    lines.line(fmt::format("LEAK SUMMARY: {} ({})", what, no_leaks_detail(s)), kBold);
  } else if (has_classified_group(process)) {
    lines.line("LEAK SUMMARY:", kBold);
    write_kind_totals(s, lines);
  } else {
    auto groups = std::count_if(process.leaks.begin(), process.leaks.end(),
                                [](const LeakGroup& g) { return is_leak(g.kind); });
    lines.line(
        fmt::format("LEAK SUMMARY: {} in {}", bytes_in_blocks(s.leaked().bytes, s.leaked().blocks),
                    count_of(static_cast<uint64_t>(groups), "group", "groups")),
        kBold);
    if (!s.suppressed.empty()) {
      lines.line("  suppressed: " + bytes_in_blocks(s.suppressed.bytes, s.suppressed.blocks));
    }
  }
  if (!no_leaks && !s.runtime_internal.empty()) {
    lines.line(fmt::format("  not shown: {} kept by the C/C++ runtime for its own use",
                           bytes_in_blocks(s.runtime_internal.bytes, s.runtime_internal.blocks)));
  }
  if (!no_leaks && s.untracked_allocations > 0) {
    lines.line(
        fmt::format("  untracked: {} ({}) could not be recorded (memtrack's tables were full)",
                    count_of(s.untracked_allocations, "allocation", "allocations"),
                    count_of(s.untracked_bytes, "byte", "bytes")));
  }
  for (const std::string& note : process.notes) lines.line("  note: " + note);
}

void write_used_suppressions(const ProcessReport& process, LineWriter& lines) {
  for (const UsedSuppression& used : process.used_suppressions) {
    std::string what;
    if (used.groups > 0) what = bytes_in_blocks(used.bytes, used.blocks);
    if (used.descriptors > 0) {
      if (!what.empty()) what += ", ";
      what += count_of(used.descriptors, "descriptor", "descriptors");
    }
    lines.line(fmt::format("used_suppression: {:>6} {} {} ({})", used.groups + used.descriptors,
                           used.name, used.origin, what));
  }
}

// valgrind's last line: occurrences ("errors") from distinct records ("contexts").
void write_error_summary(const Summary& s, LineWriter& lines) {
  if (s.errors == 0) return;
  lines.line(
      fmt::format("ERROR SUMMARY: {} from {}", count_of(s.error_occurrences, "error", "errors"),
                  count_of(s.errors, "context", "contexts")),
      kBold);
}

}  // namespace

std::string format_frame(const Frame& frame) {
  std::string_view function = frame.function.empty() ? "??" : std::string_view(frame.function);
  std::string out;
  if (!frame.file.empty()) {
    out = fmt::format("{} ({}", function, frame.file);
    if (frame.line > 0) {
      out += fmt::format(":{}", frame.line);
      if (frame.column > 0) out += fmt::format(":{}", frame.column);
    }
    out += ')';
    if (!frame.module.empty()) out += fmt::format(" {}", path_basename(frame.module));
  } else if (!frame.module.empty()) {
    out =
        fmt::format("{} ({}+{})", function, path_basename(frame.module), hex(frame.module_offset));
  } else {
    out = fmt::format("{} ({})", function, hex(frame.address));
  }
  if (frame.inlined) out += " [inlined]";
  return out;
}

void render_process_text(const ProcessReport& process, std::ostream& out,
                         const TextOptions& options, SuggestionCache* suggestion_cache) {
  LineWriter lines(out, process.pid, options.color);
  if (!process.has_leak_data && process.no_data_expected) {
    // One line: nothing of its own is known lost, nothing fails (model.h).
    std::string why = process.notes.empty() ? "" : process.notes.front();
    if (why.starts_with("no leak data: ")) why = why.substr(14);
    lines.line(fmt::format("memtrack: {}: no leak data: {}", process_phrase(process), why));
    return;
  }
  if (!process.has_leak_data) {
    lines.line(fmt::format("memtrack: {}: no leak data", process_phrase(process)));
    for (const std::string& note : process.notes) lines.line("  note: " + note);
    return;
  }
  auto shown = [&](const LeakGroup& g) { return options.show_kinds.contains(g.kind); };
  auto leaked = [](const LeakGroup& g) { return is_leak(g.kind); };
  // Still reachable blocks are no leaks: alone, they are worth the full report only when
  // asked for (--show-leak-kinds=reachable).
  bool no_leaks = std::none_of(process.leaks.begin(), process.leaks.end(), leaked) &&
                  std::none_of(process.leaks.begin(), process.leaks.end(), shown);
  bool has_errors = !process.errors.empty() || process.summary.errors > 0;
  // Retainers were asked for (--show-retainers): they are the point of the report.
  bool has_retention =
      (process.retention && !process.retention->groups.empty()) || process.block_retention;
  if (no_leaks && !has_errors && process.resource_sites.empty() && !process.crash &&
      !has_retention) {
    write_no_leaks_line(process, lines);
    if (options.used_suppressions) write_used_suppressions(process, lines);
    return;
  }
  write_header(process, options, lines);
  if (process.crash) write_crash(*process.crash, lines);
  for (const ErrorReport& error : process.errors) {
    write_error(error, options.valgrind_wording, lines);
  }
  SuggestionCache own_cache;
  const ProcessSuggestions* s = nullptr;
  if (options.gen_suppressions != GenSuppressions::kNo) {
    s = &(suggestion_cache != nullptr ? *suggestion_cache : own_cache).of(process);
  }
  size_t records =
      static_cast<size_t>(std::count_if(process.leaks.begin(), process.leaks.end(), shown));
  if (options.max_groups != 0 && records > options.max_groups) records = options.max_groups;
  size_t listed = 0;
  size_t not_listed = 0;
  for (size_t i = 0; i < process.leaks.size(); ++i) {
    if (!shown(process.leaks[i])) continue;
    if (options.max_groups != 0 && listed == options.max_groups) {
      ++not_listed;
      continue;
    }
    ++listed;
    write_group(process.leaks[i], s ? &s->leaks[i] : nullptr, options, listed, records, lines);
  }
  if (not_listed > 0) {
    lines.line(fmt::format("{} not listed (max_leaks={})",
                           count_of(not_listed, "more group", "more groups"), options.max_groups));
    lines.line("");
  }
  write_resources(process, s, options.gen_suppressions, lines);
  if (process.retention) {
    std::vector<std::string> retained = retention_lines(*process.retention, process.pid);
    for (const std::string& text : retained) lines.line(text);
    if (!retained.empty()) lines.blank();
  }
  if (process.block_retention) {
    for (const std::string& text : block_retention_lines(*process.block_retention)) {
      lines.line(text);
    }
    lines.blank();
  }
  write_leak_summary(process, no_leaks, lines);
  if (options.used_suppressions) write_used_suppressions(process, lines);
  write_error_summary(process.summary, lines);
}

void render_text(const Report& report, std::ostream& out, const TextOptions& options) {
  SuggestionCache suggestions;
  for (const ProcessReport& check : report.checks) {
    render_process_text(check, out, options, &suggestions);
  }
  for (const ProcessReport& process : report.processes) {
    render_process_text(process, out, options, &suggestions);
  }
}

}  // namespace memtrack::report
