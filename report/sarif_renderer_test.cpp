// Tests of the SARIF log (report/sarif_renderer.h); the CLI tests validate it with the SARIF
// multitool.
#include "report/sarif_renderer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

using nlohmann::json;

json sarif(const Report& report, LeakKinds shown = kDefaultShownKinds) {
  SarifOptions options;
  options.show_kinds = shown;
  options.version = "1.2.3";
  options.source_root = "/work/src";
  std::ostringstream out;
  render_sarif(report, out, options);
  return json::parse(out.str());
}

TEST(SarifRenderer, ToolRulesAndRun) {
  json log = sarif(testing::sample_report());
  EXPECT_EQ(log["version"], "2.1.0");
  const json& run = log["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "memtrack");
  EXPECT_EQ(run["tool"]["driver"]["version"], "1.2.3");
  const json& rules = run["tool"]["driver"]["rules"];
  ASSERT_EQ(rules.size(), sarif_rule_ids().size());
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(rules[i]["id"], sarif_rule_ids()[i]);
    EXPECT_FALSE(rules[i]["shortDescription"]["text"].get<std::string>().empty());
    EXPECT_FALSE(rules[i]["fullDescription"]["text"].get<std::string>().empty());
    EXPECT_FALSE(rules[i]["help"]["markdown"].get<std::string>().empty());
  }
  EXPECT_EQ(run["originalUriBaseIds"]["SRCROOT"]["uri"], "file:///work/src/");
}

TEST(SarifRenderer, OneResultPerShownGroupAndError) {
  json log = sarif(testing::sample_report());
  const json& results = log["runs"][0]["results"];
  // definite, possible, indirect (reachable hidden), then 3 misuse errors.
  ASSERT_EQ(results.size(), 6u);
  EXPECT_EQ(results[0]["ruleId"], "definite-leak");
  EXPECT_EQ(results[0]["level"], "error");
  EXPECT_EQ(results[0]["message"]["text"],
            "4,096 bytes in 1 block definitely lost (and 96 bytes in 2 blocks indirectly lost "
            "through it), allocated in read_config (leaky.c:37)");
  EXPECT_EQ(results[0]["properties"]["bytes"], 4096);
  EXPECT_EQ(results[1]["ruleId"], "possible-leak");
  EXPECT_EQ(results[2]["ruleId"], "indirect-leak");
  EXPECT_EQ(results[3]["ruleId"], "double-free");
  EXPECT_EQ(results[3]["stacks"].size(), 3u);  // bad call, first free, allocation
  EXPECT_EQ(results[4]["ruleId"], "invalid-free");
  EXPECT_EQ(results[5]["ruleId"], "mismatched-free");
  EXPECT_EQ(results[5]["ruleIndex"], 7);
  EXPECT_EQ(sarif(testing::sample_report(), LeakKinds::all())["runs"][0]["results"].size(), 7u);
}

