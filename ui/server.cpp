// memtrack ui's server (server.h): routes, request checks and the sampling thread.
#include "ui/server.h"

#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <condition_variable>

#include "common/error.h"
#include "proc/json_output.h"
#include "proc/memtrack_mark.h"
#include "proc/proc_files.h"
#include "proc/proc_reader.h"
#include "proc/sampler.h"
#include "proc/user_names.h"
#include "proc/view.h"
#include "ui/page.h"

namespace memtrack::ui {

using nlohmann::ordered_json;

namespace {

// At most this many processes' threads per request: each costs a directory walk.
constexpr size_t kMaxThreadPids = 64;
// The samples in each row's sparkline: the last minute.
constexpr size_t kSparklinePoints = 60;

uint64_t ticks_per_second() {
  long ticks = sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<uint64_t>(ticks) : 100;
}

void send_json(httplib::Response& res, const ordered_json& doc, int status = 200) {
  res.status = status;
  res.set_content(doc.dump(-1, ' ', false, ordered_json::error_handler_t::replace),
                  "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, ordered_json{{"error", message}}, status);
}

// A pid parameter: digits only, 1 to 2^22 (the kernel's pid_max limit).
std::optional<uint32_t> pid_param(const httplib::Request& req) {
  uint32_t pid = 0;
  if (!req.has_param("pid") || !top::try_parse_u32(req.get_param_value("pid"), &pid) || pid == 0 ||
      pid > (1u << 22)) {
    return std::nullopt;
  }
  return pid;
}

// Digits only (no sign, no space), at most 2^64 - 1.
bool try_parse_u64(const std::string& text, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

// "1,2,3" -> pids (bad entries skipped), at most kMaxThreadPids.
std::vector<uint32_t> pid_list(const std::string& text) {
  std::vector<uint32_t> pids;
  size_t at = 0;
  while (at <= text.size() && pids.size() < kMaxThreadPids) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    uint32_t pid = 0;
    if (top::try_parse_u32(std::string_view(text).substr(at, end - at), &pid)) pids.push_back(pid);
    at = end + 1;
  }
  return pids;
}

// The process as memtrack top --json writes it, for one freshly read process.
ordered_json top_json(const top::ProcessRow& row) {
  top::ViewRow view{&row, nullptr, ""};
  ordered_json doc = ordered_json::parse(top::format_json({view}, ticks_per_second()));
  return doc["processes"][0];
}

// Whether a process runs under memtrack, and records a heap profile; for the process that
// started at `start_ticks` (a pid may be reused).
struct Mark {
  uint64_t start_ticks = 0;
  bool memtrack = false;
  bool profile = false;
  // Under memtrack run (or not readable): for the process's life. Otherwise memtrack attach
  // may come or go: its map is read again after kMarkRecheck.
  bool settled = false;
  std::chrono::steady_clock::time_point read_at{};
};

constexpr std::chrono::seconds kMarkRecheck{5};

// The window of a heap profile's analysis: from_us and to_us, either may be missing. False
// after the answer when one is not a number (400) or the window is empty (422).
bool window_params(const httplib::Request& req, httplib::Response& res,
                   std::optional<uint64_t>* from_us, std::optional<uint64_t>* to_us) {
  for (const auto& [name, value] : {std::pair{"from_us", from_us}, {"to_us", to_us}}) {
    if (!req.has_param(name)) continue;
    uint64_t us = 0;
    if (!try_parse_u64(req.get_param_value(name), &us)) {
      send_error(res, 400, std::string(name) + " expects microseconds");
      return false;
    }
    *value = us;
  }
  if (*from_us && *to_us && **from_us >= **to_us) {
    send_error(res, 422, "the window's start must be before its end");
    return false;
  }
  return true;
}

}  // namespace

struct Server::State {
  // The sampling thread's own readers (it alone uses them, outside the lock).
  std::unique_ptr<top::ProcFiles> files;
  std::unique_ptr<top::ProcReader> reader;
  top::UserNames users;
  std::unique_ptr<top::Sampler> sampler;
  // Readers for the handlers (threads on demand, the owner of a snapshot's target), under
  // the server's lock.
  std::unique_ptr<top::ProcFiles> request_files;
  std::unique_ptr<top::ProcReader> request_reader;
  // Under the server's lock: the last table and the history.
  ordered_json processes = ordered_json::array();
  double seconds = 0;
  uint64_t samples = 0;
  History history;
  // pid -> what the table says of memtrack: the maps file is read once per process.
  std::unordered_map<uint32_t, Mark> marks;
  std::mutex snapshot_mutex;  // one snapshot at a time
  std::condition_variable wake;
};

Server::Server(ServerOptions options, Backend backend)
    : options_(std::move(options)),
      backend_(std::move(backend)),
      token_(new_token()),
      state_(std::make_unique<State>()) {
  try {
    state_->files = std::make_unique<top::ProcFiles>(options_.proc_root);
    state_->request_files = std::make_unique<top::ProcFiles>(options_.proc_root);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (--proc-root takes a directory laid out like /proc)");
  }
  state_->reader = std::make_unique<top::ProcReader>(*state_->files);
  state_->request_reader = std::make_unique<top::ProcReader>(*state_->request_files);
  state_->sampler =
      std::make_unique<top::Sampler>(*state_->reader, state_->users, top::SamplerOptions{});
}

Server::~Server() {
  stop();
}

void Server::bind() {
  std::vector<std::string> hosts = options_.listen.empty()
                                       ? std::vector<std::string>{"127.0.0.1", "::1"}
                                       : std::vector<std::string>{options_.listen};
  int port = options_.port;
  for (size_t i = 0; i < hosts.size(); ++i) {
    auto server = std::make_unique<httplib::Server>();
    route(*server);
    bool bound = false;
    if (port == 0) {
      port = server->bind_to_any_port(hosts[i]);
      bound = port > 0;
    } else {
      bound = server->bind_to_port(hosts[i], port);
    }
    // A machine without IPv6 still has 127.0.0.1: ::1 is optional there.
    if (!bound && options_.listen.empty() && i > 0) continue;
    if (!bound) {
      throw Error("cannot listen on " + hosts[i] + (port > 0 ? ":" + std::to_string(port) : "") +
                  " (is the port in use? choose another with --port)");
    }
    servers_.push_back(std::move(server));
  }
  allowed_ = {static_cast<uint16_t>(port), options_.listen};
}

std::string Server::url() const {
  std::string host =
      options_.listen.empty() || options_.listen == "0.0.0.0" || options_.listen == "::"
          ? "127.0.0.1"
          : options_.listen;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(allowed_.port) + "/?token=" + token_;
}

void Server::run() {
  if (servers_.empty()) throw Error("memtrack ui: run() before bind()");
  sample_once();
  std::thread sampler([this] { sample_loop(); });
  std::vector<std::thread> listeners;
  for (size_t i = 1; i < servers_.size(); ++i) {
    listeners.emplace_back([server = servers_[i].get()] { server->listen_after_bind(); });
  }
  servers_[0]->listen_after_bind();
  stop();
  for (std::thread& t : listeners) t.join();
  sampler.join();
}

void Server::stop() {
  stopping_ = true;
  state_->wake.notify_all();
  for (auto& server : servers_) server->stop();
}

void Server::sample_loop() {
  // Samples on a fixed beat (not a pause after each sample, which would stretch the period
  // by the time a sample takes); a beat missed on a loaded machine is skipped, not caught up.
  using Clock = std::chrono::steady_clock;
  auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.refresh_seconds));
  Clock::time_point next = Clock::now() + period;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    state_->wake.wait_until(lock, next, [this] { return stopping_.load(); });
    if (stopping_) break;
    next += period;
    if (next < Clock::now()) next = Clock::now() + period;
    lock.unlock();
    sample_once();
    lock.lock();
  }
}

