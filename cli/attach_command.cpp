// memtrack attach PID and memtrack detach PID (docs/attach.md): the runtime loaded into a
// running process with ptrace (cli/remote_call.h), its final report read like a snapshot's.
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/launcher.h"
#include "cli/live_watcher.h"
#include "cli/output_paths.h"
#include "cli/pipeline.h"
#include "cli/pprof_server.h"
#include "cli/preflight.h"
#include "cli/profile_command.h"
#include "cli/profile_follower.h"
#include "cli/remote_call.h"
#include "cli/result_dir.h"
#include "cli/write_outputs.h"
#include "core/snapshot_signal.h"
#include "proc/memtrack_mark.h"

namespace memtrack::cli {
namespace {

// What memtrack_attach returns (runtime/hooks/attach.h, AttachStatus).
std::string attach_status_message(uint64_t status, uint32_t pid) {
  std::string who = "process " + std::to_string(pid);
  switch (status) {
    case 1:
      return who + " is already attached by another memtrack attach";
    case 2:
      return who +
             " already runs under memtrack (memtrack run or the link-time runtime): use "
             "'memtrack snapshot " +
             std::to_string(pid) + "'";
    case 3:
      return "the runtime in " + who + " cannot write its log into the result directory";
    case 4:
      return "the runtime in " + who + " cannot find malloc, free, calloc and realloc";
    case 5:
      return "the runtime in " + who + " cannot start its thread";
    default:
      return "the runtime in " + who + " refused to attach (status " + std::to_string(status) + ")";
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool settings_published(uint32_t pid) {
  return top::maps_show_attached(read_text("/proc/" + std::to_string(pid) + "/maps"), pid);
}

std::string status_field(const std::string& status, const std::string& name) {
  std::istringstream lines(status);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(name + ":", 0) == 0) {
      size_t start = line.find_first_not_of(" \t", name.size() + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  }
  return "";
}

// A mapping of /proc/PID/maps.
struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;
  bool executable = false;
  std::string path;
};

std::vector<Mapping> read_maps(uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  if (!in)
    throw Error("cannot read /proc/" + std::to_string(pid) + "/maps: " + std::strerror(errno) +
                (errno == EACCES ? " (run memtrack attach as the process's user or as root)" : ""));
  std::vector<Mapping> maps;
  std::string line;
  while (std::getline(in, line)) {
    Mapping m;
    char perms[8] = {};
    unsigned long long start = 0, end = 0, offset = 0;
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset,
                    &path_at) < 4) {
      continue;
    }
    m.start = start;
    m.end = end;
    m.offset = offset;
    m.executable = perms[2] == 'x';
    if (path_at > 0 && static_cast<size_t>(path_at) < line.size()) m.path = line.substr(path_at);
    maps.push_back(m);
  }
  return maps;
}

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

bool is_libc(const std::string& path) {
  std::string name = base_name(path);
  return name == "libc.so.6" || (name.rfind("libc-", 0) == 0 && name.ends_with(".so"));
}

// The address of `symbol` (from the file's dynamic symbol table) in the process, where the
// file is mapped (its mapping at file offset 0). 0 if either is missing.
uint64_t symbol_address(uint32_t pid, const std::vector<Mapping>& maps, const std::string& path,
                        const char* symbol) {
  uint64_t base = 0;
  for (const Mapping& m : maps) {
    if (m.path == path && m.offset == 0) {
      base = m.start;
      break;
    }
  }
  if (base == 0) return 0;
  std::string file = "/proc/" + std::to_string(pid) + "/root" + path;
  int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  uint64_t address = 0;
  uint64_t first_load = UINT64_MAX;
  size_t phnum = 0;
  if (elf != nullptr && elf_getphdrnum(elf, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) != nullptr && ph.p_type == PT_LOAD) {
        first_load = std::min<uint64_t>(first_load, ph.p_vaddr & ~uint64_t{0xfff});
      }
    }
    Elf_Scn* scn = nullptr;
    while (address == 0 && (scn = elf_nextscn(elf, scn)) != nullptr) {
      GElf_Shdr sh;
      if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_DYNSYM) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      size_t count = sh.sh_entsize != 0 ? sh.sh_size / sh.sh_entsize : 0;
      for (size_t i = 0; data != nullptr && i < count; ++i) {
        GElf_Sym sym;
        if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr || sym.st_value == 0 ||
            GELF_ST_TYPE(sym.st_info) != STT_FUNC) {
          continue;
        }
        const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (name != nullptr && std::strcmp(name, symbol) == 0) {
          address = base - (first_load == UINT64_MAX ? 0 : first_load) + sym.st_value;
          break;
        }
      }
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return address;
}

