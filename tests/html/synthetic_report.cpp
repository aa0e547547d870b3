// Writes the HTML report of a synthetic process for the page's timing measurement: GROUPS leak
// groups (default 10,000), each with FRAMES frames of its own (default 10) above a shared main,
// so GROUPS * FRAMES unique frames, with file:line on every frame and sizes that differ.
// Usage: html_synthetic_report OUT.html [GROUPS [FRAMES]]
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "report/build_report.h"
#include "report/html_renderer.h"

using memtrack::Frame;
using namespace memtrack::report;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: html_synthetic_report OUT.html [GROUPS [FRAMES]]\n";
    return 2;
  }
  uint64_t groups = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10000;
  uint64_t frames = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 10;
  ProcessReport p;
  p.pid = 4242;
  p.ppid = 1;
  p.command = {"./synthetic", "--groups=" + std::to_string(groups)};
  p.tracks_resources = true;
  uint64_t address = 0x555555560000;
  for (uint64_t g = 0; g < groups; ++g) {
    LeakGroup group;
    group.kind = g % 7 == 0   ? LeakKind::kPossible
                 : g % 5 == 0 ? LeakKind::kIndirect
                              : LeakKind::kDefinite;
    group.blocks = 1 + (g * 37) % 11;
    group.bytes = group.blocks * (16 + (g * 7919) % 4096);
    for (uint64_t f = 0; f < frames; ++f) {
      Frame frame;
      frame.address = address += 0x10;
      frame.module = "/opt/synthetic/bin/synthetic";
      frame.module_offset = address - 0x555555554000;
      frame.function = "ns" + std::to_string(f) + "::Handler<std::map<int, std::string>>::step_" +
                       std::to_string(g) + "(Request const&)";
      frame.file = "/src/synthetic/module_" + std::to_string(g % 97) + ".cpp";
      frame.line = static_cast<int>(10 + (g * frames + f) % 900);
      frame.column = 5;
      group.stack.push_back(frame);
    }
    Frame main_frame;
    main_frame.address = 0x555555555100;
    main_frame.module = "/opt/synthetic/bin/synthetic";
    main_frame.module_offset = 0x1100;
    main_frame.function = "main";
    main_frame.file = "/src/synthetic/main.cpp";
    main_frame.line = 12;
    group.stack.push_back(main_frame);
    p.leaks.push_back(std::move(group));
  }
  std::stable_sort(p.leaks.begin(), p.leaks.end(), leak_group_before);
  for (const LeakGroup& group : p.leaks) {
    Summary& s = p.summary;
    s.of_kind(group.kind).add(group.bytes, group.blocks);
    s.allocations += group.blocks;
    s.bytes_allocated += group.bytes;
  }
  Report report;
  report.processes.push_back(std::move(p));
  std::ofstream out(argv[1]);
  render_html(report, out, "synthetic");
  return out ? 0 : 1;
}
