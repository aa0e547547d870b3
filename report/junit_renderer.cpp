// The JUnit XML report (see junit_renderer.h and docs/cli.md, "Output formats").
#include "report/junit_renderer.h"

#include <sstream>
#include <string>

#include "core/result_names.h"
#include "report/leak_kinds.h"
#include "report/process_names.h"
#include "report/text_format.h"
#include "report/text_renderer.h"
#include "report/xml_text.h"

namespace memtrack::report {
namespace {

void write_stack(const std::vector<Frame>& stack, std::ostream& out) {
  size_t count = printed_frame_count(stack);
  for (size_t i = 0; i < count; ++i) out << "    #" << i << " " << format_frame(stack[i]) << "\n";
}

// The failure's text: every failing leak group and error with its stack.
std::string failure_text(const ProcessReport& process, LeakKinds kinds) {
  std::ostringstream out;
  for (const LeakGroup& group : process.leaks) {
    if (!kinds.contains(group.kind)) continue;
    out << count_of(group.bytes, "byte", "bytes") << " in "
        << count_of(group.blocks, "block", "blocks") << " " << core::leak_kind_name(group.kind)
        << "\n";
    write_stack(group.stack, out);
  }
  for (const ErrorReport& error : process.errors) {
    out << error_description(error) << "\n";
    write_stack(error.stack, out);
  }
  if (process.crash) {
    out << "killed by " << signal_name(process.crash->signal) << "\n";
    write_stack(process.crash->stack, out);
  }
  return out.str();
}

// "leaks" etc. and the one-line message of a failing process; type "" when it passes.
std::pair<std::string, std::string> failure_of(const ProcessReport& p, LeakKinds kinds) {
  std::string message;
  std::string type;
  auto add = [&](const std::string& what, const char* kind) {
    message += (message.empty() ? "" : "; ") + what;
    if (type.empty()) type = kind;
  };
  if (has_leaks_of_kinds(p, kinds)) {
    add(count_of(p.summary.leaked().bytes, "byte", "bytes") + " leaked in " +
            count_of(p.summary.leaked().blocks, "block", "blocks"),
        "leaks");
  }
  if (!p.errors.empty())
    add(count_of(p.errors.size(), "allocator misuse error", "allocator misuse errors"), "errors");
  if (p.crash) add("crashed (" + signal_name(p.crash->signal) + ")", "crash");
  return {type, message};
}

struct Counts {
  size_t failures = 0, errors = 0, skipped = 0;
};

Counts count_outcomes(const Report& report, LeakKinds kinds) {
  Counts counts;
  for (const ProcessReport& p : report.processes) {
    if (!p.has_leak_data) {
      ++(p.no_data_expected ? counts.skipped : counts.errors);
    } else if (!failure_of(p, kinds).first.empty()) {
      ++counts.failures;
    }
  }
  return counts;
}

// `name`: the process's stable name (process_names.h), so that CI dashboards see the same
// test case in every run; the pids are properties.
void write_testcase(const ProcessReport& p, const std::string& name, LeakKinds kinds,
                    std::ostream& out) {
  out << "    <testcase classname=\"memtrack\" name=\"" << xml_escaped(name) << "\">\n"
      << "      <properties>\n"
      << "        <property name=\"pid\" value=\"" << p.pid << "\"/>\n"
      << "        <property name=\"ppid\" value=\"" << p.ppid << "\"/>\n"
      << "      </properties>\n";
  if (!p.has_leak_data) {
    // A forked copy that ended without a report is no failure: skipped, saying why.
    const char* element = p.no_data_expected ? "skipped" : "error type=\"no_data\"";
    out << "      <" << element << " message=\"no leak data (" << xml_escaped(p.no_data_reason)
        << ")\"/>\n";
  } else if (auto [type, message] = failure_of(p, kinds); !type.empty()) {
    out << "      <failure type=\"" << type << "\" message=\"" << xml_escaped(message) << "\">"
        << xml_escaped(failure_text(p, kinds)) << "</failure>\n";
  }
  out << "    </testcase>\n";
}

}  // namespace

void render_junit(const Report& report, std::ostream& out, const JunitOptions& options) {
  Counts counts = count_outcomes(report, options.fail_kinds);
  std::string totals = "tests=\"" + std::to_string(report.processes.size()) + "\" failures=\"" +
                       std::to_string(counts.failures) + "\" errors=\"" +
                       std::to_string(counts.errors) + "\"";
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"memtrack\" " << totals << ">\n"
      << "  <testsuite name=\"memtrack\" " << totals << " skipped=\"" << counts.skipped << "\">\n";
  std::vector<std::string> names = stable_process_names(report.processes, ProcessNaming::kCommand);
  for (size_t i = 0; i < report.processes.size(); ++i) {
    write_testcase(report.processes[i], names[i], options.fail_kinds, out);
  }
  out << "  </testsuite>\n</testsuites>\n";
}

}  // namespace memtrack::report