// The process must be one memtrack can load its runtime into: throws Error with what to do.
void check_attachable(uint32_t pid, const std::vector<Mapping>& maps) {
  std::string proc = "/proc/" + std::to_string(pid);
  std::string status = read_text(proc + "/status");
  std::string state = status_field(status, "State");
  if (state.rfind("T", 0) == 0 || state.rfind("t", 0) == 0) {
    throw Error("process " + std::to_string(pid) + " is stopped: continue it first (kill -CONT " +
                std::to_string(pid) + ")");
  }
  if (state.rfind("Z", 0) == 0)
    throw Error("process " + std::to_string(pid) + " has ended (zombie)");
  std::string tracer = status_field(status, "TracerPid");
  if (!tracer.empty() && tracer != "0") {
    std::string name = read_text("/proc/" + tracer + "/comm");
    if (!name.empty() && name.back() == '\n') name.pop_back();
    throw Error("process " + std::to_string(pid) + " is already traced by process " + tracer +
                (name.empty() ? "" : " (" + name + ")") + ": detach that first");
  }
  struct stat own_ns {
  }, target_ns{};
  if (stat("/proc/self/ns/mnt", &own_ns) == 0 &&
      stat((proc + "/ns/mnt").c_str(), &target_ns) == 0 && own_ns.st_ino != target_ns.st_ino) {
    throw Error("process " + std::to_string(pid) +
                " runs in another mount namespace (a container): run memtrack attach inside it, "
                "e.g. nsenter -t " +
                std::to_string(pid) + " -m -p memtrack attach ... (docs/attach.md)");
  }
  std::string exe = proc + "/exe";
  std::ifstream header(exe, std::ios::binary);
  unsigned char ident[20] = {};
  header.read(reinterpret_cast<char*>(ident), sizeof(ident));
  if (!header)
    throw Error("cannot read " + exe + ": " + std::strerror(errno) +
                " (run as the process's user or root)");
  uint16_t machine = static_cast<uint16_t>(ident[18] | ident[19] << 8);
  if (std::memcmp(ident, ELFMAG, SELFMAG) != 0 || machine != EM_X86_64) {
    throw Error("process " + std::to_string(pid) +
                " is not an x86-64 program: memtrack attach supports x86-64 processes only");
  }
  bool glibc = false;
  bool musl = false;
  for (const Mapping& m : maps) {
    glibc = glibc || is_libc(m.path);
    musl = musl || base_name(m.path).rfind("ld-musl", 0) == 0;
  }
  std::string text = read_text(proc + "/maps");
  if (top::maps_show_memtrack(text) || carries_runtime(exe)) {
    throw Error(attach_status_message(2, pid));
  }
  if (top::maps_show_attached(text, pid)) {
    throw Error(attach_status_message(1, pid));
  }
  if (!glibc) {
    if (carries_runtime(exe)) {
      throw Error("process " + std::to_string(pid) +
                  " carries memtrack's link-time runtime: use 'memtrack snapshot " +
                  std::to_string(pid) + "'");
    }
    throw Error("process " + std::to_string(pid) +
                (musl ? " uses musl, not glibc" : " is statically linked (no glibc to load into)") +
                ": memtrack attach needs a dynamically linked glibc program (link a static one "
                "with 'memtrack link-flags' and run it under memtrack run)");
  }
}

