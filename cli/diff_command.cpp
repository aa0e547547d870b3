// memtrack diff and memtrack run --baseline: two reports' leak groups compared
// (report/diff.h), with --fail-on as a CI gate.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/pipeline.h"
#include "report/diff.h"
#include "report/json_renderer.h"

#ifndef MEMTRACK_VERSION
#define MEMTRACK_VERSION "0.0.0"
#endif

namespace memtrack::cli {
namespace {

bool looks_like_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path);
  char c = 0;
  while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
  }
  return c == '{';
}

// A result file, or a directory's memtrack.PID.mtr files.
std::vector<std::string> result_files(const std::string& path) {
  if (!std::filesystem::is_directory(path)) return {path};
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("memtrack.", 0) == 0 && entry.path().extension() == ".mtr") {
      files.push_back(entry.path().string());
    }
  }
  if (files.empty()) throw Error(path + " is a directory without result files (memtrack.PID.mtr)");
  return files;
}

}  // namespace

report::Report load_report(const std::string& path, const Config& config, bool* had_errors) {
  if (!std::filesystem::is_directory(path) && looks_like_json(path)) return read_baseline(path);
  bool errors = false;
  report::Report report =
      build_report(result_files(path), load_suppressions(config), std::nullopt, &errors);
  *had_errors = *had_errors || errors;
  return report;
}

namespace {

bool gate_fails(const report::Diff& diff, Config::FailOn fail_on) {
  switch (fail_on) {
    case Config::FailOn::kNever:
      return false;
    case Config::FailOn::kNew:
      return diff.count(report::DiffStatus::kNew) > 0;
    case Config::FailOn::kGrown:
      return diff.count(report::DiffStatus::kNew) + diff.count(report::DiffStatus::kGrown) > 0;
  }
  return false;
}

void write_json(const report::Diff& diff, std::ostream& out) {
  out << report::diff_to_json(diff, MEMTRACK_VERSION)
             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
      << '\n';
}

}  // namespace

report::Report read_baseline(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path);
  return report::read_json_report(in, path);
}

bool check_baseline(const report::Report& baseline, const report::Report& report,
                    const Config& config) {
  report::Diff diff = report::diff_reports(baseline, report, config.show_leak_kinds);
  std::cerr << "memtrack: compared with the baseline " << config.baseline << ":\n";
  report::render_diff_text(diff, std::cerr);
  return gate_fails(diff, config.fail_on);
}

int diff_command(const Config& config) {
  bool had_errors = false;
  report::Report base = load_report(config.baseline, config, &had_errors);
  report::Report now = load_report(config.diff_new, config, &had_errors);
  report::Diff diff = report::diff_reports(base, now, report::kDefaultShownKinds);
  if (config.json_file == "-") {
    write_json(diff, std::cout);
  } else {
    report::render_diff_text(diff, std::cout);
  }
  if (!config.json_file.empty() && config.json_file != "-") {
    std::ofstream out(config.json_file, std::ios::trunc);
    if (!out) throw Error("cannot write " + config.json_file);
    write_json(diff, out);
  }
  if (had_errors) return kExitToolFailed;
  return gate_fails(diff, config.fail_on) ? kExitGateFailed : 0;
}

}  // namespace memtrack::cli
