// fork/exec of the target with the runtime preloaded; signal forwarding; waiting.
#include "cli/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "cli/inherited_signals.h"
#include "cli/options.h"

namespace memtrack::cli {
namespace {

volatile sig_atomic_t g_child_pid = 0;

void forward_signal(int sig) {
  if (g_child_pid > 0) kill(g_child_pid, sig);
}

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::vector<std::string> make_environment(const std::string& runtime,
                                          const std::string& runtime_options) {
  std::string preload = runtime;
  if (const char* old = getenv("LD_PRELOAD"); old != nullptr && old[0] != '\0') {
    preload += ":" + std::string(old);
  }
  std::string options = runtime_options;
  if (const char* old = getenv("MEMTRACK_OPTIONS"); old != nullptr && old[0] != '\0') {
    options = std::string(old) + ":" + runtime_options;  // ours come last and win
  }
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (entry.rfind("LD_PRELOAD=", 0) == 0 || entry.rfind("MEMTRACK_OPTIONS=", 0) == 0) continue;
    env.push_back(std::move(entry));
  }
  env.push_back("LD_PRELOAD=" + preload);
  env.push_back("MEMTRACK_OPTIONS=" + options);
  return env;
}

std::vector<char*> as_pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

report::ExitInfo decode_status(int status) {
  report::ExitInfo exit;
  if (WIFSIGNALED(status)) {
    exit.how = report::ExitInfo::How::kSignal;
    exit.signal = WTERMSIG(status);
  } else {
    exit.how = report::ExitInfo::How::kExit;
    exit.code = WEXITSTATUS(status);
  }
  return exit;
}

}  // namespace

std::string find_runtime() {
  if (const char* env = getenv("MEMTRACK_RUNTIME"); env != nullptr && env[0] != '\0') {
    if (access(env, R_OK) != 0) {
      throw Error(std::string("MEMTRACK_RUNTIME=") + env + " is not a readable file");
    }
    return env;
  }
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot locate the memtrack executable: " + ec.message());
  std::filesystem::path dir = self.parent_path();
  for (const char* candidate :
       {"../runtime/libmemtrack.so", "../lib/memtrack/libmemtrack.so", "libmemtrack.so"}) {
    std::filesystem::path path = (dir / candidate).lexically_normal();
    if (access(path.c_str(), R_OK) == 0) return path.string();
  }
  throw Error("cannot find libmemtrack.so next to " + self.string() +
              " (looked in ../runtime/ and ../lib/memtrack/; set MEMTRACK_RUNTIME to its path)");
}

std::string helper_executable(const char* name) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot locate the memtrack executable: " + ec.message());
  for (std::string candidate : {std::string(name), "../lib/memtrack/" + std::string(name)}) {
    std::filesystem::path path = (self.parent_path() / candidate).lexically_normal();
    if (access(path.c_str(), X_OK) == 0) return path.string();
  }
  throw Error(std::string("cannot find ") + name + " next to " + self.string() +
              " (looked there and in ../lib/memtrack/); the whole build installs it with memtrack "
              "(make build; make demo builds only memtrack and its runtime)");
}

[[noreturn]] void exec_ui(char** argv) {
  std::string path = helper_executable("memtrack-ui");
  execv(path.c_str(), argv);
  throw Error("cannot execute " + path + ": " + std::strerror(errno));
}

std::string resolve_program(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), F_OK) != 0) {
      throw LaunchError("cannot run " + program + ": no such file", kExitNotFound);
    }
    if (!is_executable_file(program)) {
      throw LaunchError("cannot run " + program + ": not an executable file", kExitNotExecutable);
    }
    return program;
  }
  const char* path_env = getenv("PATH");
  std::string path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  bool found_unexecutable = false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (is_executable_file(candidate)) return candidate;
    if (access(candidate.c_str(), F_OK) == 0) found_unexecutable = true;
    start = end + 1;
  }
  if (found_unexecutable) {
    throw LaunchError("cannot run " + program + ": not an executable file", kExitNotExecutable);
  }
  throw LaunchError("cannot run " + program + ": not found in PATH", kExitNotFound);
}

LaunchResult launch_and_wait(const std::vector<std::string>& argv, const std::string& runtime,
                             const std::string& runtime_options,
                             const std::function<void(int)>& started) {
  std::string program = resolve_program(argv.at(0));
  std::vector<std::string> args = argv;
  std::vector<std::string> env = make_environment(runtime, runtime_options);
  std::vector<char*> arg_ptrs = as_pointers(args);
  std::vector<char*> env_ptrs = as_pointers(env);

  // The child reports a failed exec through a close-on-exec pipe: a successful exec closes
  // it with nothing written.
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) throw Error(std::string("pipe: ") + strerror(errno));
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);  // best effort: without it, orphans go to init
  pid_t pid = fork();
  if (pid < 0) throw Error(std::string("cannot fork: ") + strerror(errno));
  if (pid == 0) {
    close(error_pipe[0]);
    restore_inherited_signals();  // the program starts as memtrack was started
    execve(program.c_str(), arg_ptrs.data(), env_ptrs.data());
    int err = errno;
    ssize_t ignored = write(error_pipe[1], &err, sizeof(err));
    (void)ignored;
    _exit(kExitNotExecutable);
  }
  close(error_pipe[1]);
  g_child_pid = pid;
  if (started) started(pid);
  struct sigaction forward {};
  forward.sa_handler = forward_signal;
  sigemptyset(&forward.sa_mask);
  // A signal memtrack was started with ignored is ignored by the program too: not forwarded.
  struct sigaction saved[std::size(kForwarded)];
  for (size_t i = 0; i < std::size(kForwarded); ++i) {
    if (!inherited_ignored(kForwarded[i])) sigaction(kForwarded[i], &forward, &saved[i]);
  }

  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(error_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child_pid = 0;
  for (size_t i = 0; i < std::size(kForwarded); ++i) {
    if (!inherited_ignored(kForwarded[i])) sigaction(kForwarded[i], &saved[i], nullptr);
  }
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    throw LaunchError("cannot run " + program + ": " + strerror(exec_errno),
                      exec_errno == ENOENT ? kExitNotFound : kExitNotExecutable);
  }
  return LaunchResult{pid, decode_status(status)};
}

std::map<uint32_t, report::ExitInfo> wait_for_descendants(int wait_ms, bool* still_running) {
  std::map<uint32_t, report::ExitInfo> ended;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  *still_running = false;
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      ended[static_cast<uint32_t>(pid)] = decode_status(status);
      continue;
    }
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) return ended;  // ECHILD: none left
    if (std::chrono::steady_clock::now() >= deadline) {
      *still_running = true;
      return ended;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace memtrack::cli
