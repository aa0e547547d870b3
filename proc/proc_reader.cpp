// One process from /proc: which file each field comes from and what replaces it when the
// file is missing, denied or malformed (docs/cli.md, "memtrack top").
#include "proc/proc_reader.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "common/error.h"
#include "proc/proc_parse.h"

namespace memtrack::top {
namespace {

void append_number(std::string* out, uint32_t n) {
  char digits[16];
  auto [end, error] = std::to_chars(digits, digits + sizeof digits, n);
  out->append(digits, end);
}

}  // namespace

ProcReader::ProcReader(ProcFiles& files, uint64_t page_size) : files_(files) {
  if (page_size == 0) page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  page_kb_ = page_size / 1024;
}

std::vector<uint32_t> ProcReader::list_pids() {
  std::vector<uint32_t> pids;
  if (files_.list_numeric("", &pids) != ReadStatus::kOk) {
    throw Error("cannot list the processes in " + files_.root());
  }
  return pids;
}

const std::string& ProcReader::path(uint32_t pid, const char* file) {
  path_.clear();
  append_number(&path_, pid);
  path_ += '/';
  path_ += file;
  return path_;
}

std::optional<ProcessInfo> ProcReader::read_process(uint32_t pid, bool with_threads) {
  ReadStatus status = files_.read(path(pid, "stat"), &buffer_);
  if (status != ReadStatus::kOk) {
    ++(status == ReadStatus::kMissing ? vanished_ : malformed_);
    return std::nullopt;
  }
  std::optional<StatFields> stat = try_parse_stat(buffer_);
  if (!stat) {
    // An empty stat is what a read racing with the exit can see.
    ++(buffer_.empty() ? vanished_ : malformed_);
    return std::nullopt;
  }
  ProcessInfo info;
  info.pid = pid;
  info.ppid = stat->ppid;
  info.start_ticks = stat->start_ticks;
  info.state = stat->state;
  info.kernel_thread = (stat->flags & kPfKthread) != 0;
  info.name = std::move(stat->comm);
  info.num_threads = stat->num_threads;
  info.cpu_ticks = stat->utime + stat->stime;

  status = files_.read(path(pid, "status"), &buffer_);
  if (status == ReadStatus::kMissing) {  // stat was there a moment ago: it just exited
    ++vanished_;
    return std::nullopt;
  }
  StatusFields fields = parse_status(buffer_);
  info.uid = fields.euid;
  if (info.kernel_thread) {
    // No mm: statm and smaps_rollup are empty, and the numbers are known to be zero.
    info.rss_kb = info.pss_kb = info.uss_kb = info.swap_kb = 0;
  } else {
    info.rss_kb = fields.vm_rss_kb;
    info.swap_kb = fields.vm_swap_kb;
    read_memory(&info);
    if (files_.read(path(pid, "cmdline"), &buffer_) == ReadStatus::kOk) {
      info.cmdline = parse_cmdline(buffer_);
    }
  }
  if (with_threads && !read_threads(&info)) return std::nullopt;
  return info;
}

void ProcReader::read_memory(ProcessInfo* info) {
  if (!info->rss_kb && files_.read(path(info->pid, "statm"), &buffer_) == ReadStatus::kOk) {
    if (std::optional<uint64_t> pages = try_parse_statm_resident_pages(buffer_)) {
      info->rss_kb = *pages * page_kb_;
    }
  }
  // Denied for other users' processes unless we may ptrace them: PSS and USS stay unknown.
  if (files_.read(path(info->pid, "smaps_rollup"), &buffer_) == ReadStatus::kOk) {
    if (std::optional<RollupFields> rollup = try_parse_smaps_rollup(buffer_)) {
      info->pss_kb = rollup->pss_kb;
      info->uss_kb = rollup->uss_kb;
      if (!info->swap_kb) info->swap_kb = rollup->swap_kb;
    }
  }
}

bool ProcReader::read_threads(ProcessInfo* info) {
  info->threads.clear();
  if (info->num_threads <= 1) {
    // The only thread is the process itself: its stat says all there is to say.
    info->threads.push_back({info->pid, info->pid, info->name, info->state, info->cpu_ticks});
    return true;
  }
  ReadStatus status = files_.list_numeric(path(info->pid, "task"), &tids_);
  if (status == ReadStatus::kMissing) {
    ++vanished_;
    return false;
  }
  info->threads.reserve(tids_.size());
  for (uint32_t tid : tids_) {
    path(info->pid, "task/");
    append_number(&path_, tid);
    path_ += "/stat";
    if (files_.read(path_, &buffer_) != ReadStatus::kOk) continue;  // the thread ended
    std::optional<StatFields> stat = try_parse_stat(buffer_);
    if (!stat) continue;
    info->threads.push_back(
        {tid, info->pid, std::move(stat->comm), stat->state, stat->utime + stat->stime});
  }
  std::sort(info->threads.begin(), info->threads.end(),
            [](const ThreadInfo& a, const ThreadInfo& b) { return a.tid < b.tid; });
  return true;
}

}  // namespace memtrack::top
