// memtrack snapshot PID: asks a program running under `memtrack run` for a full report
// (sigqueue with a request id), waits for its result file and renders it.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/pipeline.h"
#include "cli/preflight.h"
#include "cli/write_outputs.h"
#include "core/flags.h"
#include "core/snapshot_signal.h"
#include "proc/memtrack_mark.h"

namespace memtrack::cli {
namespace {

std::string read_proc_file(uint32_t pid, const char* name) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) throw Error("no process " + std::to_string(pid));
    throw Error("cannot read " + path + ": " + std::strerror(errno) +
                " (memtrack snapshot must run as the program's user)");
  }
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The runtime flags a process runs with, read from its MEMTRACK_OPTIONS with the runtime's own
// parser (what it warned about then is not repeated here).
core::Flags runtime_flags_of(const std::string& options) {
  core::Flags flags;
  core::set_defaults(&flags);
  core::parse_flags(options.c_str(), &flags, [](const char*) {});
  return flags;
}

std::string environment_value(const std::string& environ, const std::string& name) {
  std::string prefix = name + "=";
  size_t start = 0;
  std::string found;
  while (start < environ.size()) {
    size_t end = environ.find('\0', start);
    if (end == std::string::npos) end = environ.size();
    if (environ.compare(start, prefix.size(), prefix) == 0) {
      found = environ.substr(start + prefix.size(), end - start - prefix.size());
    }
    start = end + 1;
  }
  return found;
}

// The settings file the runtime maps (runtime/output/settings_file.h): the path of a
// "memtrack.PID.settings" mapping in `maps` (its own pid's first: a forked child maps its
// parent's until it has republished), or "" (a runtime without a result directory).
std::string settings_file_in(const std::string& maps, uint32_t pid) {
  std::istringstream lines(maps);
  std::string line;
  std::string own = "memtrack." + std::to_string(pid) + ".settings";
  std::string found;
  while (std::getline(lines, line)) {
    size_t slash = line.find(" /");
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash + 1);
    std::string name = path;
    if (name.ends_with(" (deleted)")) name.resize(name.size() - std::strlen(" (deleted)"));
    name = std::filesystem::path(name).filename().string();
    if (name == own) return path;
    if (found.empty() && name.starts_with("memtrack.") && name.ends_with(".settings")) found = path;
  }
  return found;
}

// Where a running process's runtime options were found, and what they are.
struct RuntimeOptions {
  std::string options;
  bool from_settings_file = false;  // else from its environment
};

// The runtime options of `pid`, which must run under memtrack (preloaded, or linked in: a
// static program's .memtrack_runtime section): from the settings file the runtime maps, or
// else (a runtime without a result directory) from the process's environment. Throws Error
// with the true cause otherwise.
RuntimeOptions memtrack_options(uint32_t pid) {
  std::string maps = read_proc_file(pid, "maps");
  bool attach_runtime = top::maps_show_attach_runtime(maps);
  if (attach_runtime && settings_file_in(maps, pid).empty()) {
    throw Error("process " + std::to_string(pid) +
                " is not attached by memtrack any more (memtrack attach detached from it)");
  }
  if (!attach_runtime && !top::maps_show_memtrack(maps) &&
      !carries_runtime("/proc/" + std::to_string(pid) + "/exe")) {
    throw Error("process " + std::to_string(pid) +
                " does not run under memtrack (start it with 'memtrack run')");
  }
  std::string settings = settings_file_in(maps, pid);
  if (!settings.empty()) {
    if (settings.ends_with(" (deleted)")) {
      std::string dir = std::filesystem::path(settings).parent_path().string();
      std::error_code ec;
      if (std::filesystem::is_directory(dir, ec)) {
        throw Error("process " + std::to_string(pid) +
                    " is ending under memtrack: its final report is being written to " + dir);
      }
      throw Error("process " + std::to_string(pid) + " runs under memtrack, but its result " +
                  "directory " + dir +
                  " was removed (the memtrack run that started it has ended, or its files "
                  "were deleted)");
    }
    std::ifstream in(settings, std::ios::binary);
    if (!in) {
      throw Error("cannot read " + settings + ", process " + std::to_string(pid) + "'s settings: " +
                  std::strerror(errno) + " (memtrack snapshot must run as the program's user)");
    }
    std::string options(std::istreambuf_iterator<char>(in), {});
    if (!options.empty() && options.back() == '\n') options.pop_back();
    return RuntimeOptions{options, true};
  }
  return RuntimeOptions{environment_value(read_proc_file(pid, "environ"), "MEMTRACK_OPTIONS"),
                        false};
}

}  // namespace