void Server::sample_once() {
  State& s = *state_;
  top::Snapshot snapshot = s.sampler->sample(nullptr);
  std::vector<top::ViewRow> rows = top::arrange(snapshot, top::ViewOptions{});
  ordered_json doc = ordered_json::parse(top::format_json(rows, ticks_per_second()));
  uid_t me = geteuid();
  // Reading maps is the costly part: once per process, and only where it is allowed.
  std::unordered_map<uint32_t, Mark> marks;
  {
    std::lock_guard lock(mutex_);
    marks = s.marks;
  }
  std::unordered_map<uint32_t, Mark> now;
  std::string maps;
  for (const top::ProcessRow& row : snapshot.processes) {
    const top::ProcessInfo& info = row.info;
    auto known = marks.find(info.pid);
    auto read_at = std::chrono::steady_clock::now();
    if (known != marks.end() && known->second.start_ticks == info.start_ticks &&
        (known->second.settled || read_at - known->second.read_at < kMarkRecheck)) {
      now[info.pid] = known->second;
      continue;
    }
    Mark mark{info.start_ticks, false, false, true, read_at};
    if (!info.kernel_thread && info.uid && (*info.uid == me || me == 0) &&
        s.files->read(std::to_string(info.pid) + "/maps", &maps) == top::ReadStatus::kOk) {
      mark.settled = top::maps_show_memtrack(maps);
      mark.memtrack = mark.settled || top::maps_show_attached(maps, info.pid);
    }
    // A heap profile is shown for the user's own processes only, as snapshots are.
    mark.profile = mark.memtrack && *info.uid == me && backend_.records_profile &&
                   backend_.records_profile(info.pid);
    now[info.pid] = mark;
  }
  for (ordered_json& p : doc["processes"]) {
    const Mark& mark = now[p["pid"].get<uint32_t>()];
    p["memtrack"] = mark.memtrack;
    p["profile"] = mark.profile;
  }
  {
    std::lock_guard lock(mutex_);
    s.marks = std::move(now);
    s.processes = std::move(doc["processes"]);
    s.seconds = snapshot.seconds;
    ++s.samples;
    for (const top::ProcessRow& row : snapshot.processes) {
      if (row.info.rss_kb) {
        s.history.add(row.info.pid, row.info.start_ticks, snapshot.seconds, *row.info.rss_kb);
      }
    }
    s.history.end_sample();
  }
  if (backend_.after_sample) backend_.after_sample();
}

