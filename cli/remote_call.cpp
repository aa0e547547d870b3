// ptrace calls into another process (remote_call.h).
#include "cli/remote_call.h"

#include <dirent.h>
#include <elf.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

namespace memtrack::cli {
namespace {

std::string text_of(pid_t pid) {
  return std::to_string(pid);
}

// Why ptrace was refused, in the words of what to do.
std::string denied_reason(pid_t pid) {
  std::ifstream scope_file("/proc/sys/kernel/yama/ptrace_scope");
  int scope = 0;
  scope_file >> scope;
  std::string who = "process " + text_of(pid);
  if (scope == 3) {
    return "cannot attach to " + who +
           ": ptrace is disabled on this system (kernel.yama.ptrace_scope=3, until reboot)";
  }
  if (scope == 2) {
    return "cannot attach to " + who +
           ": only a process with CAP_SYS_PTRACE may (kernel.yama.ptrace_scope=2): run memtrack "
           "attach as root";
  }
  if (scope == 1 && geteuid() != 0) {
    return "cannot attach to " + who +
           ": ptrace is restricted to a process's ancestors (kernel.yama.ptrace_scope=1): run "
           "memtrack attach as root or with CAP_SYS_PTRACE (setcap cap_sys_ptrace+ep), or set "
           "kernel.yama.ptrace_scope=0";
  }
  return "cannot attach to " + who +
         ": permission denied (another user's process, or a setuid one: run memtrack attach as "
         "its user or as root)";
}

std::vector<pid_t> threads_of(pid_t pid) {
  std::vector<pid_t> tids{pid};  // the main thread first: its stack grows on demand
  std::string path = "/proc/" + text_of(pid) + "/task";
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) throw Error("no process " + text_of(pid));
  while (dirent* entry = readdir(dir)) {
    pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (tid > 0 && tid != pid) tids.push_back(tid);
  }
  closedir(dir);
  return tids;
}

#if defined(__x86_64__)

constexpr size_t kXstateBytes = 16384;
constexpr uint64_t kScratchBytes = 8192;
constexpr uint64_t kRedZone = 128;

// Waits for `tid` to change state, up to the deadline. False on timeout.
bool wait_for(pid_t tid, int* status, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    pid_t got = waitpid(tid, status, __WALL | WNOHANG);
    if (got == tid) return true;
    if (got < 0 && errno != EINTR) {
      throw Error("lost the thread " + text_of(tid) + " while attaching: " + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// Stopped at an instruction where a call may start: outside the unsafe code, or inside it
// waiting in a system call (orig_rax is the call, rax the kernel's "restart" codes) that is
// not a lock's futex wait.
bool safe_to_call(const user_regs_struct& regs, const std::vector<CodeRange>& unsafe) {
  bool in_unsafe = false;
  for (const CodeRange& r : unsafe)
    in_unsafe = in_unsafe || (regs.rip >= r.start && regs.rip < r.end);
  if (!in_unsafe) return true;
  auto rax = static_cast<int64_t>(regs.rax);
  auto call = static_cast<int64_t>(regs.orig_rax);
  bool waiting = call >= 0 && rax <= -512 && rax >= -516;  // -ERESTARTSYS .. -ERESTART_RESTARTBLOCK
  return waiting && call != SYS_futex;
}

#endif

}  // namespace

#if defined(__x86_64__)

RemoteThread::RemoteThread(pid_t pid, const std::vector<CodeRange>& unsafe, double timeout_s)
    : pid_(pid) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  for (;;) {
    for (pid_t tid : threads_of(pid)) {
      if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
        if (errno == ESRCH) continue;  // gone meanwhile
        if (errno == EPERM) throw Error(denied_reason(pid));
        throw Error("cannot attach to process " + text_of(pid) + ": " + std::strerror(errno));
      }
      int status = 0;
      if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0 ||
          !wait_for(tid, &status, std::chrono::steady_clock::now() + std::chrono::seconds(2)) ||
          !WIFSTOPPED(status)) {
        ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
        continue;
      }
      user_regs_struct regs{};
      if (ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0 || !safe_to_call(regs, unsafe)) {
        ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
        continue;
      }
      tid_ = tid;
      saved_regs_.assign(reinterpret_cast<unsigned char*>(&regs),
                         reinterpret_cast<unsigned char*>(&regs) + sizeof(regs));
      saved_xstate_.resize(kXstateBytes);
      iovec io{saved_xstate_.data(), saved_xstate_.size()};
      if (ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &io) != 0) {
        ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
        throw Error("cannot read the FPU state of thread " + text_of(tid) + ": " +
                    std::strerror(errno));
      }
      saved_xstate_.resize(io.iov_len);
      scratch_ = (regs.rsp - kRedZone - kScratchBytes) & ~uint64_t{15};
      return;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw Error("cannot attach to process " + text_of(pid) +
                  ": none of its threads stopped outside the C library within " +
                  std::to_string(static_cast<int>(timeout_s)) +
                  " s (each was inside malloc or the loader); try again");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

RemoteThread::~RemoteThread() {
  restore();
}

void RemoteThread::restore() {
  if (restored_ || tid_ == 0) return;
  restored_ = true;
  ptrace(PTRACE_SETREGS, tid_, nullptr, saved_regs_.data());
  iovec io{saved_xstate_.data(), saved_xstate_.size()};
  ptrace(PTRACE_SETREGSET, tid_, reinterpret_cast<void*>(NT_X86_XSTATE), &io);
  int first = pending_signals_.empty() ? 0 : pending_signals_.front();
  ptrace(PTRACE_DETACH, tid_, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(first)));
  for (size_t i = 1; i < pending_signals_.size(); ++i) {
    syscall(SYS_tgkill, pid_, tid_, pending_signals_[i]);
  }
}

uint64_t RemoteThread::push_string(const std::string& text) {
  size_t size = text.size() + 1;
  size_t words = (size + 7) / 8;
  if (scratch_used_ + words * 8 > kScratchBytes) throw Error("attach: too much text to pass");
  uint64_t address = scratch_ + scratch_used_;
  for (size_t w = 0; w < words; ++w) {
    uint64_t word = 0;
    size_t from = w * 8;
    std::memcpy(&word, text.c_str() + from, std::min<size_t>(8, size - from));
    if (ptrace(PTRACE_POKEDATA, tid_, reinterpret_cast<void*>(address + from),
               reinterpret_cast<void*>(word)) != 0) {
      throw Error("cannot write into process " + text_of(pid_) + ": " + std::strerror(errno));
    }
  }
  scratch_used_ += words * 8;
  return address;
}

std::string RemoteThread::read_string(uint64_t address, size_t max) const {
  std::string text;
  while (text.size() < max) {
    errno = 0;
    long word =
        ptrace(PTRACE_PEEKDATA, tid_, reinterpret_cast<void*>(address + text.size()), nullptr);
    if (errno != 0) break;
    char bytes[8];
    std::memcpy(bytes, &word, 8);
    for (char c : bytes) {
      if (c == '\0') return text;
      text.push_back(c);
    }
  }
  return text;
}

uint64_t RemoteThread::call(uint64_t function, std::initializer_list<uint64_t> args,
                            double timeout_s) {
  user_regs_struct regs{};
  std::memcpy(&regs, saved_regs_.data(), sizeof(regs));
  unsigned long long* registers[] = {&regs.rdi, &regs.rsi, &regs.rdx,
                                     &regs.rcx, &regs.r8,  &regs.r9};
  size_t n = 0;
  for (uint64_t arg : args) *registers[n++] = arg;
  // The return address 0 ends the call with a fault at address 0, which the tracer catches.
  regs.rsp = scratch_ - 8;
  if (ptrace(PTRACE_POKEDATA, tid_, reinterpret_cast<void*>(regs.rsp), nullptr) != 0) {
    throw Error("cannot write into process " + text_of(pid_) + ": " + std::strerror(errno));
  }
  regs.rip = function;
  regs.rax = 0;
  regs.orig_rax = static_cast<unsigned long long>(-1);  // no system call restart in between
  if (ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) != 0 ||
      ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) {
    throw Error("cannot run code in process " + text_of(pid_) + ": " + std::strerror(errno));
  }
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  for (;;) {
    int status = 0;
    if (!wait_for(tid_, &status, deadline)) {
      ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr);
      wait_for(tid_, &status, std::chrono::steady_clock::now() + std::chrono::seconds(1));
      throw Error("the call into process " + text_of(pid_) + " did not return within " +
                  std::to_string(static_cast<int>(timeout_s)) +
                  " s; it was interrupted, and the process may be left holding a lock");
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      restored_ = true;
      throw Error("process " + text_of(pid_) + " ended while memtrack attached to it");
    }
    if (!WIFSTOPPED(status)) continue;
    int sig = WSTOPSIG(status);
    if ((status >> 16) == PTRACE_EVENT_STOP) {  // a group stop or our interrupt: go on
      ptrace(PTRACE_CONT, tid_, nullptr, nullptr);
      continue;
    }
    if (sig == SIGSEGV) {
      user_regs_struct now{};
      ptrace(PTRACE_GETREGS, tid_, nullptr, &now);
      if (now.rip == 0) return now.rax;
      throw Error("the call into process " + text_of(pid_) + " faulted (at 0x" + [&] {
        char hex[32];
        std::snprintf(hex, sizeof(hex), "%llx", now.rip);
        return std::string(hex);
      }() + "); the process's registers were restored");
    }
    pending_signals_.push_back(sig);  // delivered when the thread is given back
    ptrace(PTRACE_CONT, tid_, nullptr, nullptr);
  }
}

#else

RemoteThread::RemoteThread(pid_t pid, const std::vector<CodeRange>&, double) : pid_(pid) {
#if defined(__aarch64__)
  const char* arch = "aarch64";
#elif defined(__arm__)
  const char* arch = "32-bit ARM";
#else
  const char* arch = "another architecture";
#endif
  throw Error(std::string("memtrack attach supports x86-64 processes only (this memtrack is "
                          "built for ") +
              arch + ")");
}
RemoteThread::~RemoteThread() = default;
void RemoteThread::restore() {}
uint64_t RemoteThread::push_string(const std::string&) {
  return 0;
}
std::string RemoteThread::read_string(uint64_t, size_t) const {
  return {};
}
uint64_t RemoteThread::call(uint64_t, std::initializer_list<uint64_t>, double) {
  return 0;
}

#endif

}  // namespace memtrack::cli
