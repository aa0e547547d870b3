// Tests for the JSON report: a golden document, every field checked against the table in
// docs/json-schema.md (presence and type, in both directions), and the exit shapes.
#include "report/json_renderer.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include <gtest/gtest.h>

#include "report/live_report.h"
#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

using nlohmann::ordered_json;
using testing::sample_process;
using testing::sample_report;

// ---- The field table of docs/json-schema.md ----

struct FieldSpec {
  std::string type;  // object, object or null, array, string, hex string, integer, boolean
  bool optional = false;
};

std::string read_schema_doc() {
  std::ifstream in(std::string(MEMTRACK_SOURCE_DIR) + "/docs/json-schema.md");
  EXPECT_TRUE(in) << "cannot read docs/json-schema.md";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The exit report's table, or with `live` the live reports' one (its paths start with '@').
std::map<std::string, FieldSpec> load_documented_fields(bool live = false) {
  std::istringstream in(read_schema_doc());
  std::map<std::string, FieldSpec> fields;
  const std::regex row(R"(^\| `([^`]+)` \| ([a-z ]+?)(, optional)? \|)");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    std::string path = m[1];
    if ((path[0] == '@') != live) continue;
    fields[live ? path.substr(1) : path] = FieldSpec{m[2], m[3].matched};
  }
  return fields;
}

// "the elements of `A` have exactly the fields of `B`" (line breaks allowed): A -> B.
std::vector<std::pair<std::string, std::string>> load_documented_aliases() {
  std::string text = std::regex_replace(read_schema_doc(), std::regex(R"(\s+)"), " ");
  const std::regex same(R"(elements of `([^`]+)` have exactly the fields of `([^`]+)`)");
  std::vector<std::pair<std::string, std::string>> aliases;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), same); it != std::sregex_iterator();
       ++it) {
    aliases.emplace_back((*it)[1], (*it)[2]);
  }
  return aliases;
}

bool has_type(const ordered_json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "object or null") return v.is_object() || v.is_null();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "integer") return v.is_number_unsigned() || (v.is_number_integer() && v >= 0);
  if (type == "signed integer") return v.is_number_integer();
  if (type == "hex string") {
    return v.is_string() && std::regex_match(v.get<std::string>(), std::regex("0x[0-9a-f]+"));
  }
  ADD_FAILURE() << "undocumented type " << type;
  return false;
}

// Walks a document and records every problem; `seen` collects the documented paths met.
class SchemaChecker {
 public:
  explicit SchemaChecker(std::map<std::string, FieldSpec> fields)
      : fields_(std::move(fields)), aliases_(load_documented_aliases()) {}

  void check(const ordered_json& value) { walk(value, ""); }
  const std::vector<std::string>& errors() const { return errors_; }
  std::vector<std::string> never_seen() const {
    std::vector<std::string> out;
    for (const auto& [path, spec] : fields_) {
      if (!seen_.count(path)) out.push_back(path);
    }
    return out;
  }

 private:
  // Elements documented once for several arrays (suppressed[] as leaks[], the frames of the
  // errors' stacks as leaks[].stack[]), followed until none applies (checks[] as
  // processes[], whose errors' stacks are again leaks[].stack[]).
  std::string documented_path(std::string path) const {
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& [from, to] : aliases_) {
        if (path == from || path.starts_with(from + ".")) {
          path.replace(0, from.size(), to);
          changed = true;
        }
      }
    }
    return path;
  }

  void check_field(const ordered_json& value, const std::string& path) {
    auto it = fields_.find(documented_path(path));
    if (it == fields_.end()) {
      errors_.push_back("undocumented field " + path);
      return;
    }
    seen_.insert(it->first);
    if (!has_type(value, it->second.type)) {
      errors_.push_back(path + " is not of type " + it->second.type + ": " + value.dump());
    }
  }

  void check_required(const ordered_json& object, const std::string& path) {
    std::string prefix = documented_path(path) + (path.empty() ? "" : ".");
    for (const auto& [field, spec] : fields_) {
      if (spec.optional || !field.starts_with(prefix)) continue;
      std::string key = field.substr(prefix.size());
      if (key.find_first_of(".[") != std::string::npos) continue;  // deeper level
      if (!object.contains(key)) errors_.push_back("missing field " + prefix + key);
    }
  }

  void walk(const ordered_json& value, const std::string& path) {
    if (value.is_object()) {
      check_required(value, path);
      for (const auto& [key, child] : value.items()) {
        std::string child_path = path.empty() ? key : path + "." + key;
        check_field(child, child_path);
        walk(child, child_path);
      }
    } else if (value.is_array()) {
      for (const ordered_json& element : value) {
        std::string element_path = path + "[]";
        // Elements that are objects are described by their fields' rows.
        if (!element.is_object()) check_field(element, element_path);
        walk(element, element_path);
      }
    }
  }

  std::map<std::string, FieldSpec> fields_;
  std::vector<std::pair<std::string, std::string>> aliases_;
  std::set<std::string> seen_;
  std::vector<std::string> errors_;
};