bool Server::own_process(uint32_t pid, httplib::Response& res) {
  std::lock_guard lock(mutex_);
  std::optional<top::ProcessInfo> info = state_->request_reader->read_process(pid, false);
  if (!info) {
    send_error(res, 404, "no process " + std::to_string(pid));
    return false;
  }
  if (!info->uid || *info->uid != geteuid()) {
    send_error(res, 403, "process " + std::to_string(pid) + " belongs to another user");
    return false;
  }
  return true;
}

void Server::route(httplib::Server& server) {
  // The library's default adds SO_REUSEPORT, which would let another process of the user
  // bind the same port and take a share of the connections (and of the tokens in them).
  // SO_REUSEADDR alone lets a restarted ui reuse its port without that.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // No request has a body worth keeping: the snapshot request's parameters are in the URL.
  server.set_payload_max_length(4096);
  // Every response: not cached, not framed, no referrer (the URL holds the token), and the
  // page may talk to this server only.
  server.set_default_headers({
      {"Cache-Control", "no-store"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src "
       "data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"},
  });
  server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    auto refuse = [&res](const std::string& why) {
      res.status = 403;
      res.set_content("memtrack ui: " + why + "\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    };
    // Checked first: a rebinding page reaches us under its own name.
    if (!host_allowed(req.get_header_value("Host"), allowed_)) {
      return refuse(
          "refused: the Host header must be localhost, 127.0.0.1 or [::1] with this "
          "server's port");
    }
    if (req.has_header("Origin") && !origin_allowed(req.get_header_value("Origin"), allowed_)) {
      return refuse("refused: a request from another origin");
    }
    if (req.get_header_value("Sec-Fetch-Site") == "cross-site") {
      return refuse("refused: a cross-site request");
    }
    std::string name = "memtrack_token_" + std::to_string(allowed_.port);
    std::string given = req.has_param("token")
                            ? req.get_param_value("token")
                            : cookie_value(req.get_header_value("Cookie"), name).value_or("");
    if (!equal_in_constant_time(given, token_)) {
      return refuse("refused: no valid token (open the URL that memtrack ui printed)");
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  server.Get("/", [this](const httplib::Request& req, httplib::Response& res) {
    // Like Jupyter: the token of the URL becomes a cookie for the page's own requests.
    if (req.has_param("token")) {
      res.set_header("Set-Cookie", "memtrack_token_" + std::to_string(allowed_.port) + "=" +
                                       token_ + "; HttpOnly; SameSite=Strict; Path=/");
    }
    res.set_content(ui_page(options_.version), "text/html; charset=utf-8");
  });

  server.Get("/api/processes", [this](const httplib::Request& req, httplib::Response& res) {
    std::vector<uint32_t> wanted;
    if (req.has_param("threads")) wanted = pid_list(req.get_param_value("threads"));
    std::lock_guard lock(mutex_);
    ordered_json doc;
    doc["seconds"] = state_->seconds;
    doc["samples"] = state_->samples;
    doc["refresh_seconds"] = options_.refresh_seconds;
    doc["uid"] = geteuid();
    doc["processes"] = state_->processes;
    for (ordered_json& p : doc["processes"]) {
      p["rss_recent_kb"] =
          state_->history.recent_rss_kb(p["pid"].get<uint32_t>(), kSparklinePoints);
    }
    for (uint32_t pid : wanted) {
      std::optional<top::ProcessInfo> info = state_->request_reader->read_process(pid, true);
      if (!info) continue;
      top::ProcessRow row;
      row.info = std::move(*info);
      ordered_json threads = top_json(row)["threads"];
      for (ordered_json& p : doc["processes"]) {
        if (p["pid"] == pid) p["threads"] = threads;
      }
    }
    send_json(res, doc);
  });

  server.Get("/api/history", [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<uint32_t> pid = pid_param(req);
    if (!pid) return send_error(res, 400, "pid expects a process id");
    std::lock_guard lock(mutex_);
    ordered_json seconds = ordered_json::array();
    ordered_json rss = ordered_json::array();
    for (const HistoryPoint& p : state_->history.points(*pid)) {
      seconds.push_back(p.seconds);
      rss.push_back(p.rss_kb);
    }
    send_json(res, {{"pid", *pid}, {"seconds", seconds}, {"rss_kb", rss}});
  });

  server.Post("/api/snapshot", [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<uint32_t> pid = pid_param(req);
    if (!pid) return send_error(res, 400, "pid expects a process id");
    // Signalling is allowed for the user's own processes only, whoever runs the server.
    if (!own_process(*pid, res)) return;
    if (!backend_.snapshot) return send_error(res, 404, "snapshots are not available");
    std::lock_guard one_at_a_time(state_->snapshot_mutex);
    try {
      send_json(res, backend_.snapshot(*pid));
    } catch (const std::exception& e) {
      send_error(res, 409, e.what());
    }
  });

  server.Get("/api/live", [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<uint32_t> pid = pid_param(req);
    if (!pid) return send_error(res, 400, "pid expects a process id");
    if (!backend_.live) return send_error(res, 404, "live reports are not available");
    try {
      send_json(res, {{"pid", *pid}, {"live", backend_.live(*pid)}});
    } catch (const std::exception& e) {
      send_error(res, 409, e.what());
    }
  });

  server.Get("/api/profile", [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<uint32_t> pid = pid_param(req);
    if (!pid) return send_error(res, 400, "pid expects a process id");
    std::optional<uint64_t> from_us;
    std::optional<uint64_t> to_us;
    if (!window_params(req, res, &from_us, &to_us)) return;
    // Its heap profile shows what the process allocated: the user's own processes only.
    if (!own_process(*pid, res)) return;
    if (!backend_.running_profile) return send_error(res, 404, "heap profiles are not available");
    try {
      send_json(res, backend_.running_profile(*pid, from_us, to_us));
    } catch (const std::exception& e) {
      send_error(res, 409, e.what());
    }
  });

  server.Get("/api/files", [this](const httplib::Request&, httplib::Response& res) {
    send_json(res, {{"files", backend_.file_names}});
  });

  // Files are chosen by their index in the command line's list: no request names a path.
  server.Get("/api/file", [this](const httplib::Request& req, httplib::Response& res) {
    uint32_t index = 0;
    if (!req.has_param("index") || !top::try_parse_u32(req.get_param_value("index"), &index) ||
        index >= backend_.file_names.size() || !backend_.open_file) {
      return send_error(res, 404, "no such file");
    }
    std::optional<uint64_t> from_us;
    std::optional<uint64_t> to_us;
    if (!window_params(req, res, &from_us, &to_us)) return;
    try {
      send_json(res, backend_.open_file(index, from_us, to_us));
    } catch (const std::exception& e) {
      send_error(res, 422, e.what());
    }
  });
}

}  // namespace memtrack::ui
