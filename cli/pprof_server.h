// memtrack run --pprof-http: the running program's heap served over HTTP as Go serves its own
// (docs/sampling.md, "A pprof endpoint for fleets"): /debug/pprof/heap (a pprof profile of the
// blocks it holds, by allocation stack, for `go tool pprof`, Parca and Pyroscope) and
// /metrics (Prometheus' text format). Runs in memtrack-ui, the executable that links the HTTP
// library, so that `memtrack run` without the option does not load it.
#pragma once

#include <string>

namespace memtrack::cli {

// Where to listen: "PORT" or "HOST:PORT" ("[::1]:PORT" for IPv6); the host defaults to
// 127.0.0.1. Port 0 picks a free one. Throws Error naming --pprof-http on a bad value.
struct ListenAddress {
  std::string host = "127.0.0.1";
  int port = 0;
};
ListenAddress parse_listen_address(const std::string& value);

// memtrack run's side: starts `memtrack-ui --pprof-server HOST PORT`, which binds before the
// program starts (a port in use is an error then, and nothing runs), serves the program
// once set_pid() named it, and is stopped by stop().
class PprofServerProcess {
 public:
  // Throws Error if the server cannot start or bind.
  explicit PprofServerProcess(const ListenAddress& address);
  ~PprofServerProcess();
  PprofServerProcess(const PprofServerProcess&) = delete;
  PprofServerProcess& operator=(const PprofServerProcess&) = delete;

  // The endpoint's URL, http://HOST:PORT (the port it bound).
  const std::string& url() const { return url_; }
  void set_pid(int pid);
  void stop();

 private:
  int pid_ = -1;        // the server process
  int to_server_ = -1;  // its stdin: the program's pid
  std::string url_;
};

// memtrack-ui --pprof-server HOST PORT: binds, writes "listening PORT\n" (or "error: ...\n")
// to stdout, reads the program's pid from stdin, serves until SIGTERM or stdin's end.
int pprof_server_main(const std::string& host, int port);

}  // namespace memtrack::cli
