// memtrack run's side of --pprof-http (pprof_server.h): the address, and the memtrack-ui
// process that serves it.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "cli/launcher.h"
#include "cli/pprof_server.h"
#include "common/error.h"

extern char** environ;

namespace memtrack::cli {

ListenAddress parse_listen_address(const std::string& value) {
  auto bad = [&]() {
    return Error(
        "--pprof-http expects PORT or HOST:PORT (8080, 127.0.0.1:8080, [::1]:8080, "
        "0.0.0.0:8080), not '" +
        value + "'");
  };
  ListenAddress address;
  std::string port = value;
  size_t colon = value.rfind(':');
  if (colon != std::string::npos) {
    address.host = value.substr(0, colon);
    port = value.substr(colon + 1);
    if (address.host.size() >= 2 && address.host.front() == '[' && address.host.back() == ']') {
      address.host = address.host.substr(1, address.host.size() - 2);
    }
    if (address.host.empty() ||
        address.host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789.-:") != std::string::npos) {
      throw bad();
    }
  }
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos) {
    throw bad();
  }
  address.port = std::stoi(port);
  if (address.port > 65535) throw bad();
  return address;
}

PprofServerProcess::PprofServerProcess(const ListenAddress& address) {
  std::string server = helper_executable("memtrack-ui");
  int to_server[2];
  int from_server[2];
  if (pipe2(to_server, O_CLOEXEC) != 0 || pipe2(from_server, O_CLOEXEC) != 0) {
    throw Error(std::string("cannot start the pprof server: pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_server[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_server[1], 1);
  std::string port = std::to_string(address.port);
  const char* argv[] = {server.c_str(), "--pprof-server", address.host.c_str(), port.c_str(),
                        nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, server.c_str(), &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(to_server[0]);
  close(from_server[1]);
  if (rc != 0) {
    close(to_server[1]);
    close(from_server[0]);
    throw Error("cannot start " + server + ": " + std::strerror(rc));
  }
  pid_ = pid;
  to_server_ = to_server[1];
  // Its first line: "listening PORT" or "error: ...".
  std::string line;
  char c = 0;
  while (read(from_server[0], &c, 1) == 1 && c != '\n') line += c;
  close(from_server[0]);
  if (!line.starts_with("listening ")) {
    stop();
    throw Error(line.starts_with("error: ") ? "--pprof-http: " + line.substr(7)
                                            : "the pprof server did not start (" + server + ")");
  }
  std::string host =
      address.host.find(':') != std::string::npos ? "[" + address.host + "]" : address.host;
  url_ = "http://" + host + ":" + line.substr(10);
}

PprofServerProcess::~PprofServerProcess() {
  stop();
}

void PprofServerProcess::set_pid(int pid) {
  if (to_server_ < 0) return;
  std::string text = std::to_string(pid) + "\n";
  ssize_t ignored = write(to_server_, text.data(), text.size());
  (void)ignored;
}

// Closing its stdin ends it; it answers a request in progress first.
void PprofServerProcess::stop() {
  if (to_server_ >= 0) {
    close(to_server_);
    to_server_ = -1;
  }
  if (pid_ > 0) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
}

}  // namespace memtrack::cli