// Processes covering all four exit shapes, a suppressed group and every optional field.
Report schema_coverage_report() {
  Report r = sample_report();
  ProcessReport p = sample_process();
  p.exit.how = ExitInfo::How::kUnderscoreExit;
  p.exit.code = 3;
  r.processes.push_back(p);
  p.exit.how = ExitInfo::How::kSignal;
  p.exit.signal = 11;
  r.processes.push_back(p);
  p.exit.how = ExitInfo::How::kUnknown;
  r.processes.push_back(p);
  p.exit.how = ExitInfo::How::kRunning;
  r.processes.push_back(p);
  r.processes.push_back(testing::with_resources(sample_process()));
  ProcessReport no_data;  // no result file: "no_data" says why
  no_data.pid = 4243;
  no_data.has_leak_data = false;
  no_data.no_data_reason = "no_result_file";
  no_data.notes = {"no leak data: it ended without writing its report"};
  r.processes.push_back(no_data);
  ProcessReport crashed = sample_process();  // a crash section, heap memory errors
  crashed.pid = 4244;
  ErrorReport uaf = crashed.errors.front();
  uaf.kind = ErrorKind::kInvalidWrite;
  uaf.detail = true;  // block_freed
  crashed.errors.push_back(uaf);
  ErrorReport edge = uaf;
  edge.kind = ErrorKind::kWriteOutsideBlock;  // found_at
  crashed.errors.push_back(edge);
  crashed.exit.how = ExitInfo::How::kSignal;
  crashed.exit.signal = 11;
  CrashReport crash;
  crash.signal = 11;
  crash.code = 1;
  crash.has_address = true;
  crash.address = 0x10;
  crash.tid = 4245;
  crash.stack = crashed.leaks[0].stack;
  crashed.crash = crash;
  r.processes.push_back(crashed);
  ProcessReport used = sample_process();  // suppressions that matched (-v)
  used.pid = 4246;
  used.used_suppressions = {UsedSuppression{"leak:vendor_init", "app.supp:3", 1, 100, 1, 0}};
  r.processes.push_back(used);
  ProcessReport held = sample_process();  // --show-retainers
  held.pid = 4247;
  Retention retention;
  Retainer global;
  global.symbol = "g_table";
  global.module = "/usr/bin/app";
  global.declared = {"/src/app/table.c", 12};
  global.retained_bytes = 1600;
  global.retained_blocks = 33;
  retention.retainers.push_back(global);
  retention.groups.push_back({7, core::result::HolderKind::kSite, 8, 0, 1536, 32, 1536, 32, 1});
  retention.groups.push_back({8, core::result::HolderKind::kRetainer, 0, 0, 64, 1, 1600, 33});
  retention.sites[7] = held.leaks[0].stack;
  retention.sites[8] = held.leaks[0].stack;
  held.retention = retention;
  BlockRetention block;  // memtrack snapshot --retainers ADDR
  block.address = 0x5010;
  block.found = true;
  block.start = 0x5000;
  block.size = 48;
  block.stack = held.leaks[0].stack;
  block.retained_bytes = 48;
  block.retained_blocks = 1;
  BlockLink holder;
  holder.start = 0x4000;
  holder.size = 64;
  holder.stack = held.leaks[0].stack;
  BlockLink root;
  root.kind = core::result::LinkKind::kRetainer;
  root.root = "global g_table (app)";
  root.offset = 0x601040;
  block.chain = {holder, root};
  holder.offset = 8;
  block.referrers = {holder};
  held.block_retention = block;
  r.processes.push_back(held);
  ProcessReport sampled = sample_process();  // the sampled mode: estimates by site
  sampled.pid = 4247;
  sampled.sample_interval = 524288;
  sampled.sampled_allocations = 12;
  sampled.leaks[0].sampling = LeakGroup::Sampling::kEstimated;
  sampled.leaks[0].estimated_bytes = 4100000;
  sampled.leaks[0].estimated_blocks = 830;
  LeakGroup not_sampled = sampled.leaks[0];
  not_sampled.sampling = LeakGroup::Sampling::kNotSampled;
  not_sampled.estimated_bytes = not_sampled.estimated_blocks = 0;
  not_sampled.stack.clear();
  sampled.leaks.push_back(not_sampled);
  sampled.malloc_unseen = true;  // a malloc of the program's own (result file section 16)
  r.processes.push_back(sampled);
  ProcessReport check = sample_process();  // an on-demand leak check
  check.exit.how = ExitInfo::How::kRunning;
  check.occasion = "on-demand leak check 1 (memtrack_do_leak_check)";
  r.checks.push_back(check);
  return r;
}

