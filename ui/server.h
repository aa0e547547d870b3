// memtrack ui's web server (cpp-httplib): the page, the process table of memtrack top as
// JSON refreshed by a sampling thread, each process's RSS history, snapshots of processes
// running under memtrack run and the reports named on the command line. Every request passes
// the checks of security.h first (docs/ui.md). Thread safe: handlers run on the library's
// thread pool and share the sampled state under one lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "ui/history.h"
#include "ui/security.h"

namespace httplib {
class Server;
struct Response;
}  // namespace httplib

namespace memtrack::ui {

struct ServerOptions {
  std::string listen;  // "" : 127.0.0.1 and ::1
  uint16_t port = 0;   // 0: a free port
  std::string proc_root = "/proc";
  double refresh_seconds = 1;
  std::string version;  // memtrack's, shown on the page
};

// What the server asks the rest of memtrack for, so that it needs neither the CLI nor the
// report pipeline. Each may throw memtrack::Error, whose message goes to the browser.
struct Backend {
  // The report model (report/html_renderer.h html_model) of a snapshot of `pid`, which
  // runs under memtrack run and belongs to this user.
  std::function<nlohmann::ordered_json(uint32_t pid)> snapshot;
  // The live reports (report/live_report.h live_to_json) that `pid`, running under memtrack
  // run --expire, has written so far, in order; empty without live mode.
  std::function<std::vector<nlohmann::ordered_json>(uint32_t pid)> live;
  // Whether `pid`, running under memtrack, records a heap profile (asked once per process).
  std::function<bool(uint32_t pid)> records_profile;
  // The heap profile page's model of what `pid` (this user's, under memtrack run --profile)
  // has recorded so far, for the window [from_us, to_us) when one is given.
  std::function<nlohmann::ordered_json(uint32_t pid, std::optional<uint64_t> from_us,
                                       std::optional<uint64_t> to_us)>
      running_profile;
  // After each sample of the process table (on the sampling thread): lets the backend forget
  // what it keeps for processes that ended.
  std::function<void()> after_sample;
  // The files named on the command line (shown by name) and the model of the i-th one; for a
  // heap profile, analysed for the window [from_us, to_us) when one is given (either end may
  // be missing).
  std::vector<std::string> file_names;
  std::function<nlohmann::ordered_json(size_t index, std::optional<uint64_t> from_us,
                                       std::optional<uint64_t> to_us)>
      open_file;
};

class Server {
 public:
  Server(ServerOptions options, Backend backend);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the listening sockets. Throws memtrack::Error when the port is taken or the
  // address cannot be bound.
  void bind();

  // The URL to open, with the token.
  std::string url() const;

  // Samples and serves until stop() (or the process ends). Blocks.
  void run();
  void stop();

 private:
  void sample_loop();
  void sample_once();
  void route(httplib::Server& server);
  // Whether `pid` is a process of this server's user; answers 404 or 403 otherwise.
  bool own_process(uint32_t pid, httplib::Response& res);

  ServerOptions options_;
  Backend backend_;
  std::string token_;
  Allowed allowed_;
  std::vector<std::unique_ptr<httplib::Server>> servers_;
  std::atomic<bool> stopping_{false};

  struct State;  // what the sampler thread produces and handlers read, under mutex_
  std::mutex mutex_;
  std::unique_ptr<State> state_;
};

}  // namespace memtrack::ui