TEST(SarifRenderer, LocationIsTheAllocationSiteRelativeToSrcroot) {
  Report report = testing::sample_report();
  report.processes[0].leaks[0].stack[0].file = "/work/src/lib/read config.c";
  json result = sarif(report)["runs"][0]["results"][0];
  const json& physical = result["locations"][0]["physicalLocation"];
  EXPECT_EQ(physical["artifactLocation"]["uri"], "lib/read%20config.c");
  EXPECT_EQ(physical["artifactLocation"]["uriBaseId"], "SRCROOT");
  EXPECT_EQ(physical["region"]["startLine"], 37);
  EXPECT_EQ(physical["region"]["startColumn"], 45);
  // The code flow: main first, the allocation last; the stack innermost first.
  const json& flow = result["codeFlows"][0]["threadFlows"][0]["locations"];
  ASSERT_EQ(flow.size(), 3u);
  EXPECT_EQ(flow[0]["location"]["message"]["text"], "main");
  EXPECT_EQ(flow[2]["location"]["message"]["text"], "read_config");
  EXPECT_FALSE(result.contains("stacks"));  // the code flow's frames, only once
  // A file outside the root: an absolute file URI.
  report.processes[0].leaks[0].stack[0].file = "/opt/vendor/src/config.c";
  json outside = sarif(report)["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
  EXPECT_EQ(outside["artifactLocation"]["uri"], "file:///opt/vendor/src/config.c");
  EXPECT_FALSE(outside["artifactLocation"].contains("uriBaseId"));
}

TEST(SarifRenderer, SiteSkipsSystemLibrariesAndHeaders) {
  Report report;
  ProcessReport p;
  p.leaks = {testing::group(
      LeakKind::kDefinite, 10, 1,
      {testing::symbol_frame(0x7000, testing::kLibc, 0x10, "strdup"),
       testing::debug_frame(0x555555555200, "copy_name", "/work/src/name.c", 8, 3)})};
  p.leaks[0].stack[0].file = "/usr/src/glibc/string/strdup.c";
  report.processes.push_back(p);
  json result = sarif(report)["runs"][0]["results"][0];
  EXPECT_EQ(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "name.c");
  // An inlined libstdc++ header in the program comes after a program file outside the root.
  report.processes[0].leaks[0].stack[0] =
      testing::debug_frame(0x555555555100, "std::__new_allocator<int>::allocate",
                           "/usr/include/c++/12/bits/new_allocator.h", 137, 48, true);
  report.processes[0].leaks[0].stack[1].file = "/opt/name.c";
  result = sarif(report)["runs"][0]["results"][0];
  EXPECT_EQ(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "file:///opt/name.c");
  EXPECT_EQ(result["message"]["text"],
            "10 bytes in 1 block definitely lost, allocated in "
            "copy_name (name.c:8)");
}

TEST(SarifRenderer, FingerprintsIgnoreLinesAddressesAndDirectories) {
  std::vector<Frame> stack = testing::sample_process().leaks[0].stack;
  std::string base = sarif_fingerprint("definite-leak", stack);
  EXPECT_EQ(base.size(), 16u);
  std::vector<Frame> moved = stack;
  for (Frame& frame : moved) {
    frame.line += 7;
    frame.address += 0x40;
    if (!frame.file.empty()) frame.file = "/elsewhere/" + frame.file;
  }
  EXPECT_EQ(sarif_fingerprint("definite-leak", moved), base);
  EXPECT_NE(sarif_fingerprint("possible-leak", stack), base);
  std::vector<Frame> renamed = stack;
  renamed[0].function = "load_config";
  EXPECT_NE(sarif_fingerprint("definite-leak", renamed), base);
  EXPECT_NE(sarif_fingerprint("definite-leak", stack, 1), base);
  // Frames below main are not part of it.
  std::vector<Frame> cut(stack.begin(), stack.begin() + 3);
  EXPECT_EQ(sarif_fingerprint("definite-leak", cut), base);
}

TEST(SarifRenderer, DescriptorsOneResultEach) {
  Report report;
  report.processes.push_back(testing::with_resources(testing::sample_process()));
  json results = sarif(report)["runs"][0]["results"];
  std::vector<json> open;
  for (const json& r : results) {
    if (r["ruleId"] == "descriptor-left-open") open.push_back(r);
  }
  ASSERT_EQ(open.size(), 3u);
  EXPECT_EQ(open[0]["message"]["text"],
            "Descriptor 3 left open: file /var/log/app.log, open(O_WRONLY|O_CREAT|O_APPEND), "
            "opened in open_logs (server.c:70)");
  EXPECT_NE(open[0]["partialFingerprints"]["memtrackStack/v1"],
            open[1]["partialFingerprints"]["memtrackStack/v1"]);
  EXPECT_EQ(open[2]["properties"]["fd"], 7);
}

TEST(SarifRenderer, InvalidUtf8IsReplaced) {
  Report report = testing::sample_report();
  report.processes[0].leaks[0].stack[0].function = "bad\xff name";
  std::ostringstream out;
  render_sarif(report, out);
  EXPECT_NO_THROW(json::parse(out.str()));
}

}  // namespace
}  // namespace memtrack::report
