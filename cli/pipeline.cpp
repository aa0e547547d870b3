// Result files -> Report (symbolized, suppressions applied), and the exit-status policy.
#include "cli/pipeline.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli/lsan_environment.h"
#include "report/build_report.h"
#include "report/leak_kinds.h"
#include "report/process_order.h"
#include "report/result_reader.h"
#include "report/suppressions.h"
#include "symbolize/symbolizer.h"

namespace memtrack::cli {
namespace {

// waitpid's status is authoritative, but it cannot tell _exit from exit: keep the runtime's
// record when both agree on the status.
void merge_exit(const report::ExitInfo& waited, report::ExitInfo& recorded) {
  bool same_status = waited.how == report::ExitInfo::How::kExit &&
                     (recorded.how == report::ExitInfo::How::kExit ||
                      recorded.how == report::ExitInfo::How::kUnderscoreExit) &&
                     recorded.code == waited.code;
  if (!same_status) recorded = waited;
}

}  // namespace

// Processes of one program (fork children) share their module map; they share a symbolizer
// so each address is symbolized once.
std::string module_key(const std::vector<RawModule>& modules) {
  std::string key;
  for (const RawModule& m : modules) {
    key += m.path + "@" + std::to_string(m.load_bias) + (m.unloaded ? "u;" : ";");
  }
  return key;
}

namespace {

// Module paths as the program saw them, moved under `sysroot` where the file exists there
// (qemu-user's -L maps the program's /lib to ROOT/lib the same way).
void use_sysroot(const std::string& sysroot, std::vector<RawModule>& modules) {
  for (RawModule& m : modules) {
    if (!m.path.starts_with("/")) continue;  // the vDSO
    std::string moved = sysroot + m.path;
    if (std::filesystem::is_regular_file(moved)) m.path = std::move(moved);
  }
}

}  // namespace

report::LeakKinds stack_kinds_to_symbolize(const Config& config) {
  // Suggested suppressions (--gen-suppressions, JSON, HTML) single a group out against every
  // other group's frames; valgrind's XML numbers loss records over all groups; the baseline
  // check compares stacks.
  if (!config.baseline.empty() || config.gen_suppressions != report::GenSuppressions::kNo ||
      !config.json_file.empty() || !config.html_file.empty() || !config.xml_file.empty()) {
    return report::LeakKinds::all();
  }
  report::LeakKinds kinds = report::kDefaultShownKinds;
  if (config.show_leak_kinds.contains(report::LeakKind::kReachable) ||
      config.errors_for_leak_kinds.contains(report::LeakKind::kReachable)) {
    kinds = kinds.with(report::LeakKind::kReachable);
  }
  return kinds;
}

report::Suppressions load_suppressions(const Config& config) {
  report::Suppressions all;
  for (const std::string& path : config.suppressions) all.append(report::Suppressions::load(path));
  return all;
}

report::Report build_report(const std::vector<std::string>& result_files,
                            const report::Suppressions& suppressions,
                            const std::optional<MainProcess>& main, bool* had_errors,
                            const std::string& sysroot, report::LeakKinds stack_kinds) {
  *had_errors = false;
  std::vector<report::ResultFile> files;
  for (const std::string& path : result_files) {
    try {
      files.push_back(report::read_result_file(path));
      if (!sysroot.empty()) use_sysroot(sysroot, files.back().modules);
    } catch (const Error& e) {
      std::cerr << "memtrack: error: " << e.what() << "\n";
      *had_errors = true;
    }
  }
  uint32_t main_pid = main ? main->pid : 0;
  report::sort_by_start(files, main_pid);
  report::Report report;
  if (main && (files.empty() || files.front().pid != main_pid)) {
    report.processes.push_back(missing_main_report(*main));
  }
  std::map<std::string, std::unique_ptr<symbolize::Symbolizer>> symbolizers;
  for (report::ResultFile& file : files) {
    auto& symbolizer = symbolizers[module_key(file.modules)];
    if (!symbolizer) symbolizer = std::make_unique<symbolize::Symbolizer>(file.modules);
    if (main && file.pid == main_pid) merge_exit(main->exit, file.exit);
    // A program written for LeakSanitizer may bring suppressions of its own.
    std::vector<std::string> lsan_notes;
    std::optional<report::Suppressions> own;
    if (!file.lsan_default_options.empty() || !file.lsan_default_suppressions.empty()) {
      own = with_program_lsan_defaults(file, suppressions, &lsan_notes);
    }
    report.processes.push_back(report::build_process_report(
        file,
        [&](uint64_t address, bool is_return) -> const std::vector<Frame>& {
          return symbolizer->symbolize(address, is_return);
        },
        symbolizer->notes(), own ? *own : suppressions, stack_kinds,
        [&](uint64_t address) { return symbolizer->variable_location(address); }));
    std::vector<std::string>& notes = report.processes.back().notes;
    notes.insert(notes.end(), lsan_notes.begin(), lsan_notes.end());
  }
  return report;
}

int exit_status(const report::Report& report, const Config& config, int program_status) {
  if (config.error_exitcode == 0) return program_status;
  for (const report::ProcessReport& p : report.processes) {
    if (!p.errors.empty()) return config.error_exitcode;
    if (config.error_for_fds && !p.resource_sites.empty()) return config.error_exitcode;
    if (config.error_for_no_data &&
        ((!p.has_leak_data && !p.no_data_expected) || p.malloc_unseen)) {
      return config.error_exitcode;
    }
    if (report::has_leaks_of_kinds(p, config.errors_for_leak_kinds)) return config.error_exitcode;
  }
  return program_status;
}

}  // namespace memtrack::cli
