// Private result directories, their start markers, and their removal (also from a signal
// handler, and of stale directories left by a killed memtrack).
#include "cli/result_dir.h"

#include "cli/inherited_signals.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "report/model.h"

namespace memtrack::cli {
namespace {

constexpr const char* kOwnerFile = "owner";
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The temporary directory, for the signal handler (which may not allocate).
char g_signal_dir[4096];

// getdents64's record (getdents64(2)); glibc declares no type for it.
struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// Async-signal-safe: system calls only. The directory is flat (the runtime writes files, no
// subdirectories). Unlinking while reading may skip entries, so it reads until a pass finds
// nothing left to unlink.
void remove_flat_dir_signal_safe(const char* dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  for (int pass = 0; pass < 16; ++pass) {
    bool removed = false;
    lseek(fd, 0, SEEK_SET);
    alignas(8) char buffer[4096];
    long n;
    while ((n = syscall(SYS_getdents64, fd, buffer, sizeof(buffer))) > 0) {
      for (long offset = 0; offset < n;) {
        auto* entry = reinterpret_cast<LinuxDirent64*>(buffer + offset);
        offset += entry->d_reclen;
        const char* name = entry->d_name;
        if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
        removed = unlinkat(fd, name, 0) == 0 || removed;
      }
    }
    if (!removed) break;
  }
  close(fd);
  rmdir(dir);
}

void remove_and_die(int sig) {
  remove_flat_dir_signal_safe(g_signal_dir);
  raise(sig);  // SA_RESETHAND restored the default action: delivered when this returns
}

void ignore_signal(int) {}

// Back to the disposition memtrack was started with.
void restore_disposition(int sig) {
  signal(sig, inherited_ignored(sig) ? SIG_IGN : SIG_DFL);
}

// Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot. With the
// pid it names one process, even after the pid is reused. Empty if there is no such process.
std::string start_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return "";
  std::istringstream fields(stat.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  return field;
}

// A directory memtrack.XXXXXX of this user whose owner file names a process that is gone.
bool is_stale(const std::filesystem::path& dir) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) return false;
  std::ifstream owner(dir / kOwnerFile);
  pid_t pid = 0;
  std::string started;
  if (!(owner >> pid >> started) || pid <= 0) return false;  // kept, or not ours
  return start_time(pid) != started;
}

