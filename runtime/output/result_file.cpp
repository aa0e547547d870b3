// The result file: process, stats, modules, stacks and leak groups. Calls libc (open,
// rename, getppid) but never malloc.
#include "runtime/output/result_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "core/result_writer.h"
#include "core/sys_linux.h"
#include "runtime/diag.h"
#include "runtime/fd/fd_report.h"
#include "runtime/fd/fd_tracking.h"
#include "runtime/output/blind_spots.h"
#include "runtime/output/modules.h"
#include "runtime/output/process_info.h"
#include "runtime/record/crash.h"
#include "runtime/record/misuse.h"
#include "runtime/record/peak.h"
#include "runtime/record/record.h"
#include "runtime/runtime.h"
#include "runtime/unwind/elf_symbols.h"

namespace memtrack::rt {
namespace {

namespace result = core::result;

// `running`: a live report or snapshot of a process that has not ended.
void write_process(core::ResultWriter& w, bool running) {
  size_t command_size = 0;
  const char* command = command_line(&command_size);
  const char* exe = executable_path();
  size_t exe_size = core::string_length(exe);
  w.begin_section(result::Section::kProcess,
                  result::ProcessRecord::kSize + 4 + command_size + 4 + exe_size);
  ExitRecord exit = exit_record();
  if (running) exit = ExitRecord{result::ExitHow::kRunning, 0};
  result::ProcessRecord process;
  process.pid = static_cast<uint32_t>(core::sys::current_pid());
  process.ppid = static_cast<uint32_t>(getppid());
  process.exit_how = exit.how;
  process.exit_status = exit.status;
  w.put_record(process);
  w.put_u32(static_cast<uint32_t>(command_size));
  w.put_bytes(command, command_size);
  w.put_u32(static_cast<uint32_t>(exe_size));
  w.put_bytes(exe, exe_size);
}

void write_stats(core::ResultWriter& w) {
  constexpr auto kCount = static_cast<uint32_t>(result::Counter::kCount);
  uint64_t values[kCount] = {};
  StatsSnapshot stats = snapshot_stats();
#define MEMTRACK_COUNTER(Enumerator, name, description) \
  values[static_cast<int>(result::Counter::Enumerator)] = stats.name;
#include "core/stats.inc"
#undef MEMTRACK_COUNTER
  w.begin_section(result::Section::kStats, 4 + 8 * kCount);
  w.put_u32(kCount);
  for (uint64_t v : values) w.put_u64(v);
}

void write_modules(core::ResultWriter& w, core::MmapArray<ModuleRecord>& modules) {
  uint64_t size = 4;
  for (const ModuleRecord& m : modules)
    size += result::ModuleRecord::kSize + m.build_id_size + core::string_length(m.path);
  w.begin_section(result::Section::kModules, size);
  w.put_u32(static_cast<uint32_t>(modules.size()));
  for (const ModuleRecord& m : modules) {
    size_t path_size = core::string_length(m.path);
    result::ModuleRecord record;
    record.load_bias = m.load_bias;
    record.start = m.start;
    record.end = m.end;
    record.build_id_size = m.build_id_size;
    record.flags = m.flags;
    record.path_size = static_cast<uint32_t>(path_size);
    w.put_record(record);
    w.put_bytes(m.build_id, m.build_id_size);
    w.put_bytes(m.path, path_size);
  }
}

// The stacks that allocated anything since the start (alloc_totals), in id order: taken once,
// so that section 13 names only stacks section 4 holds while other threads go on allocating.
// Only for a report of the running program (a snapshot: the pprof endpoint's), not at exit,
// where nothing reads them and every stack would be symbolized for nothing.
bool collect_total_ids(bool running, core::MmapArray<uint32_t>& ids) {
  if (!g_flags.alloc_totals || !running) return true;
  uint32_t highest = g_stack_totals.highest_id();
  for (uint32_t id = 1; id <= highest; ++id) {
    if (g_stack_totals.get(id).blocks > 0 && !ids.try_push_back(id)) return false;
  }
  return true;
}

// The stacks a described block (memtrack snapshot --retainers) refers to: its own, and those of
// the blocks in its chain and among its referrers.
template <typename F>
void for_each_block_stack(const BlockDescription& block, F&& f) {
  if (!block.found) return;
  f(block.stack_id);
  for (uint16_t i = 0; i < block.chain_count; ++i) {
    if (block.chain[i].kind == result::LinkKind::kBlock) f(block.chain[i].stack_id);
  }
  for (uint16_t i = 0; i < block.referrer_count; ++i) {
    if (block.referrers[i].kind == result::LinkKind::kBlock) f(block.referrers[i].stack_id);
  }
}

// The stacks that leak groups, errors and open descriptors refer to, and those of
// `total_ids`, each once. Id 0 ("not known", for an error's allocation or first free) is
// written only if a group or a descriptor uses it.
bool collect_stack_ids(LeakReport& report, const core::MmapArray<ErrorEntry>& errors,
                       const OpenFdReport& fds, const core::MmapArray<uint32_t>& total_ids,
                       core::MmapArray<uint32_t>& ids) {
  uint32_t max_id = 0;
  auto consider = [&](uint32_t id) { max_id = id > max_id ? id : max_id; };
  if (total_ids.size() > 0) consider(total_ids[total_ids.size() - 1]);
  for (const LeakGroup& g : report.groups()) consider(g.stack_id);
  const core::MmapArray<RetentionGroup>& held = report.retention().groups();
  for (const RetentionGroup& g : held) {
    consider(g.stack_id);
    if (g.holder_kind == HolderKind::kSite) consider(g.holder);
  }
  for_each_block_stack(report.block(), consider);
  for (const OpenFd& fd : fds.fds()) consider(fd.info.stack_id);
  if (crash_record().valid) consider(crash_record().stack_id);
  for (const ErrorEntry& e : errors) {
    consider(e.bad_stack);
    consider(e.alloc_stack);
    consider(e.free_stack);
  }
  core::MmapArray<uint8_t> seen;
  if (!seen.try_resize(size_t{max_id} + 1)) return false;
  bool ok = true;
  auto add = [&](uint32_t id) {
    if (seen[id] != 0) return;
    seen[id] = 1;
    ok = ids.try_push_back(id) && ok;
  };
  for (const LeakGroup& g : report.groups()) add(g.stack_id);
  for (const RetentionGroup& g : held) {
    add(g.stack_id);
    if (g.holder_kind == HolderKind::kSite) add(g.holder);
  }
  for_each_block_stack(report.block(), add);
  if (crash_record().valid) add(crash_record().stack_id);
  for (const ErrorEntry& e : errors) {
    add(e.bad_stack);
    if (e.alloc_stack != 0) add(e.alloc_stack);
    if (e.free_stack != 0) add(e.free_stack);
  }
  for (const OpenFd& fd : fds.fds()) add(fd.info.stack_id);
  for (uint32_t id : total_ids) add(id);
  return ok;
}

void write_stacks(core::ResultWriter& w, const core::MmapArray<uint32_t>& ids) {
  uint64_t size = 4;
  for (uint32_t id : ids) size += result::StackRecord::kSize + 8 * g_stacks.get(id).size;
  w.begin_section(result::Section::kStacks, size);
  w.put_u32(static_cast<uint32_t>(ids.size()));
  for (uint32_t id : ids) {
    core::StackView stack = g_stacks.get(id);
    w.put_record(result::StackRecord{id, stack.size});
    for (uint32_t f = 0; f < stack.size; ++f) w.put_u64(stack.frames[f]);
  }
}

void write_errors(core::ResultWriter& w, const core::MmapArray<ErrorEntry>& errors) {
  w.begin_section(result::Section::kErrors,
                  4 + uint64_t{result::ErrorRecord::kSize} * errors.size());
  w.put_u32(static_cast<uint32_t>(errors.size()));
  for (const ErrorEntry& e : errors) w.put_record(e);
}

void write_leaks(core::ResultWriter& w, LeakReport& report) {
  w.begin_section(result::Section::kLeaks,
                  4 + uint64_t{result::LeakRecord::kSize} * report.groups().size());
  w.put_u32(static_cast<uint32_t>(report.groups().size()));
  for (const LeakGroup& g : report.groups()) {
    result::LeakRecord record;
    record.stack_id = g.stack_id;
    record.kind = g.kind;
    record.flags = g.runtime_internal ? result::kLeakRuntimeInternal : 0;
    record.bytes = g.bytes;
    record.blocks = g.blocks;
    w.put_record(record);
  }
}

void write_indirect(core::ResultWriter& w, LeakReport& report) {
  uint32_t count = 0;
  for (const LeakGroup& g : report.groups()) count += g.indirect_blocks > 0 ? 1 : 0;
  w.begin_section(result::Section::kIndirect, 4 + uint64_t{result::IndirectRecord::kSize} * count);
  w.put_u32(count);
  uint32_t index = 0;
  for (const LeakGroup& g : report.groups()) {
    if (g.indirect_blocks > 0) {
      result::IndirectRecord record;
      record.leak_index = index;
      record.indirect_bytes = g.indirect_bytes;
      record.indirect_blocks = g.indirect_blocks;
      w.put_record(record);
    }
    ++index;
  }
}

// A string of a retainer record: cut at 65535 bytes, "" for nullptr.
uint16_t retainer_text_size(const char* text) {
  size_t n = text == nullptr ? 0 : core::string_length(text);
  return static_cast<uint16_t>(n > UINT16_MAX ? UINT16_MAX : n);
}

// Section 14: what holds the still-reachable blocks (retention.h).
void write_retention(core::ResultWriter& w, const RetentionGraph& graph) {
  uint64_t size = result::RetentionHead::kSize +
                  uint64_t{result::RetentionGroupRecord::kSize} * graph.groups().size();
  for (const Retainer& r : graph.retainers()) {
    size +=
        result::RetainerRecord::kSize + retainer_text_size(r.symbol) + retainer_text_size(r.module);
  }
  w.begin_section(result::Section::kRetention, size);
  result::RetentionHead head;
  head.retainer_count = static_cast<uint32_t>(graph.retainers().size());
  head.group_count = static_cast<uint32_t>(graph.groups().size());
  head.flags = graph.complete() ? 0 : result::kRetentionApproximate;
  head.passes = graph.passes();
  head.shared_bytes = graph.shared_bytes();
  head.shared_blocks = graph.shared_blocks();
  w.put_record(head);
  for (const Retainer& r : graph.retainers()) {
    result::RetainerRecord record;
    record.kind = r.kind;
    record.symbol_size = retainer_text_size(r.symbol);
    record.module_size = retainer_text_size(r.module);
    record.tid = r.tid;
    record.frame = r.frame;
    record.pc = r.pc;
    record.start = r.start;
    record.size = r.size;
    record.module_offset = r.module != nullptr ? r.module_offset : 0;
    record.retained_bytes = r.retained_bytes;
    record.retained_blocks = r.retained_blocks;
    w.put_record(record);
    if (record.symbol_size > 0) w.put_bytes(r.symbol, record.symbol_size);
    if (record.module_size > 0) w.put_bytes(r.module, record.module_size);
  }
  for (const RetentionGroup& g : graph.groups()) {
    result::RetentionGroupRecord record;
    record.stack_id = g.stack_id;
    record.holder_kind = g.holder_kind;
    record.holder = g.holder;
    record.root = g.root;
    record.bytes = g.bytes;
    record.blocks = g.blocks;
    record.retained_bytes = g.retained_bytes;
    record.retained_blocks = g.retained_blocks;
    record.parent = g.parent;
    w.put_record(record);
  }
}

// Section 15: the block memtrack snapshot --retainers asked about.
void write_block_retention(core::ResultWriter& w, const BlockDescription& block) {
  w.begin_section(
      result::Section::kBlockRetention,
      result::BlockRetentionHead::kSize +
          uint64_t{result::BlockLinkRecord::kSize} * (block.chain_count + block.referrer_count));
  constexpr LeakKind kKindOf[] = {LeakKind::kDefinite, LeakKind::kIndirect, LeakKind::kPossible,
                                  LeakKind::kReachable};
  result::BlockRetentionHead head;
  head.address = block.address;
  head.found = block.found ? 1 : 0;
  if (block.found) {
    head.start = block.start;
    head.size = block.size;
    head.retained_bytes = block.retained_bytes;
    head.retained_blocks = block.retained_blocks;
    head.stack_id = block.stack_id;
    head.kind = kKindOf[static_cast<uint8_t>(block.state)];
    head.chain_count = block.chain_count;
    head.referrer_count = block.referrer_count;
  }
  w.put_record(head);
  auto put = [&](const BlockLink& link) {
    result::BlockLinkRecord record;
    record.kind = link.kind;
    record.stack_id = link.stack_id;
    record.retainer = link.retainer;
    record.start = link.start;
    record.size = link.size;
    record.offset = link.offset;
    w.put_record(record);
  };
  for (uint16_t i = 0; i < head.chain_count; ++i) put(block.chain[i]);
  for (uint16_t i = 0; i < head.referrer_count; ++i) put(block.referrers[i]);
}

// Section 12: the sampled mode's head, for `count` estimates that follow.
void begin_sampling(core::ResultWriter& w, size_t count) {
  w.begin_section(result::Section::kSampling,
                  result::SamplingHead::kSize + uint64_t{result::EstimateRecord::kSize} * count);
  result::SamplingHead head;
  head.interval = g_sampling.interval;
  head.seed = g_sampling.seed;
  head.sampled = g_sampling.sampled.load(std::memory_order_relaxed);
  head.count = static_cast<uint32_t>(count);
  w.put_record(head);
}

// Section 12 of a report: one estimate per leak group in the leaks section's order.
void write_sampling(core::ResultWriter& w, LeakReport& report) {
  begin_sampling(w, report.groups().size());
  for (const LeakGroup& g : report.groups()) {
    w.put_record(result::EstimateRecord{g.estimated_bytes, g.estimated_blocks});
  }
}

// Section 13: what the stacks `ids` allocated since the start. In the sampled mode the blocks
// were summed in kEstimateScale units (record.h) and are rounded here.
void write_stack_totals(core::ResultWriter& w, const core::MmapArray<uint32_t>& ids) {
  w.begin_section(
      result::Section::kStackTotals,
      result::StackTotalsHead::kSize + uint64_t{result::StackTotalRecord::kSize} * ids.size());
  result::StackTotalsHead head;
  head.count = static_cast<uint32_t>(ids.size());
  head.incomplete = g_stack_totals_incomplete.load(std::memory_order_relaxed) ? 1 : 0;
  w.put_record(head);
  uint64_t unit = g_sampling.interval != 0 ? kEstimateScale : 1;
  for (uint32_t id : ids) {
    core::StackTotals::Totals totals = g_stack_totals.get(id);
    result::StackTotalRecord record;
    record.stack_id = id;
    record.blocks = (totals.blocks + unit / 2) / unit;
    record.bytes = totals.bytes;
    w.put_record(record);
  }
}

// Section 8 (docs/format.md): the descriptors open at exit.
void write_resources(core::ResultWriter& w, const OpenFdReport& fds) {
  uint64_t size = result::ResourcesHead::kSize;
  for (const OpenFd& fd : fds.fds()) {
    size += result::ResourceRecord::kSize + core::string_length(fd.info.mode) + fd.text_size;
  }
  w.begin_section(result::Section::kResources, size);
  result::ResourcesHead head;
  head.count = static_cast<uint32_t>(fds.fds().size());
  head.untracked = fds.untracked();
  w.put_record(head);
  for (const OpenFd& fd : fds.fds()) {
    size_t mode_size = core::string_length(fd.info.mode);
    result::ResourceRecord record;
    record.fd = fd.fd;
    record.kind = fd.kind;
    record.call = fd.info.call;
    record.stream = fd.info.stream() ? 1 : 0;
    record.mode_size = static_cast<uint8_t>(mode_size);
    record.flags = fd.info.flags;
    record.stack_id = fd.info.stack_id;
    record.description_size = static_cast<uint16_t>(fd.text_size);
    w.put_record(record);
    w.put_bytes(fd.info.mode, mode_size);
    w.put_bytes(fds.description(fd), fd.text_size);
  }
}

// Section 10: the crash that ended the process.
void write_crash(core::ResultWriter& w, const CrashRecord& crash) {
  w.begin_section(result::Section::kCrash, result::CrashRecord::kSize);
  result::CrashRecord record;
  record.signal = static_cast<uint32_t>(crash.signal);
  record.code = crash.code;
  record.address = crash.address;
  record.tid = crash.tid;
  record.flags = crash.has_address ? result::kCrashHasAddress : 0;
  record.stack_id = crash.stack_id;
  w.put_record(record);
}

void fail(const char* what, const char* path) {
  core::FixedText<640> message;
  message.str("error: cannot ").str(what).str(" result file ").str(path).str(" (errno ");
  message.i64(errno).str("); no report for this process");
  diag(message.data());
}

// Writes <dir>/<name> through a temporary file and rename; `write_sections` writes
// everything between the header and the end section.
template <typename WriteSections>
bool write_file(const char* dir, const core::TextBuffer& name, WriteSections&& write_sections) {
  int pid = core::sys::current_pid();
  core::FixedText<core::kMaxFlagStringLength + 96> temp;
  core::FixedText<core::kMaxFlagStringLength + 96> final_path;
  temp.str(dir).str("/.memtrack.").i64(pid).str(".").i64(core::sys::current_tid()).str(".tmp");
  final_path.str(dir).chr('/').str(name.data());
  int fd = open(temp.data(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    fail("create", temp.data());
    return false;
  }
  bool ok;
  {
    core::ResultWriter w(fd);
    w.write_header();
    write_sections(w);
    ok = w.finish();
  }
  ok = close(fd) == 0 && ok;
  if (!ok || rename(temp.data(), final_path.data()) != 0) {
    fail("write", final_path.data());
    unlink(temp.data());
    return false;
  }
  return true;
}

// The text a function of the program returns (__lsan_default_options, ...), cut at
// kMaxLsanText bytes; "" when the program has no such function or it returns null.
const char* program_text(const char* function_name, uint32_t* size) {
  using TextFunction = const char* (*)();
  auto function = reinterpret_cast<TextFunction>(find_main_program_function(function_name));
  const char* text = function != nullptr ? function() : nullptr;
  if (text == nullptr) text = "";
  uint32_t n = 0;
  while (n < result::kMaxLsanText && text[n] != '\0') ++n;
  *size = n;
  return text;
}

// Section 11, only for a program that defines one of the two functions: the CLI applies
// them as LeakSanitizer would (suppressions and report options live there).
void write_lsan(core::ResultWriter& w) {
  uint32_t options_size = 0;
  uint32_t suppressions_size = 0;
  const char* options = program_text("__lsan_default_options", &options_size);
  const char* suppressions = program_text("__lsan_default_suppressions", &suppressions_size);
  if (options_size == 0 && suppressions_size == 0) return;
  w.begin_section(result::Section::kLsan, 8 + uint64_t{options_size} + suppressions_size);
  w.put_u32(options_size);
  w.put_bytes(options, options_size);
  w.put_u32(suppressions_size);
  w.put_bytes(suppressions, suppressions_size);
}

// Section 16, only when the runtime cannot see some of the program's allocations: each note
// its kind (u8), text size (u32) and text.
void write_notes(core::ResultWriter& w, const BlindSpots& spots) {
  uint64_t size = 4;
  for (int i = 0; i < spots.count; ++i) size += 5 + spots.notes[i].text.size();
  w.begin_section(result::Section::kNotes, size);
  w.put_u32(static_cast<uint32_t>(spots.count));
  for (int i = 0; i < spots.count; ++i) {
    const BlindSpots::Note& note = spots.notes[i];
    w.put_u8(static_cast<uint8_t>(note.kind));
    w.put_u32(static_cast<uint32_t>(note.text.size()));
    w.put_bytes(note.text.data(), note.text.size());
  }
}

bool write_report_file(const char* dir, const core::TextBuffer& name, LeakReport& report,
                       bool running) {
  core::MmapArray<ModuleRecord> modules;
  if (!collect_modules(modules)) diag("warning: module map incomplete (out of memory)");
  core::MmapArray<ErrorEntry> errors;
  core::MmapArray<uint32_t> stack_ids;
  core::MmapArray<uint32_t> total_ids;
  OpenFdReport fds;  // before this function opens its own file
  bool fds_ok = !g_flags.track_fds || fds.try_collect(g_fds);
  if (!fds_ok || !copy_errors(errors) || !collect_total_ids(running, total_ids) ||
      !collect_stack_ids(report, errors, fds, total_ids, stack_ids)) {
    diag("error: cannot map memory for the result file; no report for this process");
    return false;
  }
  return write_file(dir, name, [&](core::ResultWriter& w) {
    write_process(w, running);
    write_stats(w);
    write_modules(w, modules);
    write_stacks(w, stack_ids);
    write_leaks(w, report);
    write_indirect(w, report);
    if (g_sampling.interval != 0) write_sampling(w, report);
    if (report.retention().built()) write_retention(w, report.retention());
    if (report.block().address != 0) write_block_retention(w, report.block());
    if (g_flags.alloc_totals && running) write_stack_totals(w, total_ids);
    if (errors.size() > 0) write_errors(w, errors);
    if (g_flags.track_fds) write_resources(w, fds);
    if (!running && crash_record().valid) write_crash(w, crash_record());
    write_lsan(w);
    BlindSpots spots = blind_spots();
    if (spots.count > 0) write_notes(w, spots);
  });
}

void write_live(core::ResultWriter& w, const LiveReport& live) {
  w.begin_section(
      result::Section::kLive,
      result::LiveHead::kSize + uint64_t{result::LiveSiteRecord::kSize} * live.sites.size());
  result::LiveHead head = live.head;
  head.site_count = static_cast<uint32_t>(live.sites.size());
  w.put_record(head);
  for (const LiveSite& site : live.sites) w.put_record(site);
  if (live.estimates.size() == 0) return;
  // Section 12 of a live report: one estimate per site in the sites' order.
  begin_sampling(w, live.estimates.size());
  for (const result::EstimateRecord& estimate : live.estimates) w.put_record(estimate);
}

}  // namespace

bool write_result_file(const char* result_dir, LeakReport& report) {
  core::FixedText<64> name;
  name.str("memtrack.").i64(core::sys::current_pid()).str(".mtr");
  return write_report_file(result_dir, name, report, false);
}

bool write_snapshot_file(const char* dir, LeakReport& report, uint32_t request) {
  core::FixedText<64> name;
  name.str("snapshot.").i64(core::sys::current_pid()).chr('.').u64(request).str(".mtr");
  return write_report_file(dir, name, report, true);
}

bool write_check_file(const char* result_dir, LeakReport& report, uint32_t sequence) {
  core::FixedText<64> name;
  name.str("check.").i64(core::sys::current_pid()).chr('.').u64(sequence).str(".mtr");
  return write_report_file(result_dir, name, report, true);
}

bool write_live_file(const char* result_dir, const LiveReport& live,
                     const RetentionGraph* retention) {
  core::MmapArray<ModuleRecord> modules;
  core::MmapArray<uint32_t> stack_ids;
  bool ok = collect_modules(modules);
  // Each stack once: the sites', then those the retention groups name that no site does.
  uint32_t max_id = 0;
  auto consider = [&](uint32_t id) { max_id = id > max_id ? id : max_id; };
  for (const LiveSite& site : live.sites) consider(site.stack_id);
  if (retention != nullptr) {
    for (const RetentionGroup& g : retention->groups()) {
      consider(g.stack_id);
      if (g.holder_kind == HolderKind::kSite) consider(g.holder);
    }
  }
  core::MmapArray<uint8_t> seen;
  ok = ok && seen.try_resize(size_t{max_id} + 1);
  auto add = [&](uint32_t id) {
    if (!ok || seen[id] != 0) return;
    seen[id] = 1;
    ok = stack_ids.try_push_back(id);
  };
  for (const LiveSite& site : live.sites) add(site.stack_id);
  if (retention != nullptr) {
    for (const RetentionGroup& g : retention->groups()) {
      add(g.stack_id);
      if (g.holder_kind == HolderKind::kSite) add(g.holder);
    }
  }
  if (!ok) {
    diag("warning: cannot map memory for a live report; skipped");
    return false;
  }
  core::FixedText<64> name;
  name.str("live.").i64(core::sys::current_pid()).chr('.').u64(live.head.sequence).str(".mtr");
  return write_file(result_dir, name, [&](core::ResultWriter& w) {
    write_process(w, true);
    write_stats(w);
    write_modules(w, modules);
    write_stacks(w, stack_ids);
    write_live(w, live);
    if (retention != nullptr && retention->built()) write_retention(w, *retention);
  });
}

}  // namespace memtrack::rt
