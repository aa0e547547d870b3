// memtrack ui: wires the options to the web server (ui/server.h), giving it the snapshot
// request of memtrack snapshot and the report loading of memtrack diff, so that the browser
// sees the same report model as every renderer.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/live_watcher.h"
#include "cli/pipeline.h"
#include "cli/profile_command.h"
#include "cli/running_profiles.h"
#include "profile/event_reader.h"
#include "report/html_renderer.h"
#include "ui/server.h"

#ifndef MEMTRACK_VERSION
#define MEMTRACK_VERSION "0.0.0"
#endif

extern char** environ;

namespace memtrack::cli {
namespace {

bool is_loopback(const std::string& address) {
  return address == "127.0.0.1" || address == "::1" || address == "localhost";
}

// xdg-open, detached from our terminal output; its failure is reported, not fatal (the URL
// is printed anyway).
void open_browser(const std::string& url) {
  const char* argv[] = {"xdg-open", url.c_str(), nullptr};
  pid_t pid = 0;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  int rc = posix_spawnp(&pid, "xdg-open", &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc == 0) {
    std::thread([pid] { waitpid(pid, nullptr, 0); }).detach();  // no zombie left behind
  } else {
    std::cerr << "memtrack: warning: cannot run xdg-open (" << std::strerror(rc)
              << "): open the URL yourself\n";
  }
}

nlohmann::ordered_json model_of(const report::Report& report) {
  return report::html_model(report, MEMTRACK_VERSION);
}

}  // namespace

int ui_command(const Config& config) {
  for (const std::string& file : config.files) {
    if (!std::filesystem::exists(file)) throw Error("cannot read " + file + ": no such file");
  }
  ui::Backend backend;
  backend.file_names = config.files;
  // A file's view; *had_errors when its errors were printed (a corrupt result file).
  auto read_file = [&config](size_t index, std::optional<uint64_t> from_us,
                             std::optional<uint64_t> to_us, bool* had_errors) {
    const std::string& path = config.files.at(index);
    // A heap profile gets the profile views, analysed for the window chosen on its chart.
    if (!std::filesystem::is_directory(path) && profile::is_profile_file(path)) {
      return profile_page_model(path, config, from_us, to_us);
    }
    report::Report report = load_report(path, config, had_errors);
    nlohmann::ordered_json model = model_of(report);
    // A JSON report is shown as it was written: read back into the model, it would lose
    // what the model does not keep (the totals of its summary). load_report has checked it.
    if (!std::filesystem::is_directory(path)) {
      std::ifstream in(path);
      nlohmann::ordered_json written = nlohmann::ordered_json::parse(in, nullptr, false);
      if (written.is_object() && written.contains("processes")) model["report"] = written;
    }
    return model;
  };
  // Every file is read before the server starts, so that a corrupt or unreadable one is an
  // error here and not a page that fails later. The whole-run views of finished files are
  // kept for the page; a profile still being recorded is read again on each request.
  std::vector<std::optional<nlohmann::ordered_json>> first_views;
  for (size_t index = 0; index < config.files.size(); ++index) {
    const std::string& path = config.files[index];
    bool had_errors = false;
    nlohmann::ordered_json view = read_file(index, std::nullopt, std::nullopt, &had_errors);
    if (had_errors) return kExitToolFailed;  // the errors are on the terminal
    bool growing = !std::filesystem::is_directory(path) && profile::is_profile_file(path) &&
                   profile::unfinished_profile_pid(path).has_value();
    first_views.push_back(growing ? std::nullopt : std::optional(std::move(view)));
  }
  backend.open_file = [&config, read_file, first_views = std::move(first_views)](
                          size_t index, std::optional<uint64_t> from_us,
                          std::optional<uint64_t> to_us) {
    if (!from_us && !to_us && index < first_views.size() && first_views[index]) {
      return *first_views[index];
    }
    bool had_errors = false;
    nlohmann::ordered_json view = read_file(index, from_us, to_us, &had_errors);
    if (had_errors) throw Error("cannot read " + config.files.at(index) + " (see the terminal)");
    return view;
  };
  // The live files stay in the run's result directory until it ends; read again on each
  // request, so every report so far is there, with the growth history of the whole run.
  backend.live = [&config](uint32_t pid) {
    std::vector<nlohmann::ordered_json> mine;
    std::string dir = memtrack_result_dir(pid);
    if (dir.empty()) return mine;
    for (nlohmann::ordered_json& report : read_kept_live_reports(dir, load_suppressions(config))) {
      if (report["pid"] == pid) mine.push_back(std::move(report));
    }
    return mine;
  };

  // Programs under memtrack run --profile: their profiles so far, packed as they grow.
  RunningProfiles running(config);
  backend.records_profile = memtrack_records_profile;
  backend.running_profile = [&running](uint32_t pid, std::optional<uint64_t> from_us,
                                       std::optional<uint64_t> to_us) {
    return running.model(pid, from_us, to_us);
  };
  backend.after_sample = [&running] { running.forget_ended(); };

  backend.snapshot = [&config, live = backend.live](uint32_t pid) {
    std::string path = request_snapshot(pid, config.snapshot_timeout_s);
    bool had_errors = false;
    report::Report report =
        build_report({path}, load_suppressions(config), std::nullopt, &had_errors);
    std::filesystem::remove(path);
    if (had_errors) throw Error("the report of process " + std::to_string(pid) + " is unreadable");
    nlohmann::ordered_json model = model_of(report);
    for (nlohmann::ordered_json& one : live(pid)) model["live"].push_back(std::move(one));
    return model;
  };

  const UiConfig& u = config.ui;
  if (!u.listen.empty() && !is_loopback(u.listen)) {
    std::cerr << "memtrack: warning: --listen " << u.listen
              << " makes memtrack ui reachable from other machines: WHOEVER REACHES THIS "
                 "ADDRESS AND HAS THE TOKEN SEES EVERY PROCESS'S COMMAND LINE AND MEMORY and can "
                 "take snapshots of your processes (prefer the default, loopback, with an SSH "
                 "tunnel)\n";
  }
  ui::Server server(
      {u.listen, static_cast<uint16_t>(u.port), config.top.proc_root, 1.0, MEMTRACK_VERSION},
      std::move(backend));
  server.bind();
  std::cout << "memtrack ui: serving at " << server.url() << "\n"
            << "memtrack ui: open that URL in a browser; stop with Ctrl-C" << std::endl;
  if (u.open) open_browser(server.url());
  server.run();
  return 0;
}

}  // namespace memtrack::cli