// The names are read with readdir and filtered before anything else is made of them: the
// temporary directory may hold thousands of entries, and every `memtrack run` looks.
void remove_stale_dirs(const std::string& parent) {
  std::vector<std::string> candidates;
  if (DIR* dir = opendir(parent.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      std::string_view name = entry->d_name;
      if (name.size() == 15 && name.starts_with("memtrack.")) candidates.emplace_back(name);
    }
    closedir(dir);
  }
  for (const std::string& name : candidates) {
    std::filesystem::path path = std::filesystem::path(parent) / name;
    if (!is_stale(path)) continue;
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
}

std::vector<std::string> split_nul(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

}  // namespace

std::vector<StartedProcess> started_without_result(const std::string& dir,
                                                   const std::set<std::string>& skip) {
  std::vector<StartedProcess> started;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    unsigned pid = 0;
    char rest[16] = {};
    if (skip.contains(entry.path().string()) ||
        std::sscanf(name.c_str(), "memtrack.%u.%15s", &pid, rest) != 2 ||
        std::string(rest) != "started") {
      continue;
    }
    if (std::filesystem::exists(std::filesystem::path(dir) /
                                ("memtrack." + std::to_string(pid) + ".mtr"))) {
      continue;
    }
    std::ifstream in(entry.path(), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t newline = text.find('\n');
    if (newline == std::string::npos) continue;
    StartedProcess p;
    p.pid = pid;
    char* after_ppid = nullptr;
    p.ppid = static_cast<uint32_t>(std::strtoul(text.c_str(), &after_ppid, 10));
    std::string origin(static_cast<const char*>(after_ppid), text.c_str() + newline);
    if (origin == " forked") p.origin = StartedProcess::Origin::kForked;
    if (origin == " spawned") p.origin = StartedProcess::Origin::kSpawned;
    if (origin == " exec") p.origin = StartedProcess::Origin::kExec;
    p.command = split_nul(text.substr(newline + 1));
    started.push_back(std::move(p));
  }
  std::sort(started.begin(), started.end(),
            [](const StartedProcess& a, const StartedProcess& b) { return a.pid < b.pid; });
  return started;
}

ResultDir::ResultDir(const std::string& keep) {
  if (keep.empty()) {
    const char* tmp = getenv("TMPDIR");
    std::string parent = tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp";
    remove_stale_dirs(parent);
    std::string pattern = parent + "/memtrack.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {  // mkdtemp creates it with mode 0700
      throw Error("cannot create a temporary directory " + pattern + ": " + strerror(errno));
    }
    path_ = pattern;
    temporary_ = true;
    std::ofstream owner(path_ + "/" + kOwnerFile);
    owner << getpid() << " " << start_time(getpid()) << "\n";
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(keep, ec);
  if (ec || !std::filesystem::is_directory(keep)) {
    throw Error("cannot create the --keep-results directory " + keep + ": " +
                (ec ? ec.message() : "not a directory"));
  }
  chmod(keep.c_str(), 0700);
  path_ = std::filesystem::absolute(keep).lexically_normal().string();
  for (const std::string& f : list(".mtr")) existing_.insert(f);
  for (const std::string& f : list(".started")) existing_.insert(f);
}

ResultDir::~ResultDir() {
  if (g_signal_dir[0] != '\0') {
    for (int sig : kCleanupSignals) restore_disposition(sig);
    g_signal_dir[0] = '\0';
  }
  if (!temporary_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void ResultDir::remove_on_signals() const {
  struct sigaction ignore {};
  ignore.sa_handler = ignore_signal;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, nullptr);
  if (!temporary_ || path_.size() >= sizeof(g_signal_dir)) return;
  std::memcpy(g_signal_dir, path_.c_str(), path_.size() + 1);
  struct sigaction cleanup {};
  cleanup.sa_handler = remove_and_die;
  cleanup.sa_flags = SA_RESETHAND;
  sigemptyset(&cleanup.sa_mask);
  // A signal memtrack was started with ignored (nohup) does not end it either.
  for (int sig : kCleanupSignals) {
    if (!inherited_ignored(sig)) sigaction(sig, &cleanup, nullptr);
  }
}

void ResultDir::keep() {
  if (!temporary_) return;
  temporary_ = false;
  if (g_signal_dir[0] != '\0') {
    for (int sig : kCleanupSignals) restore_disposition(sig);
    g_signal_dir[0] = '\0';
  }
  unlink((path_ + "/" + kOwnerFile).c_str());
}

std::vector<std::string> ResultDir::list(const std::string& suffix) const {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("memtrack.", 0) == 0 && entry.path().extension() == suffix) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> ResultDir::new_result_files() const {
  std::vector<std::string> files;
  for (const std::string& f : list(".mtr")) {
    if (!existing_.contains(f)) files.push_back(f);
  }
  return files;
}

std::vector<std::string> ResultDir::check_files() const {
  struct Check {
    long pid;
    long sequence;
    std::string path;
  };
  std::vector<Check> checks;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) {
    std::string name = entry.path().filename().string();
    long pid = 0;
    long sequence = 0;
    int length = 0;
    if (std::sscanf(name.c_str(), "check.%ld.%ld.mtr%n", &pid, &sequence, &length) == 2 &&
        static_cast<size_t>(length) == name.size()) {
      checks.push_back({pid, sequence, entry.path().string()});
    }
  }
  std::sort(checks.begin(), checks.end(), [](const Check& a, const Check& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.sequence < b.sequence;
  });
  std::vector<std::string> files;
  for (const Check& c : checks) files.push_back(c.path);
  return files;
}

std::vector<StartedProcess> ResultDir::started_without_result() const {
  return cli::started_without_result(path_, existing_);
}

void ResultDir::remove_answered_markers() const {
  for (const std::string& marker : list(".started")) {
    std::string result = marker.substr(0, marker.size() - std::strlen(".started")) + ".mtr";
    if (access(result.c_str(), F_OK) == 0) unlink(marker.c_str());
  }
  for (const std::string& settings : list(".settings")) {
    long pid = 0;
    int length = 0;
    std::string name = std::filesystem::path(settings).filename().string();
    if (std::sscanf(name.c_str(), "memtrack.%ld.settings%n", &pid, &length) != 1 ||
        static_cast<size_t>(length) != name.size() || pid <= 0) {
      continue;
    }
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) unlink(settings.c_str());
  }
}

}  // namespace memtrack::cli