// Code a thread must not be stopped in when it is made to call dlopen: the C library (malloc's
// locks), the loader (its lock) and the unwinder (its lock, taken by the runtime's start).
std::vector<CodeRange> unsafe_code(const std::vector<Mapping>& maps) {
  std::vector<CodeRange> ranges;
  for (const Mapping& m : maps) {
    std::string name = base_name(m.path);
    if (m.executable && (is_libc(m.path) || name.rfind("ld-linux", 0) == 0 ||
                         name.rfind("libgcc_s", 0) == 0 || name.rfind("libpthread", 0) == 0)) {
      ranges.push_back(CodeRange{m.start, m.end});
    }
  }
  return ranges;
}

std::atomic<int> g_stop_signal{0};

void on_stop_signal(int sig) {
  g_stop_signal.store(sig);
}

// Running: it exists and has not ended (a zombie waits for its parent to reap it).
bool process_running(uint32_t pid) {
  if (!process_exists(pid)) return false;
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
}

std::string detach_report_path(const std::string& dir, uint32_t pid) {
  return dir + "/snapshot." + std::to_string(pid) + "." + std::to_string(core::kDetachRequestId) +
         ".mtr";
}

std::string log_path(const std::string& dir, uint32_t pid) {
  return dir + "/attach." + std::to_string(pid) + ".log";
}

void send_detach_request(uint32_t pid) {
  union sigval value {};
  value.sival_int = static_cast<int>(core::kDetachRequestId);
  if (sigqueue(static_cast<pid_t>(pid), core::snapshot_signal(), value) != 0 && errno != ESRCH) {
    throw Error("cannot signal process " + std::to_string(pid) + ": " + std::strerror(errno));
  }
}

// The runtime's warnings from its log (the program's stderr stays the program's).
void print_runtime_warnings(const std::string& log) {
  std::istringstream lines(read_text(log));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("warning") != std::string::npos || line.find("note:") != std::string::npos) {
      std::cerr << line << "\n";
    }
  }
}

// Loads the runtime into `pid` and starts it; returns the milliseconds the thread it used
// was held.
double inject_runtime(uint32_t pid, const std::string& runtime, const std::string& options,
                      const std::string& log) {
  std::vector<Mapping> maps = read_maps(pid);
  check_attachable(pid, maps);
  std::string libc;
  for (const Mapping& m : maps) {
    if (is_libc(m.path) && m.offset == 0) libc = m.path;
  }
  uint64_t dlopen_address = symbol_address(pid, maps, libc, "dlopen");
  uint64_t dlerror_address = symbol_address(pid, maps, libc, "dlerror");
  if (dlopen_address == 0) {
    throw Error("cannot find dlopen in process " + std::to_string(pid) + "'s " + libc +
                " (glibc 2.34 or later is needed)");
  }
  auto start = std::chrono::steady_clock::now();
  RemoteThread thread(static_cast<pid_t>(pid), unsafe_code(maps), 2.0);
  uint64_t path_text = thread.push_string(runtime);
  uint64_t handle = thread.call(dlopen_address, {path_text, uint64_t{RTLD_NOW | RTLD_LOCAL}}, 10.0);
  if (handle == 0) {
    std::string why =
        dlerror_address != 0 ? thread.read_string(thread.call(dlerror_address, {}, 5.0), 512) : "";
    throw Error("process " + std::to_string(pid) + " could not load " + runtime +
                (why.empty() ? "" : ": " + why));
  }
  uint64_t attach_address = symbol_address(pid, read_maps(pid), runtime, "memtrack_attach");
  if (attach_address == 0) {
    throw Error("cannot find memtrack_attach in " + runtime + " as loaded in process " +
                std::to_string(pid));
  }
  uint64_t options_text = thread.push_string(options);
  uint64_t log_text = thread.push_string(log);
  uint64_t status =
      thread.call(attach_address, {options_text, log_text, static_cast<uint64_t>(getpid())}, 10.0) &
      0xffffffff;
  if (status != 0) throw Error(attach_status_message(status, pid));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

size_t thread_count(uint32_t pid) {
  std::error_code error;
  auto tasks = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error);
  return error ? 0 : static_cast<size_t>(std::distance(begin(tasks), end(tasks)));
}