TEST(JsonSchemaDoc, TableIsReadable) {
  std::map<std::string, FieldSpec> fields = load_documented_fields();
  EXPECT_EQ(fields.size(), 166u);
  EXPECT_EQ(load_documented_fields(true).size(), 30u);
  EXPECT_EQ(fields["processes[].leaks[].stack[].address"].type, "hex string");
  EXPECT_EQ(fields["processes[].errors[].block"].type, "object or null");
  EXPECT_FALSE(fields["processes[].errors[].block"].optional);
  EXPECT_EQ(fields["processes[].summary.error_occurrences"].type, "integer");
  EXPECT_EQ(load_documented_aliases(),
            (std::vector<std::pair<std::string, std::string>>{
                {"processes[].suppressed[]", "processes[].leaks[]"},
                {"processes[].errors[].stack[]", "processes[].leaks[].stack[]"},
                {"processes[].errors[].alloc_stack[]", "processes[].leaks[].stack[]"},
                {"processes[].errors[].free_stack[]", "processes[].leaks[].stack[]"},
                {"processes[].resources[].stack[]", "processes[].leaks[].stack[]"},
                {"processes[].retention.groups[].stack[]", "processes[].leaks[].stack[]"},
                {"processes[].block_retention.referrers[]", "processes[].block_retention.chain[]"},
                {"processes[].block_retention.stack[]", "processes[].leaks[].stack[]"},
                {"processes[].block_retention.chain[].stack[]", "processes[].leaks[].stack[]"},
                {"processes[].retention.groups[].holder_stack[]", "processes[].leaks[].stack[]"},
                {"processes[].crash.stack[]", "processes[].leaks[].stack[]"},
                {"checks[]", "processes[]"},
            }));
  EXPECT_TRUE(fields["processes[].resources"].optional);
  EXPECT_FALSE(fields["processes[].resources[].fd"].optional);
  EXPECT_TRUE(fields["processes[].exit.code"].optional);
  EXPECT_FALSE(fields["processes[].pid"].optional);
  EXPECT_TRUE(fields["processes[].no_data"].optional);
}

TEST(JsonSchemaDoc, OutputMatchesDocumentedFieldsBothWays) {
  for (LeakKinds shown : {kDefaultShownKinds, LeakKinds::all()}) {
    SchemaChecker checker(load_documented_fields());
    checker.check(to_json(schema_coverage_report(), "0.1.0", JsonOptions{shown}));
    EXPECT_EQ(checker.errors(), std::vector<std::string>{});
    EXPECT_EQ(checker.never_seen(), std::vector<std::string>{});
  }
}

