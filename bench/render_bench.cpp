// Rendering time of every output format for a report of many processes with many groups each
// (a shell script's subshells, a test suite's runs): PROCESSES processes (default 500) of
// GROUPS groups (default 200), half of them from a stripped program (frames without function
// names, as bash's), half with named C++ frames and source lines, shared across processes as
// the processes of one program share them. Prints one line per format: seconds and output
// bytes. Usage: memtrack_render_bench [PROCESSES [GROUPS]]
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "report/collapsed_renderer.h"
#include "report/gen_suppressions.h"
#include "report/html_renderer.h"
#include "report/json_renderer.h"
#include "report/junit_renderer.h"
#include "report/pprof_renderer.h"
#include "report/sarif_renderer.h"
#include "report/speedscope_renderer.h"
#include "report/text_renderer.h"
#include "report/valgrind_xml_renderer.h"

using memtrack::Frame;
using namespace memtrack::report;

namespace {

Frame frame(uint64_t address, const std::string& module, const std::string& function,
            const std::string& file, int line) {
  Frame f;
  f.address = address;
  f.module = module;
  f.module_offset = address & 0xfffff;
  f.function = function;
  f.file = file;
  f.line = line;
  return f;
}

// Group g of a process: a stack of 8 to 15 frames above main.
LeakGroup make_group(uint64_t g) {
  LeakGroup group;
  group.kind = g % 11 == 0  ? LeakKind::kPossible
               : g % 3 == 0 ? LeakKind::kReachable
                            : LeakKind::kDefinite;
  group.blocks = 1 + g % 5;
  group.bytes = group.blocks * (16 + (g * 7919) % 1024);
  bool stripped = g % 2 == 0;
  uint64_t depth = 8 + g % 8;
  group.stack.push_back(frame(0x7ffff7e00000 + (g % 13) * 0x40, "/lib/x86_64-linux-gnu/libc.so.6",
                              g % 13 == 0 ? "strdup" : "", "", 0));
  for (uint64_t f = 1; f < depth; ++f) {
    uint64_t address = 0x555555560000 + ((g / 4) * 97 + f * 13) % 4096 * 16;
    if (stripped) {
      group.stack.push_back(frame(address, "/usr/bin/bash", "", "", 0));
    } else {
      group.stack.push_back(frame(address, "/opt/app/bin/server",
                                  "app::Handler<std::map<int, std::string>>::step_" +
                                      std::to_string((g * 31 + f) % 400) + "(Request const&)",
                                  "/src/app/handler_" + std::to_string((g + f) % 37) + ".cpp",
                                  static_cast<int>(10 + (g * 7 + f) % 900)));
    }
  }
  group.stack.push_back(frame(0x555555555100, stripped ? "/usr/bin/bash" : "/opt/app/bin/server",
                              "main", stripped ? "" : "/src/app/main.cpp", stripped ? 0 : 12));
  return group;
}

Report make_report(uint64_t processes, uint64_t groups) {
  Report report;
  for (uint64_t p = 0; p < processes; ++p) {
    ProcessReport process;
    process.pid = static_cast<uint32_t>(10000 + p);
    process.ppid = p == 0 ? 1 : 10000;
    process.command = {"/usr/bin/bash", "./script.sh", "--round=" + std::to_string(p % 7)};
    process.exit.how = ExitInfo::How::kExit;
    for (uint64_t g = 0; g < groups; ++g) {
      process.leaks.push_back(make_group(g + p % 3));
      const LeakGroup& added = process.leaks.back();
      process.summary.allocations += added.blocks;
      process.summary.of_kind(added.kind).add(added.bytes, added.blocks);
    }
    report.processes.push_back(std::move(process));
  }
  return report;
}

// RENDER_BENCH_ONLY=NAME times that format alone (for a profiler).
void time_format(const char* name, const std::function<void(std::ostream&)>& render) {
  const char* only = getenv("RENDER_BENCH_ONLY");
  if (only != nullptr && std::string(only) != name) return;
  // A file, as memtrack writes its outputs (a string stream's growth would be timed too).
  // In memory where there is a tmpfs: disk writes would time the machine's disk.
  char path[] = "/dev/shm/memtrack-render-bench-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return;
  close(fd);
  timespec cpu_start{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu_start);
  auto start = std::chrono::steady_clock::now();
  {
    std::ofstream out(path, std::ios::trunc);
    render(out);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  timespec cpu_end{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu_end);
  double cpu = static_cast<double>(cpu_end.tv_sec - cpu_start.tv_sec) +
               static_cast<double>(cpu_end.tv_nsec - cpu_start.tv_nsec) / 1e9;
  struct stat st {};
  stat(path, &st);
  unlink(path);
  std::cout << name << "\t" << seconds << " s\t(cpu " << cpu << " s)\t" << st.st_size << " bytes\n";
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t processes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 500;
  uint64_t groups = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200;
  Report report = make_report(processes, groups);
  std::cout << processes << " processes x " << groups << " groups\n";
  TextOptions text;
  time_format("text", [&](std::ostream& out) { render_text(report, out, text); });
  TextOptions suggestions;
  suggestions.gen_suppressions = GenSuppressions::kBlock;
  time_format("text --gen-suppressions",
              [&](std::ostream& out) { render_text(report, out, suggestions); });
  time_format("json", [&](std::ostream& out) { render_json(report, out, "bench"); });
  if (getenv("RENDER_BENCH_SPLIT") != nullptr) {
    auto start = std::chrono::steady_clock::now();
    auto model = to_json(report, "bench");
    auto built = std::chrono::steady_clock::now();
    std::string dumped_text = model.dump(2);
    auto dumped = std::chrono::steady_clock::now();
    auto suggest_start = std::chrono::steady_clock::now();
    size_t entries = 0;
    for (const ProcessReport& p : report.processes) entries += suggest_suppressions(p).leaks.size();
    double suggest =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - suggest_start).count();
    std::cout << "suggestions " << suggest << " s (" << entries << ")\n";
    std::cout << "json build " << std::chrono::duration<double>(built - start).count()
              << " s, dump " << std::chrono::duration<double>(dumped - built).count() << " s\n";
  }
  time_format("junit", [&](std::ostream& out) { render_junit(report, out); });
  time_format("collapsed", [&](std::ostream& out) { render_collapsed(report, out); });
  time_format("valgrind xml", [&](std::ostream& out) { render_valgrind_xml(report, out); });
  time_format("sarif", [&](std::ostream& out) { render_sarif(report, out); });
  time_format("pprof", [&](std::ostream& out) { render_pprof(report, out); });
  time_format("speedscope", [&](std::ostream& out) { render_speedscope(report, out); });
  time_format("html", [&](std::ostream& out) { render_html(report, out, "bench"); });
  return 0;
}
