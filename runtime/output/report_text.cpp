// The exit report as text: summary, then leak groups with frames named by dladdr (module and
// function+offset; file:line needs the out-of-process symbolizer). Calls libc (dladdr) but
// never malloc; runs inside the runtime scope.
#include "runtime/output/report_text.h"

#include "core/fd_names.h"
#include "core/result_names.h"
#include "core/signal_names.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/fd/fd_report.h"
#include "runtime/fd/fd_tracking.h"
#include "runtime/output/log_file.h"
#include "runtime/record/crash.h"
#include "runtime/record/misuse.h"
#include "runtime/record/peak.h"
#include "runtime/runtime.h"
#include "runtime/unwind/elf_symbols.h"

#ifndef MEMTRACK_VERSION
#define MEMTRACK_VERSION "0.0.0"
#endif

namespace memtrack::rt {
namespace {

bool starts_with(const char* s, const char* prefix) {
  while (*prefix != '\0') {
    if (*s++ != *prefix++) return false;
  }
  return true;
}

// main itself or a part gcc split off it (main.cold holds catch blocks).
bool is_main(const char* function) {
  return function != nullptr && starts_with(function, "main") &&
         (function[4] == '\0' || function[4] == '.');
}

void line_start(core::TextBuffer& line) {
  line.clear();
  line.str("==").i64(g_pid.load(std::memory_order_relaxed)).str("== ");
}

void emit(core::FdWriter& out, core::TextBuffer& line) {
  line.chr('\n');
  out.write(line);
}

void write_frames(core::FdWriter& out, core::StackView stack) {
  core::FixedText<1024> line;
  if (stack.frames == nullptr) {
    line_start(line);
    emit(out, line.str("   (no stack: memtrack ran out of memory for stacks)"));
    return;
  }
  if (stack.size == 0) {
    line_start(line);
    emit(out, line.str("   (no frames could be unwound)"));
    return;
  }
  for (uint32_t i = 0; i < stack.size; ++i) {
    uintptr_t pc = stack.frames[i];
    SymbolInfo info = describe_address(pc, true);  // every frame is a return address
    line_start(line);
    line.str("   #").u64(i).chr(' ').hex(pc, 16).chr(' ');
    if (info.function != nullptr) {
      char demangled[512];
      bool ok = try_demangle(info.function, demangled, sizeof(demangled));
      line.str(ok ? demangled : info.function).str("+").hex(info.function_offset);
    } else {
      line.str("??");
    }
    if (info.module != nullptr) {
      line.str(" (").str(info.module).str("+").hex(info.module_offset).chr(')');
    } else {
      line.str(" (<unknown module>)");
    }
    emit(out, line);
    // As valgrind does by default: the C start-up frames below main say nothing useful.
    if (is_main(info.function)) break;
  }
}

bool is_shown(const LeakGroup& group) {
  return (!group.runtime_internal || g_flags.show_runtime_internal) &&
         (group.kind != LeakKind::kReachable || g_flags.show_reachable);
}

// "80 (16 direct, 64 indirect) bytes in 1 block is definitely lost", as memcheck words it.
void write_group(core::FdWriter& out, const LeakGroup& group, size_t index, size_t shown) {
  core::FixedText<256> line;
  line_start(line);
  emit(out, line);
  line_start(line);
  if (group.indirect_bytes > 0) {
    line.grouped(group.bytes + group.indirect_bytes).str(" (").grouped(group.bytes);
    line.str(" direct, ").grouped(group.indirect_bytes).str(" indirect)");
  } else {
    line.grouped(group.bytes);
  }
  line.str(" bytes in ").grouped(group.blocks).chr(' ');
  line.plural(group.blocks, "block").str(group.blocks == 1 ? " is" : " are");
  line.chr(' ')
      .str(core::leak_kind_phrase(group.kind))
      .str(" (group ")
      .u64(index + 1)
      .str(" of ")
      .u64(shown);
  line.chr(')');
  if (group.runtime_internal) line.str(" [kept by the C/C++ runtime]");
  line.str(", allocated at:");
  emit(out, line);
  write_frames(out, g_stacks.get(group.stack_id));
}

void write_heap_summary(core::FdWriter& out, const char* how) {
  core::FixedText<512> line;
  line_start(line);
  line.str("memtrack ").str(MEMTRACK_VERSION).str(" leak report: ").str(program_invocation_name);
  line.str(" (pid ").i64(g_pid.load(std::memory_order_relaxed)).str(", ").str(how).chr(')');
  emit(out, line);
  line_start(line);
  StatsSnapshot stats = snapshot_stats();
  line.str("HEAP SUMMARY: ").grouped(stats.allocations).chr(' ');
  line.plural(stats.allocations, "allocation");
  line.str(", ").grouped(stats.frees).chr(' ').plural(stats.frees, "free").str(", ");
  line.grouped(stats.bytes_allocated).str(" bytes allocated, ");
  line.grouped(stats.peak_bytes).str(" bytes peak live");
  emit(out, line);
}

void write_kind_line(core::FdWriter& out, const char* label, LeakTotals totals,
                     const char* suffix) {
  core::FixedText<256> line;
  line_start(line);
  line.str("  ").str(label).str(": ").grouped(totals.bytes).str(" bytes in ");
  line.grouped(totals.blocks).chr(' ').plural(totals.blocks, "block").str(suffix);
  emit(out, line);
}

void write_leak_summary(core::FdWriter& out, const LeakReport& report) {
  LeakTotals leaks;
  bool classified = false;
  for (const LeakGroup& group : report.groups()) {
    if (group.kind != LeakKind::kUnclassified) classified = true;
    if (group.runtime_internal || group.kind == LeakKind::kReachable) continue;
    leaks.bytes += group.bytes;
    leaks.blocks += group.blocks;
    leaks.groups += 1;
  }
  LeakTotals internal = report.totals(true);
  core::FixedText<512> line;
  line_start(line);
  emit(out, line);
  line_start(line);
  line.str("LEAK SUMMARY: ").grouped(leaks.bytes).str(" bytes in ").grouped(leaks.blocks);
  line.chr(' ').plural(leaks.blocks, "block").str(classified ? " lost" : " unfreed at exit");
  line.str(", from ").grouped(leaks.groups);
  line.str(leaks.groups == 1 ? " allocation site" : " allocation sites");
  emit(out, line);
  if (classified) {
    for (LeakKind kind : {LeakKind::kDefinite, LeakKind::kIndirect, LeakKind::kPossible}) {
      write_kind_line(out, core::leak_kind_phrase(kind), report.totals(false, kind), "");
    }
    write_kind_line(out, core::leak_kind_phrase(LeakKind::kReachable),
                    report.totals(false, LeakKind::kReachable),
                    g_flags.show_reachable ? "" : " (show_reachable=1 lists them)");
  }
  if (internal.blocks > 0) {
    line_start(line);
    line.str("  ").str(g_flags.show_runtime_internal ? "included above: " : "not shown: ");
    line.grouped(internal.bytes).str(" bytes in ").grouped(internal.blocks).chr(' ');
    line.plural(internal.blocks, "block");
    line.str(" kept by the C/C++ runtime for its own use");
    if (!g_flags.show_runtime_internal) line.str(" (show_runtime_internal=1 lists them)");
    emit(out, line);
  }
  uint64_t untracked = g_stats.untracked_allocations.load(std::memory_order_relaxed);
  if (untracked > 0) {
    line_start(line);
    line.str("  untracked: ").grouped(untracked).chr(' ').plural(untracked, "allocation");
    line.str(" (").grouped(g_stats.untracked_bytes.load(std::memory_order_relaxed));
    line.str(
        " bytes) not tracked: the allocation table was full (max_metadata_mb) or mmap "
        "failed; their leaks cannot be reported");
    emit(out, line);
  }
}

}  // namespace

const char* error_title(const ErrorEntry& e) {
  switch (e.kind) {
    case core::result::ErrorKind::kDoubleFree:
      return "double free";
    case core::result::ErrorKind::kReallocAfterFree:
      return "realloc of a freed pointer";
    case core::result::ErrorKind::kMismatchedFree:
      return "mismatched free (the block came from another allocation family)";
    case core::result::ErrorKind::kInvalidRead:
      return e.detail != 0 ? "invalid read of a freed block" : "invalid read outside a block";
    case core::result::ErrorKind::kInvalidWrite:
      return e.detail != 0 ? "invalid write to a freed block" : "invalid write outside a block";
    case core::result::ErrorKind::kWriteOutsideBlock:
      return e.detail != 0 ? "bytes beside a block overwritten (found at exit)"
                           : "bytes beside a block overwritten (found at its free)";
    case core::result::ErrorKind::kWriteAfterFree:
      return e.detail != 0 ? "a freed block written to (found at exit)"
                           : "a freed block written to (found when it left the quarantine)";
    case core::result::ErrorKind::kInvalidFree:
      break;
  }
  switch (e.where) {
    case core::result::ErrorWhere::kHeap:
      return "invalid free of a pointer inside a heap block";
    case core::result::ErrorWhere::kStack:
      return "invalid free of a stack address";
    case core::result::ErrorWhere::kGlobal:
      return "invalid free of a global's address";
    case core::result::ErrorWhere::kUnknown:
      break;
  }
  return "invalid free";
}

void write_stack_part(core::FdWriter& out, const char* label, uint32_t stack_id) {
  if (stack_id == 0) return;
  core::FixedText<128> line;
  line_start(line);
  emit(out, line.str(" ").str(label));
  write_frames(out, g_stacks.get(stack_id));
}

// The crash that ended the process, first: the signal, its cause, the crashing thread's
// stack (frame 0 is the faulting instruction, stored as pc + 1 like a return address).
void write_crash(core::FdWriter& out) {
  const CrashRecord& crash = crash_record();
  if (!crash.valid) return;
  core::FixedText<256> line;
  line_start(line);
  const char* name = core::signal_name(crash.signal);
  line.str("CRASH: ").str(name != nullptr ? name : "signal").str(" (signal ").i64(crash.signal);
  line.str(") in thread ").u64(crash.tid);
  const char* cause = core::signal_cause(crash.signal, crash.code);
  if (cause != nullptr) line.str(": ").str(cause);
  if (crash.has_address) line.str(" at address ").hex(crash.address);
  emit(out, line);
  write_frames(out, g_stacks.get(crash.stack_id));
}

// "  address 0x... is 0 bytes after a block of 10 bytes", as memcheck relates a bad address to
// its block.
void write_block_relation(core::FdWriter& out, const ErrorEntry& e) {
  core::FixedText<256> line;
  line_start(line);
  core::BlockRelation relation = core::block_relation(e.address, e.block_start, e.block_size);
  line.str("  address ").hex(e.address).str(" is ");
  line.grouped(relation.distance).str(" bytes ").str(relation.where);
  line.str(" a block of ").grouped(e.block_size).str(" bytes");
  emit(out, line);
}

// Allocator misuse, before the leaks, with the three stacks memcheck shows.
size_t write_errors(core::FdWriter& out) {
  core::MmapArray<ErrorEntry> errors;
  if (!copy_errors(errors)) return 0;
  for (const ErrorEntry& e : errors) {
    core::FixedText<256> line;
    line_start(line);
    emit(out, line);
    line_start(line);
    line.str("ERROR: ").str(error_title(e)).str(" at ").hex(e.address);
    if (e.block_size > 0) line.str(" (block of ").grouped(e.block_size).str(" bytes)");
    line.str(", ").grouped(e.occurrences).chr(' ').plural(e.occurrences, "time").str(", at:");
    emit(out, line);
    bool heap_error = core::is_heap_error(e.kind);
    if (heap_error && e.block_size > 0) {
      write_block_relation(out, e);
    }
    if (core::error_has_own_stack(e.kind, e.detail)) write_frames(out, g_stacks.get(e.bad_stack));
    write_stack_part(out, heap_error ? "freed at:" : "first freed at:", e.free_stack);
    write_stack_part(out, "allocated at:", e.alloc_stack);
  }
  return errors.size();
}

// "   fd 3: file /tmp/a.log, open(O_WRONLY|O_CREAT|O_APPEND)": what the descriptor refers to,
// then the call that opened it with its flags, or a stream's mode: "fopen("w")".
void write_open_fd(core::FdWriter& out, const OpenFdReport& fds, const OpenFd& fd) {
  core::FixedText<4400> line;
  line_start(line);
  line.str("   fd ").i64(fd.fd).str(": ").str(core::resource_kind_name(fd.kind)).chr(' ');
  const char* call = core::resource_call_name(fd.info.call);
  line.str(fds.description(fd)).str(", ").str(call != nullptr ? call : "?").chr('(');
  if (fd.info.stream()) {
    line.chr('"').str(fd.info.mode).chr('"');
  } else {
    core::format_open_flags(fd.info.flags, line);
  }
  line.chr(')');
  emit(out, line);
}

// After the leak groups: the descriptors still open, grouped by the stack that opened them,
// sites in the order they were first seen.
void write_open_fds(core::FdWriter& out, const OpenFdReport& fds) {
  if (fds.fds().size() == 0 && fds.untracked() == 0) return;
  size_t sites = fds.site_count();
  core::FixedText<256> line;
  line_start(line);
  emit(out, line);
  line_start(line);
  line.str("FILE DESCRIPTORS: ").grouped(fds.fds().size()).str(" open at exit, from ");
  line.grouped(sites).str(sites == 1 ? " site" : " sites");
  if (fds.untracked() > 0) {
    line.str(" (").grouped(fds.untracked()).str(" more not tracked: fd beyond ");
    line.grouped(FdTable::kCapacity - 1).str(" or no memory)");
  }
  emit(out, line);
  size_t site = 0;
  for (size_t i = 0; i < fds.fds().size();) {
    size_t end = i;
    while (end < fds.fds().size() && fds.fds()[end].info.stack_id == fds.fds()[i].info.stack_id) {
      ++end;
    }
    line_start(line);
    emit(out, line);
    line_start(line);
    line.grouped(end - i).chr(' ').plural(end - i, "descriptor").str(" open at exit (site ");
    line.u64(++site).str(" of ").u64(sites).str("), opened at:");
    emit(out, line);
    write_frames(out, g_stacks.get(fds.fds()[i].info.stack_id));
    for (; i < end; ++i) write_open_fd(out, fds, fds.fds()[i]);
  }
}

void write_text_report(core::FdWriter& out, LeakReport& report, const char* how) {
  OpenFdReport fds;  // first, before symbolizing frames opens files of our own
  if (g_flags.track_fds && !fds.try_collect(g_fds)) {
    diag("warning: cannot map memory for the list of open descriptors; not reported");
  }
  write_heap_summary(out, how);
  write_crash(out);
  size_t error_contexts = write_errors(out);
  size_t shown_total = 0;
  for (const LeakGroup& group : report.groups()) {
    if (is_shown(group)) ++shown_total;
  }
  size_t limit = g_flags.max_groups > 0 ? static_cast<size_t>(g_flags.max_groups) : shown_total;
  size_t index = 0;
  LeakTotals hidden;
  for (const LeakGroup& group : report.groups()) {
    if (!is_shown(group)) continue;
    if (index < limit) {
      write_group(out, group, index, shown_total);
    } else {
      hidden.bytes += group.bytes;
      hidden.blocks += group.blocks;
      hidden.groups += 1;
    }
    ++index;
  }
  if (hidden.groups > 0) {
    core::FixedText<256> line;
    line_start(line);
    emit(out, line);
    line_start(line);
    line.str("... ")
        .grouped(hidden.groups)
        .str(hidden.groups == 1 ? " more group (" : " more groups (");
    line.grouped(hidden.bytes);
    line.str(" bytes in ").grouped(hidden.blocks).chr(' ').plural(hidden.blocks, "block");
    line.str(") not shown; max_groups=").i64(g_flags.max_groups);
    emit(out, line);
  }
  write_open_fds(out, fds);
  write_leak_summary(out, report);
  if (error_contexts > 0) {
    core::FixedText<128> line;
    line_start(line);
    line.str("ERROR SUMMARY: ")
        .grouped(error_contexts)
        .str(error_contexts == 1 ? " context" : " contexts");
    line.str(" of allocator misuse (see ERROR above)");
    emit(out, line);
  }
}

void write_live_text(const LiveReport& live) {
  int fd = open_log_fd();
  {
    core::FdWriter out(fd);
    core::FixedText<512> line;
    uint64_t blocks = 0;
    uint64_t bytes = 0;
    for (const LiveSite& site : live.sites) {
      blocks += site.old_blocks;
      bytes += site.old_bytes;
    }
    line_start(line);
    const core::result::LiveHead& head = live.head;
    line.str("live report #").u64(head.sequence).str(" after ").u64(head.uptime_ms / 1000);
    line.chr('.').u64(head.uptime_ms % 1000 / 100).str(" s: ").grouped(bytes).str(" bytes in ");
    line.grouped(blocks).chr(' ').plural(blocks, "block").str(" older than ");
    line.u64(head.expire_ms).str(" ms (").grouped(head.live_bytes).str(" bytes live)");
    emit(out, line);
    int shown = 0;
    bool sampled = live.estimates.size() == live.sites.size() && live.sites.size() > 0;
    for (size_t i = 0; i < live.sites.size(); ++i) {
      const LiveSite& site = live.sites[i];
      if (site.old_blocks == 0) continue;
      if ((site.flags & core::result::kLiveSiteRuntimeInternal) != 0 &&
          !g_flags.show_runtime_internal) {
        continue;
      }
      bool not_sampled = (site.flags & core::result::kLiveSiteNotSampled) != 0;
      if (g_flags.max_groups > 0 && shown == g_flags.max_groups && !not_sampled) continue;
      ++shown;
      line_start(line);
      if (sampled && !not_sampled) {  // the sampled mode's estimate (docs/sampling.md)
        const core::result::EstimateRecord& estimate = live.estimates[i];
        line.chr('~').grouped(estimate.estimated_bytes).str(" bytes in ~");
        line.grouped(estimate.estimated_blocks).chr(' ').plural(estimate.estimated_blocks, "block");
        line.str(" (").grouped(site.old_blocks).str(" sampled)");
      } else {
        line.grouped(site.old_bytes).str(" bytes in ").grouped(site.old_blocks).chr(' ');
        line.plural(site.old_blocks, "block");
      }
      line.str(" older than ").u64(live.head.expire_ms).str(" ms");
      if (not_sampled) {
        line.str(" were not sampled (no stack; the estimates above stand for them)");
        emit(out, line);
        continue;
      }
      if (site.freed_after_report > 0) {
        line.str(" (").grouped(site.freed_after_report).str(" reported before were freed)");
      }
      line.str(", allocated at:");
      emit(out, line);
      write_frames(out, g_stacks.get(site.stack_id));
    }
  }
  if (fd != 2) core::sys::close_fd(fd);
}

}  // namespace memtrack::rt