// A live report with a first-time site and a growing one: every documented live field.
LiveReport sample_live_report() {
  LiveReport live;
  live.pid = 4242;
  live.command = {"./daemon", "5"};
  live.sequence = 4;
  live.uptime_ms = 4000;
  live.expire_ms = live.interval_ms = 1000;
  live.live_blocks = 90;
  live.live_bytes = 9000;
  live.old_blocks = 81;
  live.old_bytes = 8100;
  live.freed_since_last = 20;
  LiveSiteReport site;
  site.stack = sample_process().leaks[0].stack;
  site.old_blocks = 61;
  site.old_bytes = 6100;
  site.growth_blocks = 20;
  site.growth_bytes = 2000;
  site.growing = true;
  live.sites.push_back(site);
  site.growth_bytes = -100;
  site.growth_blocks = -1;
  site.first_report = true;
  site.growing = false;
  site.freed_since_last = 20;
  live.sites.push_back(site);
  return live;
}

// The same report in the sampled mode: an estimated site and the blocks not sampled.
LiveReport sample_sampled_live_report() {
  LiveReport live = sample_live_report();
  live.sample_interval = 524288;
  live.sites[0].sampling = LeakGroup::Sampling::kEstimated;
  live.sites[0].estimated_blocks = 4100;
  live.sites[0].estimated_bytes = 410000;
  live.sites[0].held_by = "global g_sessions (daemon)";  // --show-retainers
  live.sites[1].sampling = LeakGroup::Sampling::kNotSampled;
  live.sites[1].stack.clear();
  return live;
}

TEST(JsonSchemaDoc, LiveReportMatchesDocumentedFieldsBothWays) {
  std::map<std::string, FieldSpec> fields = load_documented_fields(true);
  for (const auto& [path, spec] : load_documented_fields()) {  // the frames' fields
    const std::string frame = "processes[].leaks[].stack[]";
    if (path.starts_with(frame + ".")) fields["sites[].stack[]" + path.substr(frame.size())] = spec;
  }
  SchemaChecker checker(fields);
  checker.check(live_to_json(sample_live_report(), "0.1.0"));
  checker.check(live_to_json(sample_sampled_live_report(), "0.1.0"));
  EXPECT_EQ(checker.errors(), std::vector<std::string>{});
  EXPECT_EQ(checker.never_seen(), std::vector<std::string>{});
}

TEST(JsonSchemaDoc, CheckerFindsUndocumentedMissingAndMistypedFields) {
  ordered_json doc = to_json(sample_report(), "0.1.0");
  doc["processes"][0]["extra"] = 1;
  doc["processes"][0]["summary"].erase("frees");
  doc["processes"][0]["leaks"][0]["stack"][0]["address"] = "0X1";
  doc["processes"][0]["suppressed"][0]["bytes"] = -1;
  doc["processes"][0]["command"][0] = 5;
  doc["processes"][0]["errors"][0]["block"] = 5;
  doc["processes"][0]["errors"][0]["free_stack"][0].erase("line");
  doc["processes"][0]["errors"][1]["stack"][0]["extra"] = true;
  SchemaChecker checker(load_documented_fields());
  checker.check(doc);
  EXPECT_EQ(checker.errors(),
            (std::vector<std::string>{
                "processes[].command[] is not of type string: 5",
                "missing field processes[].summary.frees",
                "processes[].errors[].block is not of type object or null: 5",
                "missing field processes[].leaks[].stack[].line",
                "undocumented field processes[].errors[].stack[].extra",
                "processes[].leaks[].stack[].address is not of type hex string: \"0X1\"",
                "processes[].suppressed[].bytes is not of type integer: -1",
                "undocumented field processes[].extra",
            }));
}

TEST(JsonSchemaDoc, EmptyReportMatchesToo) {
  SchemaChecker checker(load_documented_fields());
  Report empty;
  empty.processes.emplace_back();  // default process: no command, unknown exit
  checker.check(to_json(empty, ""));
  EXPECT_EQ(checker.errors(), std::vector<std::string>{});
}