bool process_exists(uint32_t pid) {
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string memtrack_result_dir(uint32_t pid) {
  return runtime_flags_of(memtrack_options(pid).options).result_dir;
}

bool memtrack_records_profile(uint32_t pid) {
  try {
    return runtime_flags_of(memtrack_options(pid).options).profile[0] != '\0';
  } catch (const Error&) {
    return false;
  }
}

std::string memtrack_raw_profile(uint32_t pid) {
  std::string pattern(runtime_flags_of(memtrack_options(pid).options).profile);
  if (pattern.empty()) {
    throw Error("process " + std::to_string(pid) +
                " records no heap profile (start it with 'memtrack run --profile=FILE')");
  }
  std::string base = expand_pid(pattern, pid);
  if (base[0] != '/') {  // the runtime made it absolute with its working directory then
    std::error_code error;
    std::filesystem::path cwd =
        std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/cwd", error);
    if (error) {
      throw Error("cannot read the working directory of process " + std::to_string(pid) + ": " +
                  error.message());
    }
    base = (cwd / base).string();
  }
  // The runtime takes the first name not taken: an exec'd image's file comes after its
  // predecessors'.
  std::string newest;
  for (int n = 1; n < 1000; ++n) {
    std::string path = n == 1 ? base : base + "." + std::to_string(n);
    std::error_code error;
    if (!std::filesystem::exists(path, error)) break;
    newest = path;
  }
  if (newest.empty()) {
    throw Error("process " + std::to_string(pid) + " has not started its heap profile " + base +
                " yet");
  }
  return newest;
}

std::string request_snapshot(uint32_t pid, double timeout_s, uint64_t block) {
  RuntimeOptions found = memtrack_options(pid);
  core::Flags flags = runtime_flags_of(found.options);
  if (!flags.snapshot_signal) {
    if (found.from_settings_file) {
      throw Error("process " + std::to_string(pid) +
                  " does not take snapshot requests (it was started with --snapshots=no)");
    }
    if (found.options.empty()) {
      throw Error("process " + std::to_string(pid) +
                  " does not take snapshot requests: it was not started by memtrack run, and "
                  "its environment holds no MEMTRACK_OPTIONS (start it with memtrack run, or "
                  "with MEMTRACK_OPTIONS=snapshot_signal=1)");
    }
    throw Error("process " + std::to_string(pid) +
                " does not take snapshot requests (it was started without memtrack run and "
                "without MEMTRACK_OPTIONS=snapshot_signal=1)");
  }
  std::string dir = flags.result_dir;
  if (dir.empty()) dir = environment_value(read_proc_file(pid, "environ"), "TMPDIR");
  if (dir.empty()) dir = "/tmp";

  std::random_device random;
  int request = static_cast<int>(random() & 0x7fffffff);
  if (request == 0) request = 1;
  std::string path =
      dir + "/snapshot." + std::to_string(pid) + "." + std::to_string(request) + ".mtr";
  // The block to describe goes in a file the runtime reads (and removes) when it answers.
  std::string block_request;
  if (block != 0) {
    block_request =
        dir + "/snapshot." + std::to_string(pid) + "." + std::to_string(request) + ".retainers";
    int fd = open(block_request.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    std::string text = fmt::format("{:#x}\n", block);
    bool written =
        fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (fd >= 0) close(fd);
    if (!written) {
      throw Error("cannot write " + block_request + ": " + std::strerror(errno) +
                  " (the directory the process writes its snapshots to)");
    }
  }
  // Gone whatever happens next: the runtime removes it when it answers, this when it does not.
  struct RemoveRequest {
    std::string path;
    ~RemoveRequest() {
      std::error_code ignored;
      if (!path.empty()) std::filesystem::remove(path, ignored);
    }
  } remove_request{block_request};
  union sigval value {};
  value.sival_int = request;
  if (sigqueue(static_cast<pid_t>(pid), core::snapshot_signal(), value) != 0) {
    throw Error("cannot signal process " + std::to_string(pid) + ": " + std::strerror(errno));
  }
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  while (!std::filesystem::exists(path)) {
    if (!process_exists(pid)) {
      throw Error("process " + std::to_string(pid) + " ended before writing its report");
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw Error("process " + std::to_string(pid) + " wrote no report within " +
                  std::to_string(static_cast<int>(timeout_s)) +
                  " s (is it stopped? try a longer --timeout)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return path;
}

int snapshot_command(const Config& config) {
  check_binary_stdout(config);
  uint32_t pid = config.snapshot_pid;
  std::string path = request_snapshot(pid, config.snapshot_timeout_s, config.snapshot_block);
  bool had_errors = false;
  report::Report report =
      build_report({path}, load_suppressions(config), std::nullopt, &had_errors);
  std::filesystem::remove(path);
  if (had_errors) return kExitToolFailed;
  // The text goes to stdout unless another report does (--json=-): then to stderr.
  bool text_to_stdout = !writes_a_format_to_stdout(config);
  if (!write_outputs(report, config, pid, text_to_stdout)) return kExitToolFailed;
  return exit_status(report, config, 0);
}

}  // namespace memtrack::cli
