// Property tests of every machine-readable format against the text report: for one report,
// each format lists every leak group of the shown kinds, and its totals per process and kind
// equal the text report's LEAK SUMMARY. Formats: JSON, collapsed stacks, JUnit XML, pprof,
// speedscope.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <tuple>

#include "core/result_names.h"
#include "report/collapsed_renderer.h"
#include "report/json_renderer.h"
#include "report/junit_renderer.h"
#include "report/pprof_renderer.h"
#include "report/pprof_testing.h"
#include "report/process_names.h"
#include "report/speedscope_renderer.h"
#include "report/test_fixtures.h"
#include "report/text_renderer.h"

namespace memtrack::report {
namespace {

using testing::debug_frame;
using testing::group;

// Options of any renderer with show_kinds = kinds.
template <typename Options>
Options showing(LeakKinds kinds) {
  Options options;
  options.show_kinds = kinds;
  return options;
}

struct Totals {
  uint64_t bytes = 0, blocks = 0;
  bool operator==(const Totals&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Totals& t) {
  return out << t.bytes << " bytes in " << t.blocks << " blocks";
}

// (pid, kind phrase) -> totals; zero totals left out.
using KindTotals = std::map<std::pair<uint32_t, std::string>, Totals>;

uint64_t number(const std::string& text) {
  std::string digits;
  for (char c : text) {
    if (c != ',') digits += c;
  }
  return std::stoull(digits);
}

// The text report's LEAK SUMMARY of every process, per kind, limited to `kinds`.
KindTotals text_totals(const Report& report, LeakKinds kinds) {
  std::ostringstream out;
  render_text(report, out, showing<TextOptions>(kinds));
  std::string text = out.str();
  KindTotals totals;
  std::regex kind_line(R"(==(\d+)==\s+(definitely lost|indirectly lost|possibly lost|)"
                       R"(still reachable|unfreed at exit): ([\d,]+) bytes? in ([\d,]+) blocks?)");
  std::regex one_line(R"(==(\d+)== LEAK SUMMARY: ([\d,]+) bytes? in ([\d,]+) blocks? in)");
  std::map<std::string, LeakKind> kind_of = {{"definitely lost", LeakKind::kDefinite},
                                             {"indirectly lost", LeakKind::kIndirect},
                                             {"possibly lost", LeakKind::kPossible},
                                             {"still reachable", LeakKind::kReachable},
                                             {"unfreed at exit", LeakKind::kUnclassified}};
  for (std::sregex_iterator it(text.begin(), text.end(), kind_line), end; it != end; ++it) {
    const std::smatch& m = *it;
    Totals t{number(m[3]), number(m[4])};
    if (kinds.contains(kind_of.at(m[2].str())) && t.bytes + t.blocks > 0) {
      totals[{static_cast<uint32_t>(number(m[1])), m[2].str()}] = t;
    }
  }
  for (std::sregex_iterator it(text.begin(), text.end(), one_line), end; it != end; ++it) {
    const std::smatch& m = *it;
    totals[{static_cast<uint32_t>(number(m[1])), "unfreed at exit"}] = {number(m[2]), number(m[3])};
  }
  EXPECT_FALSE(totals.empty()) << text;
  return totals;
}

std::vector<const LeakGroup*> shown_groups(const ProcessReport& p, LeakKinds kinds) {
  std::vector<const LeakGroup*> groups;
  for (const LeakGroup& g : p.leaks) {
    if (kinds.contains(g.kind) && !g.runtime_internal) groups.push_back(&g);
  }
  return groups;
}

std::string phrase(LeakKind kind) {
  return core::leak_kind_phrase(kind);
}

// The text report's phrase for a kind's JSON name ("definite" -> "definitely lost").
std::string phrase(const std::string& name) {
  for (LeakKind kind : {LeakKind::kDefinite, LeakKind::kIndirect, LeakKind::kPossible,
                        LeakKind::kReachable, LeakKind::kUnclassified}) {
    if (name == core::leak_kind_name(kind)) return phrase(kind);
  }
  ADD_FAILURE() << "not a leak kind: " << name;
  return "";
}

// A second process: a thread's leak (no main on the stack), one in main itself.
ProcessReport second_process() {
  ProcessReport p;
  p.pid = 1300;
  p.ppid = 1234;
  p.command = {"/usr/bin/helper"};
  p.leaks = {
      group(LeakKind::kDefinite, 700, 7,
            {debug_frame(0x401100, "worker_loop", "helper.c", 12, 5),
             testing::symbol_frame(0x7ffff7e3d1f5, testing::kLibc, 0x891f5, "start_thread")}),
      group(LeakKind::kDefinite, 50, 1, {debug_frame(0x401200, "main", "helper.c", 30, 9)}),
      group(LeakKind::kPossible, 64, 2, {debug_frame(0x401300, "main", "helper.c", 31, 9)})};
  Summary& s = p.summary;
  s.of_kind(LeakKind::kDefinite).bytes = 750;
  s.of_kind(LeakKind::kDefinite).blocks = 8;
  s.of_kind(LeakKind::kPossible).bytes = 64;
  s.of_kind(LeakKind::kPossible).blocks = 2;
  return p;
}

// A process whose runtime did no reachability scan: unclassified groups only.
ProcessReport unclassified_process() {
  ProcessReport p;
  p.pid = 1400;
  p.command = {"./plain"};
  p.leaks = {group(LeakKind::kUnclassified, 30, 3, {debug_frame(0x401400, "f", "p.c", 3, 1)}),
             group(LeakKind::kUnclassified, 8, 1, {debug_frame(0x401500, "g", "p.c", 4, 1)})};
  p.summary.of_kind(LeakKind::kUnclassified) = {38, 4};
  return p;
}

Report three_processes() {
  Report r = testing::sample_report();
  r.processes.push_back(second_process());
  r.processes.push_back(unclassified_process());
  return r;
}

class FormatsAgree : public ::testing::TestWithParam<bool> {
 protected:
  LeakKinds kinds() const { return GetParam() ? LeakKinds::all() : kDefaultShownKinds; }
  Report report_ = three_processes();
};

TEST_P(FormatsAgree, Json) {
  auto json = to_json(report_, "1", showing<JsonOptions>(kinds()));
  KindTotals totals;
  for (size_t i = 0; i < report_.processes.size(); ++i) {
    const ProcessReport& p = report_.processes[i];
    const auto& leaks = json["processes"][i]["leaks"];
    std::vector<const LeakGroup*> groups = shown_groups(p, kinds());
    ASSERT_EQ(leaks.size(), groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      EXPECT_EQ(leaks[g]["kind"], core::leak_kind_name(groups[g]->kind));
      EXPECT_EQ(leaks[g]["stack"][0]["function"], groups[g]->stack[0].function);
      Totals& t = totals[{p.pid, phrase(leaks[g]["kind"].get<std::string>())}];
      t.bytes += leaks[g]["bytes"].get<uint64_t>();
      t.blocks += leaks[g]["blocks"].get<uint64_t>();
    }
    EXPECT_EQ(json["processes"][i]["summary"]["leaked_bytes"], p.summary.leaked().bytes);
  }
  EXPECT_EQ(totals, text_totals(report_, kinds()));
}

TEST_P(FormatsAgree, Collapsed) {
  std::ostringstream out;
  render_collapsed(report_, out, showing<CollapsedOptions>(kinds()));
  std::map<uint32_t, uint64_t> bytes;
  std::string text = out.str();
  // The root frame names the process (process_names.h); the names are unique here.
  std::map<std::string, uint32_t> pid_of;
  std::vector<std::string> names = stable_process_names(report_.processes, ProcessNaming::kProgram);
  for (size_t i = 0; i < names.size(); ++i) pid_of[names[i]] = report_.processes[i].pid;
  std::regex line(R"(^([^;]*);(.*) (\d+)$)", std::regex::multiline);
  std::vector<std::tuple<uint32_t, std::string, uint64_t>> lines;
  for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it) {
    lines.emplace_back(pid_of.at((*it)[1]), (*it)[2], number((*it)[3]));
    bytes[std::get<0>(lines.back())] += std::get<2>(lines.back());
  }
  std::map<uint32_t, uint64_t> expected;
  for (const auto& [key, totals] : text_totals(report_, kinds()))
    expected[key.first] += totals.bytes;
  EXPECT_EQ(bytes, expected) << text;
  for (const ProcessReport& p : report_.processes) {
    for (const LeakGroup* g : shown_groups(p, kinds())) {
      std::string leaf = ";" + collapsed_frame(g->stack[0]);
      bool found = false;
      for (const auto& [pid, frames, size] : lines) {
        found |= pid == p.pid && (";" + frames).ends_with(leaf) && size >= g->bytes;
      }
      EXPECT_TRUE(found) << p.pid << leaf << "\n" << text;
    }
  }
}

TEST_P(FormatsAgree, Junit) {
  // JUnit lists the groups that fail a process (--errors-for-leak-kinds), here those shown;
  // the first follows the <failure> tag on its line.
  std::ostringstream out;
  render_junit(report_, out, {.fail_kinds = kinds()});
  std::string xml = out.str();
  KindTotals totals;
  std::regex testcase(
      R"re(<testcase classname="memtrack" name="[^"]*">\s*<properties>\s*<property name="pid" value="(\d+)")re");
  std::regex group_line(R"((?:^|>)([\d,]+) bytes? in ([\d,]+) blocks? (\w+)$)",
                        std::regex::multiline);
  std::vector<std::pair<size_t, uint32_t>> cases;  // offset, pid
  for (std::sregex_iterator it(xml.begin(), xml.end(), testcase), end; it != end; ++it) {
    cases.emplace_back(it->position(), static_cast<uint32_t>(number((*it)[1])));
  }
  ASSERT_EQ(cases.size(), report_.processes.size());
  size_t groups = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    size_t end = i + 1 < cases.size() ? cases[i + 1].first : xml.size();
    std::string part = xml.substr(cases[i].first, end - cases[i].first);
    for (std::sregex_iterator it(part.begin(), part.end(), group_line), last; it != last; ++it) {
      Totals& t = totals[{cases[i].second, phrase((*it)[3].str())}];
      t.bytes += number((*it)[1]);
      t.blocks += number((*it)[2]);
      ++groups;
    }
  }
  size_t expected_groups = 0;
  for (const ProcessReport& p : report_.processes)
    expected_groups += shown_groups(p, kinds()).size();
  EXPECT_EQ(groups, expected_groups) << xml;
  EXPECT_EQ(totals, text_totals(report_, kinds())) << xml;
}

TEST_P(FormatsAgree, Pprof) {
  std::ostringstream out;
  render_pprof(report_, out, showing<PprofOptions>(kinds()));
  auto profile = testing::decode_profile(out.str());
  KindTotals totals;
  for (const auto& sample : profile.sample()) {
    auto pid = static_cast<uint32_t>(testing::num_label_of(profile, sample, "pid"));
    Totals& t = totals[{pid, phrase(testing::label_of(profile, sample, "kind"))}];
    t.blocks += static_cast<uint64_t>(sample.value(0));
    t.bytes += static_cast<uint64_t>(sample.value(1));
  }
  EXPECT_EQ(totals, text_totals(report_, kinds()));
  for (const ProcessReport& p : report_.processes) {
    for (const LeakGroup* g : shown_groups(p, kinds())) {
      bool found = false;
      for (const auto& sample : profile.sample()) {
        std::vector<std::string> names = testing::stack_names(profile, sample);
        found |=
            testing::num_label_of(profile, sample, "pid") == p.pid &&
            testing::label_of(profile, sample, "kind") == core::leak_kind_name(g->kind) &&
            sample.value(1) == static_cast<int64_t>(g->bytes) &&
            (g->stack[0].function.empty() || (!names.empty() && names[0] == g->stack[0].function));
      }
      EXPECT_TRUE(found) << p.pid << " " << g->bytes << " bytes at " << g->stack[0].function;
    }
  }
}

TEST_P(FormatsAgree, Speedscope) {
  auto file = to_speedscope(report_, showing<SpeedscopeOptions>(kinds()));
  KindTotals totals;
  // Each profile is named by its process's stable name (unique here) and the kind.
  std::vector<std::string> names = stable_process_names(report_.processes, ProcessNaming::kProgram);
  std::map<std::string, uint32_t> pid_of;
  for (size_t i = 0; i < names.size(); ++i) pid_of[names[i]] = report_.processes[i].pid;
  std::regex name(R"((\S+) (.*))");
  for (const auto& profile : file["profiles"]) {
    std::smatch m;
    std::string title = profile["name"];
    ASSERT_TRUE(std::regex_match(title, m, name)) << title;
    uint64_t sum = 0;
    for (const auto& weight : profile["weights"]) sum += weight.get<uint64_t>();
    EXPECT_EQ(sum, profile["endValue"].get<uint64_t>()) << title;
    totals[{pid_of.at(m[1].str()), m[2].str()}].bytes = sum;
  }
  KindTotals expected = text_totals(report_, kinds());
  for (auto& [key, t] : expected) t.blocks = 0;  // speedscope weighs bytes only
  EXPECT_EQ(totals, expected);
  for (const ProcessReport& p : report_.processes) {
    for (const LeakGroup* g : shown_groups(p, kinds())) {
      bool found = false;
      for (const auto& profile : file["profiles"]) {
        std::string title = profile["name"];
        if (title != p.command[0].substr(p.command[0].rfind('/') + 1) + " " + phrase(g->kind)) {
          continue;
        }
        for (size_t s = 0; s < profile["samples"].size(); ++s) {
          const auto& sample = profile["samples"][s];
          found |= profile["weights"][s] == g->bytes &&
                   file["shared"]["frames"][sample.back().get<size_t>()]["name"] ==
                       collapsed_frame(g->stack[0]);
        }
      }
      EXPECT_TRUE(found) << p.pid << " " << g->bytes << " bytes";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ShownKinds, FormatsAgree, ::testing::Values(false, true),
                         [](const auto& param) { return param.param ? "All" : "Default"; });

}  // namespace
}  // namespace memtrack::report