TEST(JsonRenderer, ExitShapes) {
  ExitInfo e;
  auto exit_of = [&] {
    ProcessReport p;
    p.exit = e;
    return process_to_json(p)["exit"].dump();
  };
  EXPECT_EQ(exit_of(), R"({"unknown":true})");
  e.how = ExitInfo::How::kExit;
  e.code = 0;
  EXPECT_EQ(exit_of(), R"({"code":0})");
  e.how = ExitInfo::How::kUnderscoreExit;
  e.code = 3;
  EXPECT_EQ(exit_of(), R"({"code":3,"how":"_exit"})");
  e.how = ExitInfo::How::kSignal;
  e.signal = 11;
  EXPECT_EQ(exit_of(), R"({"signal":11})");
}

TEST(JsonRenderer, LargeAddressesKeepAllBits) {
  ProcessReport p;
  LeakGroup g;
  g.stack.push_back(testing::symbol_frame(0xffffffffffffffff, "/x", 0xfedcba9876543210, "f"));
  p.leaks = {g};
  ordered_json frame = process_to_json(p)["leaks"][0]["stack"][0];
  EXPECT_EQ(frame["address"], "0xffffffffffffffff");
  EXPECT_EQ(frame["module_offset"], "0xfedcba9876543210");
}

TEST(JsonRenderer, InvalidUtf8IsReplacedNotThrown) {
  Report r;
  r.processes.emplace_back();
  r.processes[0].command = {"./a\xff"};
  std::ostringstream out;
  EXPECT_NO_THROW(render_json(r, out, "0.1.0"));
  EXPECT_NE(out.str().find("\"./a\xef\xbf\xbd\""), std::string::npos) << out.str();
}

std::vector<std::string> kinds_of(const ordered_json& groups) {
  std::vector<std::string> out;
  for (const ordered_json& g : groups) out.push_back(g["kind"]);
  return out;
}

TEST(JsonRenderer, ShowKindsSelectsListedGroupsNotTotals) {
  ProcessReport p = sample_process();
  LeakGroup unclassified;
  unclassified.bytes = 1;
  unclassified.blocks = 1;
  p.leaks.push_back(unclassified);
  LeakGroup suppressed_reachable;
  suppressed_reachable.kind = LeakKind::kReachable;
  p.suppressed.push_back(suppressed_reachable);

  ordered_json by_default = process_to_json(p);
  EXPECT_EQ(kinds_of(by_default["leaks"]),
            (std::vector<std::string>{"definite", "possible", "indirect", "unclassified"}));
  EXPECT_EQ(kinds_of(by_default["suppressed"]), std::vector<std::string>{"definite"});

  ordered_json all = process_to_json(p, JsonOptions{LeakKinds::all()});
  EXPECT_EQ(kinds_of(all["leaks"]), (std::vector<std::string>{"definite", "reachable", "possible",
                                                              "indirect", "unclassified"}));
  EXPECT_EQ(kinds_of(all["suppressed"]), (std::vector<std::string>{"definite", "reachable"}));

  ordered_json reachable = process_to_json(p, JsonOptions{LeakKinds{LeakKind::kReachable}});
  EXPECT_EQ(kinds_of(reachable["leaks"]), std::vector<std::string>{"reachable"});
  EXPECT_EQ(reachable["leaks"][0]["bytes"], 1024);

  ordered_json none = process_to_json(p, JsonOptions{LeakKinds{}});
  EXPECT_TRUE(none["leaks"].empty());
  EXPECT_TRUE(none["suppressed"].empty());
  // The summary totals every kind whatever is listed.
  EXPECT_EQ(none["summary"], by_default["summary"]);
  EXPECT_EQ(none["summary"]["reachable_bytes"], 1024);
  EXPECT_EQ(none["summary"]["leaked_bytes"], 4336);
}