// A program that was single-threaded before the attach: memtrack's thread, now gone, made
// glibc take its malloc's locks for good; memtrack_after_detach (runtime/hooks/attach.h) tells
// glibc it is single-threaded again. Best effort: a warning if it cannot be done.
void restore_single_threaded(uint32_t pid, const std::string& runtime) {
  try {
    std::vector<Mapping> maps = read_maps(pid);
    uint64_t address = symbol_address(pid, maps, runtime, "memtrack_after_detach");
    if (address == 0) throw Error("memtrack_after_detach not found");
    RemoteThread thread(static_cast<pid_t>(pid), unsafe_code(maps), 2.0);
    thread.call(address, {}, 5.0);
  } catch (const Error& e) {
    std::cerr << "memtrack: warning: process " << pid
              << " is single-threaded again, but glibc could not be told (" << e.what()
              << "): its malloc keeps taking locks it would not need\n";
  }
}

// Waits for the end of the attach: Ctrl-C, --duration, memtrack detach or the process's end.
// Returns the path of the final report, or "" when the process ended without one.
std::string wait_for_end(const Config& config, uint32_t pid, const ResultDir& dir) {
  using Clock = std::chrono::steady_clock;
  auto started = Clock::now();
  std::string final_report = detach_report_path(dir.path(), pid);
  std::string exit_report = dir.path() + "/memtrack." + std::to_string(pid) + ".mtr";
  bool requested = false;
  Clock::time_point deadline{};
  for (;;) {
    if (std::filesystem::exists(final_report)) {
      // Written whole before it is renamed into place: ready once it is there. The runtime
      // then restores the GOT and withdraws its settings file: memtrack attach returns once
      // that is done, so the process is detached when it does.
      auto settle = Clock::now() + std::chrono::milliseconds(
                                       static_cast<int64_t>(config.snapshot_timeout_s * 1000));
      while (process_running(pid) && settings_published(pid) && Clock::now() < settle) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return final_report;
    }
    if (!process_running(pid)) {
      return std::filesystem::exists(exit_report) ? exit_report : "";
    }
    bool duration_over =
        config.attach_duration_s > 0 &&
        Clock::now() - started >= std::chrono::duration<double>(config.attach_duration_s);
    if (!requested && (g_stop_signal.load() != 0 || duration_over)) {
      send_detach_request(pid);
      requested = true;
      deadline = Clock::now() +
                 std::chrono::milliseconds(static_cast<int64_t>(config.snapshot_timeout_s * 1000));
    }
    if (requested && Clock::now() > deadline) {
      throw Error("process " + std::to_string(pid) + " wrote no final report within " +
                  std::to_string(static_cast<int>(config.snapshot_timeout_s)) +
                  " s (is it stopped? try a longer --timeout)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// libmemtrack_attach.so, beside libmemtrack.so (runtime/CMakeLists.txt).
std::string attach_runtime() {
  std::filesystem::path preload = std::filesystem::canonical(find_runtime());
  std::filesystem::path path = preload.parent_path() / "libmemtrack_attach.so";
  if (access(path.c_str(), R_OK) != 0) {
    throw Error("cannot find libmemtrack_attach.so beside " + preload.string() +
                " (memtrack attach loads it into the process; it is built on x86-64 only)");
  }
  return path.string();
}

}  // namespace

int attach_command(const Config& config) {
  check_binary_stdout(config);
  check_output_paths(config);
  uint32_t pid = config.snapshot_pid;
  if (!process_exists(pid)) throw Error("no process " + std::to_string(pid));
  if (static_cast<pid_t>(pid) == getpid()) throw Error("memtrack cannot attach to itself");
  report::Suppressions suppressions = load_suppressions(config);
  std::string runtime = attach_runtime();
  ResultDir dir("");
  // The process writes its reports there, as its own user.
  struct stat owner {};
  if (stat(("/proc/" + std::to_string(pid)).c_str(), &owner) == 0 && geteuid() == 0) {
    if (chown(dir.path().c_str(), owner.st_uid, owner.st_gid) != 0) {
      throw Error("cannot hand " + dir.path() + " to process " + std::to_string(pid) +
                  "'s user: " + std::strerror(errno));
    }
  }
  std::string options = "result_dir=" + quoted_option_value(dir.path());
  std::string profile = profile_runtime_option(config, dir.path());
  if (!profile.empty()) options += ":" + profile;
  std::string flags = runtime_flag_options(config);
  if (!flags.empty()) options += ":" + flags;
  std::string log = log_path(dir.path(), pid);
  struct sigaction act {};
  act.sa_handler = on_stop_signal;
  sigemptyset(&act.sa_mask);
  sigaction(SIGINT, &act, nullptr);
  sigaction(SIGTERM, &act, nullptr);
  // As under memtrack run: live reports, the heap profile and the pprof endpoint follow the
  // result directory and the process while it is attached.
  std::unique_ptr<LiveWatcher> watcher = start_live_watcher(config, dir.path(), suppressions);
  ProfileFollower profiles(config, dir.path());
  profiles.start();
  profiles.set_main_pid(pid);
  std::optional<PprofServerProcess> pprof;
  if (!config.pprof_http.empty()) pprof.emplace(parse_listen_address(config.pprof_http));
  bool single_threaded = thread_count(pid) == 1;
  double held_ms = inject_runtime(pid, runtime, options, log);
  auto attached_at = std::chrono::steady_clock::now();
  std::string comm = read_text("/proc/" + std::to_string(pid) + "/comm");
  if (!comm.empty() && comm.back() == '\n') comm.pop_back();
  char held[32];
  std::snprintf(held, sizeof(held), "%.1f", held_ms);
  std::cerr << "memtrack: attached to process " << pid << " (" << comm << ") in " << held
            << " ms; Ctrl-C, --duration or 'memtrack detach " << pid << "' ends it\n";
  print_runtime_warnings(log);
  if (pprof) {
    pprof->set_pid(static_cast<int>(pid));
    std::cerr << "memtrack: serving the process's heap at " << pprof->url()
              << "/debug/pprof/heap and " << pprof->url() << "/metrics\n";
  }
  std::string path = wait_for_end(config, pid, dir);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - attached_at).count();
  if (pprof) pprof->stop();
  if (watcher) watcher->stop();
  bool profiles_ok = profiles.finish();
  if (single_threaded && path == detach_report_path(dir.path(), pid) && process_running(pid)) {
    restore_single_threaded(pid, runtime);
  }
  print_runtime_warnings(log);
  if (path.empty()) {
    std::cerr << "memtrack: error: process " << pid
              << " ended while memtrack was attached, without a final report\n";
    return kExitToolFailed;
  }
  bool had_errors = false;
  report::Report report = build_report({path}, suppressions, std::nullopt, &had_errors);
  if (had_errors) return kExitToolFailed;
  char span[64];
  std::snprintf(span, sizeof(span), "%.1f", seconds);
  for (report::ProcessReport& process : report.processes) {
    process.occasion = std::string("detached after ") + span + " s attached";
  }
  bool text_to_stdout = !writes_a_format_to_stdout(config);
  if (!write_outputs(report, config, pid, text_to_stdout,
                     watcher ? watcher->reports() : std::vector<nlohmann::ordered_json>{}) ||
      !profiles_ok) {
    return kExitToolFailed;
  }
  return exit_status(report, config, 0);
}

int detach_command(const Config& config) {
  uint32_t pid = config.snapshot_pid;
  if (!process_exists(pid)) throw Error("no process " + std::to_string(pid));
  std::string maps = read_text("/proc/" + std::to_string(pid) + "/maps");
  std::string dir = top::maps_show_attach_runtime(maps) ? memtrack_result_dir(pid) : "";
  if (dir.empty() || !std::filesystem::exists(log_path(dir, pid))) {
    throw Error("process " + std::to_string(pid) + " is not attached by memtrack attach");
  }
  send_detach_request(pid);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(config.snapshot_timeout_s * 1000));
  while (std::filesystem::exists(log_path(dir, pid)) && process_exists(pid) &&
         !std::filesystem::exists(detach_report_path(dir, pid))) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw Error("process " + std::to_string(pid) + " did not detach within " +
                  std::to_string(static_cast<int>(config.snapshot_timeout_s)) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::cerr << "memtrack: detached from process " << pid
            << "; its report is printed by the memtrack attach that attached\n";
  return 0;
}

}  // namespace memtrack::cli
