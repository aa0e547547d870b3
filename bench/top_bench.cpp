// memtrack top: the CPU cost of one refresh (read every process and thread, sort, format) on
// a generated proc tree of 1,000 processes with 10 threads each (10,000 threads), with files
// the size of real ones; and, for comparison, on this machine's /proc.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "proc/json_output.h"
#include "proc/proc_files.h"
#include "proc/proc_reader.h"
#include "proc/sampler.h"
#include "proc/user_names.h"
#include "proc/view.h"
#include "top/table_format.h"

namespace {

using namespace memtrack::top;

constexpr int kProcesses = 1000;
constexpr int kThreadsPerProcess = 10;

std::string stat_text(int pid, int tid, const std::string& comm) {
  return fmt::format(
      "{} ({}) S 1 {} {} 0 -1 4194560 2190 0 0 0 {} {} 0 0 20 0 {} 0 {} 120000000 {} "
      "18446744073709551615 94000000000000 94000000100000 140720000000000 0 0 0 0 0 0 0 0 0 "
      "17 1 0 0 0 0 0 94000000200000 94000000300000 94000001000000 140720000001000 "
      "140720000002000 140720000002000 140720000003000 0\n",
      tid, comm, pid, pid, tid % 97, tid % 13, kThreadsPerProcess, 5000 + pid, 1000 + pid);
}

// /proc/PID/status as Linux 6.1 writes it (1.4 KB), with this process's numbers.
std::string status_text(int pid, const std::string& name) {
  return fmt::format(
      "Name:\t{0}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t{1}\nNgid:\t0\nPid:\t{1}\n"
      "PPid:\t1\nTracerPid:\t0\nUid:\t{2}\t{2}\t{2}\t{2}\nGid:\t{2}\t{2}\t{2}\t{2}\n"
      "FDSize:\t64\nGroups:\t \nNStgid:\t{1}\nNSpid:\t{1}\nNSpgid:\t{1}\nNSsid:\t{1}\n"
      "Kthread:\t0\nVmPeak:\t  120000 kB\nVmSize:\t  118000 kB\nVmLck:\t       0 kB\n"
      "VmPin:\t       0 kB\nVmHWM:\t{3:>8} kB\nVmRSS:\t{3:>8} kB\nRssAnon:\t    2000 kB\n"
      "RssFile:\t    2000 kB\nRssShmem:\t       0 kB\nVmData:\t   50000 kB\n"
      "VmStk:\t     132 kB\nVmExe:\t      20 kB\nVmLib:\t    1528 kB\nVmPTE:\t      48 kB\n"
      "VmSwap:\t       0 kB\nHugetlbPages:\t       0 kB\nCoreDumping:\t0\nTHP_enabled:\t1\n"
      "untag_mask:\t0xffffffffffffffff\nThreads:\t{4}\nSigQ:\t0/96365\n"
      "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n"
      "SigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\nCapInh:\t0000000000000000\n"
      "CapPrm:\t000001fffeffffff\nCapEff:\t000001fffeffffff\nCapBnd:\t000001fffeffffff\n"
      "CapAmb:\t0000000000000000\nNoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n"
      "Speculation_Store_Bypass:\tvulnerable\nSpeculationIndirectBranch:\talways enabled\n"
      "Cpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed:\t{5}00000001\n"
      "Mems_allowed_list:\t0\nvoluntary_ctxt_switches:\t10\nnonvoluntary_ctxt_switches:\t1\n",
      name, pid, pid % 7 == 0 ? 0 : 1000, 4000 + pid, kThreadsPerProcess, std::string(279, '0'));
}

std::string rollup_text(int pid) {
  return fmt::format(
      "55a91f6e7000-7ffcfb475000 ---p 00000000 00:00 0                          [rollup]\n"
      "Rss:            {0:>8} kB\nPss:            {1:>8} kB\nPss_Dirty:          112 kB\n"
      "Pss_Anon:           112 kB\nPss_File:           393 kB\nPss_Shmem:            0 kB\n"
      "Shared_Clean:       1544 kB\nShared_Dirty:          0 kB\nPrivate_Clean:        60 kB\n"
      "Private_Dirty:  {2:>8} kB\nReferenced:         1716 kB\nAnonymous:           112 kB\n"
      "KSM:                   0 kB\nLazyFree:              0 kB\nAnonHugePages:         0 kB\n"
      "ShmemPmdMapped:        0 kB\nFilePmdMapped:         0 kB\nShared_Hugetlb:        0 kB\n"
      "Private_Hugetlb:       0 kB\nSwap:                  0 kB\nSwapPss:               0 kB\n"
      "Locked:                0 kB\n",
      4000 + pid, 2000 + pid, 1000 + pid);
}

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The generated tree, made once per benchmark run and removed at exit.
class FakeProcTree {
 public:
  FakeProcTree() {
    // tmpfs, like procfs, has no block layer under it: /dev/shm when there is one.
    std::error_code error;
    std::filesystem::path base = std::filesystem::is_directory("/dev/shm", error)
                                     ? std::filesystem::path("/dev/shm")
                                     : std::filesystem::temp_directory_path();
    std::string pattern = (base / "memtrack-top-bench-XXXXXX").string();
    root_ = mkdtemp(pattern.data());
    for (int i = 0; i < kProcesses; ++i) {
      int pid = 1000 + i * 16;
      std::string name = fmt::format("worker-{}", i);
      std::filesystem::path dir = std::filesystem::path(root_) / std::to_string(pid);
      std::filesystem::create_directories(dir);
      write(dir / "stat", stat_text(pid, pid, name));
      write(dir / "status", status_text(pid, name));
      write(dir / "statm", fmt::format("29500 {} 500 5 0 12500 0\n", 1000 + pid / 4));
      write(dir / "smaps_rollup", rollup_text(pid));
      write(dir / "cmdline", std::string("/usr/lib/service/bin/") + name + '\0' + "--config" +
                                 '\0' + "/etc/service/" + name + ".conf" + '\0');
      for (int t = 0; t < kThreadsPerProcess; ++t) {
        std::filesystem::path task = dir / "task" / std::to_string(pid + t);
        std::filesystem::create_directories(task);
        write(task / "stat", stat_text(pid, pid + t, fmt::format("pool-{}", t)));
      }
    }
  }
  ~FakeProcTree() { std::filesystem::remove_all(root_); }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

const FakeProcTree& tree() {
  static FakeProcTree instance;
  return instance;
}

bool every_process(const ProcessRow&) {
  return true;
}

// One refresh as memtrack top does it every second: sample (with threads when they are
// shown or for JSON), then sort and format.
void refresh(benchmark::State& state, const std::string& root, bool threads, bool json) {
  ProcFiles files(root);
  ProcReader reader(files);
  UserNames users;
  Sampler sampler(reader, users, SamplerOptions{});
  ViewOptions view;
  view.threads = threads;
  size_t processes = 0;
  size_t thread_count = 0;
  for (auto _ : state) {
    Snapshot snapshot = sampler.sample(threads || json ? Sampler::WantThreads(every_process)
                                                       : Sampler::WantThreads());
    std::vector<ViewRow> rows = arrange(snapshot, view);
    std::string out = json ? format_json(rows, 100) : format_table(rows, 200, 100);
    benchmark::DoNotOptimize(out.data());
    processes = snapshot.processes.size();
    thread_count = 0;
    for (const ProcessRow& p : snapshot.processes) thread_count += p.info.threads.size();
  }
  state.counters["processes"] = static_cast<double>(processes);
  state.counters["threads"] = static_cast<double>(thread_count);
}

void BM_TopRefresh(benchmark::State& state) {
  refresh(state, tree().root(), state.range(0) != 0, false);
}
BENCHMARK(BM_TopRefresh)->ArgName("threads")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_TopRefreshJson(benchmark::State& state) {
  refresh(state, tree().root(), true, true);
}
BENCHMARK(BM_TopRefreshJson)->Unit(benchmark::kMillisecond);

// The floor under the thread part of a refresh: open, read and close each of the 10,000
// task/TID/stat files with nothing else (no listing, no parsing).
void BM_OpenReadCloseThreadFiles(benchmark::State& state) {
  ProcFiles files(tree().root());
  std::vector<std::string> paths;
  for (int i = 0; i < kProcesses; ++i) {
    int pid = 1000 + i * 16;
    for (int t = 0; t < kThreadsPerProcess; ++t) {
      paths.push_back(fmt::format("{}/task/{}/stat", pid, pid + t));
    }
  }
  std::string buffer;
  for (auto _ : state) {
    for (const std::string& path : paths) benchmark::DoNotOptimize(files.read(path, &buffer));
  }
  state.counters["files"] = static_cast<double>(paths.size());
}
BENCHMARK(BM_OpenReadCloseThreadFiles)->Unit(benchmark::kMillisecond);

void BM_TopRefreshRealProc(benchmark::State& state) {
  refresh(state, "/proc", state.range(0) != 0, false);
}
BENCHMARK(BM_TopRefreshRealProc)->ArgName("threads")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