TEST(JsonRenderer, ErrorsExactly) {
  ProcessReport p;
  p.errors = testing::sample_errors();
  p.errors[0].stack.resize(1);
  p.errors[0].free_stack.resize(1);
  p.errors[0].alloc_stack.clear();
  p.summary.errors = 3;
  p.summary.error_occurrences = 4;
  ordered_json out = process_to_json(p);
  const std::string frame =
      R"({"address":"0x5555555551c4","module":"/work/build/leaky","module_offset":"0x11c4",)"
      R"("function":"free_twice","file":"examples/misuse.c","line":12,"column":3,)"
      R"("inlined":false})";
  const std::string free_frame =
      R"({"address":"0x5555555551a6","module":"/work/build/leaky","module_offset":"0x11a6",)"
      R"("function":"free_once","file":"examples/misuse.c","line":8,"column":3,)"
      R"("inlined":false})";
  EXPECT_EQ(out["errors"][0].dump(),
            R"({"kind":"double_free","address":"0x4a5b040","occurrences":2,)"
            R"x("description":"Double free of 0x4a5b040 (100 bytes)",)x"
            R"("block":{"address":"0x4a5b040","size":100},"alloc_call":"malloc",)"
            R"("free_call":"free","stack":[)" +
                frame + R"(],"alloc_stack":[],"free_stack":[)" + free_frame + "]}");
  ordered_json on_stack = out["errors"][1];
  EXPECT_EQ(on_stack["kind"], "invalid_free");
  EXPECT_EQ(on_stack["address"], "0x7fffffffe0c0");
  EXPECT_EQ(on_stack["description"], "Invalid free of 0x7fffffffe0c0: it points to the stack");
  EXPECT_TRUE(on_stack["block"].is_null());
  EXPECT_EQ(on_stack["alloc_call"], "none");
  EXPECT_EQ(on_stack["alloc_stack"], ordered_json::array());
  ordered_json aligned = out["errors"][2];
  EXPECT_EQ(aligned["kind"], "mismatched_free");
  EXPECT_EQ(aligned["description"],
            "Mismatched free: a block from aligned new released with delete");
  EXPECT_EQ(aligned["alloc_call"], "new");
  EXPECT_EQ(aligned["free_call"], "delete");
  EXPECT_EQ(aligned["alloc_stack"][0]["function"], "make_big()");
  EXPECT_EQ(out["summary"]["errors"], 3);
  EXPECT_EQ(out["summary"]["error_occurrences"], 4);
}

TEST(JsonRenderer, ErrorNamesAndKindsShownDoNotFilterErrors) {
  ErrorReport e;
  e.address = 0x1;
  std::vector<std::tuple<ErrorKind, AllocCall, FreeCall, std::string, std::string, std::string>>
      cases = {
          {ErrorKind::kDoubleFree, AllocCall::kMalloc, FreeCall::kFree, "double_free", "malloc",
           "free"},
          {ErrorKind::kInvalidFree, AllocCall::kNone, FreeCall::kDelete, "invalid_free", "none",
           "delete"},
          {ErrorKind::kMismatchedFree, AllocCall::kNewArray, FreeCall::kDeleteArray,
           "mismatched_free", "new[]", "delete[]"},
          {ErrorKind::kReallocAfterFree, AllocCall::kNew, FreeCall::kRealloc, "realloc_after_free",
           "new", "realloc"},
      };
  for (const auto& [kind, alloc, free, kind_text, alloc_text, free_text] : cases) {
    e.kind = kind;
    e.alloc_call = alloc;
    e.free_call = free;
    ProcessReport p;
    p.errors = {e};
    ordered_json out = process_to_json(p, JsonOptions{LeakKinds{}})["errors"];
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]["kind"], kind_text);
    EXPECT_EQ(out[0]["alloc_call"], alloc_text);
    EXPECT_EQ(out[0]["free_call"], free_text);
    EXPECT_TRUE(out[0]["block"].is_null());
  }
  EXPECT_EQ(process_to_json(ProcessReport{})["errors"], ordered_json::array());
}

