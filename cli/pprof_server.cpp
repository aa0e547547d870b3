// memtrack-ui --pprof-server: the HTTP side of memtrack run --pprof-http (pprof_server.h).
// Each request takes a snapshot of the program (request_snapshot, as memtrack snapshot does:
// one leak scan, which stops the program's threads for its duration), one at a time.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "cli/commands.h"
#include "cli/pipeline.h"
#include "cli/pprof_server.h"
#include "report/pprof_renderer.h"

namespace memtrack::cli {
namespace {

// The program's whole report now, every kind symbolized.
report::ProcessReport snapshot_of(int pid) {
  std::string path = request_snapshot(static_cast<uint32_t>(pid), 30);
  bool had_errors = false;
  report::Report report = build_report({path}, report::Suppressions{}, std::nullopt, &had_errors);
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  if (had_errors || report.processes.empty()) {
    throw Error("the snapshot of process " + std::to_string(pid) + " could not be read");
  }
  return std::move(report.processes.front());
}

// Resident memory of `pid` in bytes, from /proc/PID/statm; 0 if unreadable.
uint64_t resident_bytes(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/statm");
  uint64_t size = 0;
  uint64_t resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Prometheus' text exposition format, version 0.0.4.
std::string metrics_text(int pid, const report::ProcessReport& process) {
  const report::Summary& s = process.summary;
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help,
                    std::initializer_list<std::pair<std::string, uint64_t>> values) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    for (const auto& [labels, value] : values) {
      out += fmt::format("{}{{pid=\"{}\"{}}} {}\n", name, pid, labels, value);
    }
  };
  uint64_t blocks = s.runtime_internal.blocks + s.suppressed.blocks;
  for (const report::Amount& kind : s.kinds) blocks += kind.blocks;
  metric("memtrack_heap_live_bytes", "gauge", "Bytes of the blocks the program holds now.",
         {{"", s.live_bytes}});
  metric("memtrack_heap_live_blocks", "gauge", "Blocks the program holds now.", {{"", blocks}});
  metric("memtrack_heap_peak_bytes", "gauge", "Largest number of bytes held at one time.",
         {{"", s.peak_bytes}});
  metric("memtrack_leaked_bytes", "gauge",
         "Bytes the leak scan of this scrape found lost, by kind (memcheck's categories).",
         {{",kind=\"definite\"", s.of_kind(report::LeakKind::kDefinite).bytes},
          {",kind=\"indirect\"", s.of_kind(report::LeakKind::kIndirect).bytes},
          {",kind=\"possible\"", s.of_kind(report::LeakKind::kPossible).bytes}});
  metric("memtrack_reachable_bytes", "gauge", "Bytes still reachable at this scrape's scan.",
         {{"", s.of_kind(report::LeakKind::kReachable).bytes}});
  metric("memtrack_allocations_total", "counter", "Allocation calls since the start.",
         {{"", s.allocations}});
  metric("memtrack_frees_total", "counter", "Frees since the start.", {{"", s.frees}});
  metric("memtrack_allocated_bytes_total", "counter", "Bytes allocated since the start.",
         {{"", s.bytes_allocated}});
  metric("process_resident_memory_bytes", "gauge", "Resident memory of the program (RSS).",
         {{"", resident_bytes(pid)}});
  return out;
}

}  // namespace

int pprof_server_main(const std::string& host, int port) {
  httplib::Server server;
  std::atomic<int> program{0};
  std::mutex one_at_a_time;
  // A snapshot of the program, or the HTTP error that says why there is none.
  auto with_snapshot = [&](httplib::Response& res, const auto& respond) {
    int pid = program.load();
    if (pid == 0) {
      res.status = 503;
      res.set_content("memtrack: the program has not started yet\n", "text/plain");
      return;
    }
    std::lock_guard<std::mutex> lock(one_at_a_time);
    try {
      respond(pid, snapshot_of(pid));
    } catch (const std::exception& e) {
      res.status = 503;
      res.set_content(std::string("memtrack: ") + e.what() + "\n", "text/plain");
    }
  };
  server.Get("/debug/pprof/heap", [&](const httplib::Request&, httplib::Response& res) {
    with_snapshot(res, [&](int, const report::ProcessReport& process) {
      report::Report report;
      report.processes.push_back(process);
      report::PprofOptions options;
      options.show_kinds = report::LeakKinds::all();
      options.in_use = true;
      options.version = MEMTRACK_VERSION;
      std::ostringstream out;
      report::render_pprof(report, out, options);
      res.set_content(out.str(), "application/octet-stream");
    });
  });
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    with_snapshot(res, [&](int pid, const report::ProcessReport& process) {
      res.set_content(metrics_text(pid, process), "text/plain; version=0.0.4");
    });
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("memtrack: /debug/pprof/heap (pprof), /metrics (Prometheus)\n", "text/plain");
  });
  int bound =
      port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : 0);
  if (bound <= 0) {
    std::printf(
        "error: cannot listen on %s:%d (is the port in use, or the address not this "
        "machine's?)\n",
        host.c_str(), port);
    std::fflush(stdout);
    return kExitToolFailed;
  }
  std::printf("listening %d\n", bound);
  std::fflush(stdout);
  std::thread listener([&server] { server.listen_after_bind(); });
  int pid = 0;
  if (std::scanf("%d", &pid) == 1 && pid > 0) program.store(pid);
  char byte = 0;
  while (read(0, &byte, 1) > 0) {
  }
  server.stop();
  listener.join();
  return 0;
}

}  // namespace memtrack::cli
