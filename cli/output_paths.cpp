// The output files of a run, checked before the program starts, and --log-file's %p.
#include "cli/output_paths.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace memtrack::cli {
std::string expand_pid(const std::string& pattern, uint32_t pid) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      out += std::to_string(pid);
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

namespace {

// A file that can be opened for writing: opened without truncating, and removed again if
// this check created it.
void check_writable(const std::string& option, const std::string& path) {
  if (path.empty() || path == "-") return;
  if (path.find("%p") != std::string::npos) {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::string dir = parent.empty() ? std::string(".") : parent.string();
    if (access(dir.c_str(), W_OK | X_OK) != 0) {
      throw Error("cannot write " + option + "=" + path + ": directory " + dir + ": " +
                  strerror(errno));
    }
    return;
  }
  bool existed = access(path.c_str(), F_OK) == 0;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot write " + option + "=" + path + ": " + strerror(errno));
  close(fd);
  if (!existed) unlink(path.c_str());
}

}  // namespace

void check_output_paths(const Config& config) {
  check_writable("--log-file", config.log_file);
  check_writable("--json", config.json_file);
  check_writable("--junit", config.junit_file);
  check_writable("--collapsed", config.collapsed_file);
  check_writable("--xml-file", config.xml_file);
  check_writable("--sarif", config.sarif_file);
  check_writable("--pprof", config.pprof_file);
  check_writable("--speedscope", config.speedscope_file);
  check_writable("--html", config.html_file);
  check_writable("--live-json", config.live_json);
  check_writable("--profile", config.profile_file);
  check_writable("--massif", config.massif_file);
  check_binary_stdout(config);
}

void check_binary_stdout(const Config& config) {
  if (config.pprof_file == "-" && isatty(STDOUT_FILENO)) {
    throw Error(
        "the pprof profile is binary and stdout is a terminal: redirect stdout to a "
        "file, or name one with --pprof=FILE");
  }
}

}  // namespace memtrack::cli