TEST(JsonRenderer, IndirectTotalsInEveryGroup) {
  ordered_json groups = process_to_json(sample_process(), JsonOptions{LeakKinds::all()})["leaks"];
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0]["kind"], "definite");
  EXPECT_EQ(groups[0]["indirect_bytes"], 96);
  EXPECT_EQ(groups[0]["indirect_blocks"], 2);
  for (size_t i = 1; i < groups.size(); ++i) {
    EXPECT_EQ(groups[i]["indirect_bytes"], 0) << i;
    EXPECT_EQ(groups[i]["indirect_blocks"], 0) << i;
  }
}

TEST(JsonRenderer, ResourcesExactly) {
  ordered_json out = process_to_json(testing::with_resources(sample_process()));
  ASSERT_EQ(out["resources"].size(), 3u);
  const std::string open_logs_stack =
      R"([{"address":"0x555555555400","module":"/work/build/leaky","module_offset":"0x1400",)"
      R"("function":"open_logs","file":"examples/server.c","line":70,"column":15,)"
      R"("inlined":false},{"address":"0x555555555460","module":"/work/build/leaky",)"
      R"("module_offset":"0x1460","function":"main","file":"examples/server.c","line":90,)"
      R"("column":3,"inlined":false},{"address":"0x7ffff7dd21ca",)"
      R"("module":"/lib/x86_64-linux-gnu/libc.so.6","module_offset":"0x271ca",)"
      R"("function":"__libc_start_call_main","file":"","line":0,"column":0,"inlined":false}])";
  EXPECT_EQ(
      out["resources"][0].dump(),
      R"({"kind":"file","fd":3,"path":"/var/log/app.log","flags":"O_WRONLY|O_CREAT|O_APPEND",)"
      R"("stream":false,"call":"open","suppression":"leak:^open_logs$",)"
      R"("suppression_block":"{\n   memtrack:fd:open_logs\n   memtrack:FdLeak\n)"
      R"(   fun:open_logs\n   fun:main\n}","stack":)" +
          open_logs_stack + "}");
  EXPECT_EQ(out["resources"][1].dump(),
            R"({"kind":"file","fd":4,"path":"/var/log/app.err","flags":"a","stream":true,)"
            R"("call":"fopen","suppression":"leak:^open_logs$",)"
            R"("suppression_block":"{\n   memtrack:fd:open_logs\n   memtrack:FdLeak\n)"
            R"(   fun:open_logs\n   fun:main\n}","stack":)" +
                open_logs_stack + "}");
  ordered_json socket = out["resources"][2];
  EXPECT_EQ(socket["kind"], "socket");
  EXPECT_EQ(socket["path"], "TCP 127.0.0.1:8080 -> 127.0.0.1:40000");
  EXPECT_EQ(socket["flags"], "O_RDWR|O_CLOEXEC");
  EXPECT_EQ(socket["call"], "accept4");
  EXPECT_EQ(socket["stack"][0]["function"], "serve");
  EXPECT_EQ(out["summary"]["open_descriptors"], 3);
  EXPECT_EQ(out["summary"]["suppressed_descriptors"], 1);
  EXPECT_EQ(out["summary"]["untracked_descriptors"], 2);
}

TEST(JsonRenderer, ResourcesOnlyWhenTracked) {
  EXPECT_FALSE(process_to_json(sample_process()).contains("resources"));  // track_fds=0
  ProcessReport none_open;
  none_open.tracks_resources = true;
  EXPECT_EQ(process_to_json(none_open)["resources"], ordered_json::array());
  // Listed whatever --show-leak-kinds says.
  ordered_json out = process_to_json(testing::with_resources(sample_process()), JsonOptions{{}});
  EXPECT_EQ(out["resources"].size(), 3u);
}

// The exact document for testing::sample_report(). After an intended change, regenerate it
// with MEMTRACK_UPDATE_GOLDEN=1 and review the diff.
TEST(JsonRenderer, GoldenSample) {
  const std::string path = std::string(MEMTRACK_SOURCE_DIR) + "/report/testdata/sample_report.json";
  std::ostringstream out;
  render_json(sample_report(), out, "0.1.0");
  if (std::getenv("MEMTRACK_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << out.str();
    GTEST_SKIP() << "updated " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(out.str(), golden.str());
}

}  // namespace
}  // namespace memtrack::report
