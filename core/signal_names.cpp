// Signal and si_code names (Linux values, as in <signal.h> and <asm-generic/siginfo.h>).
// Freestanding: no allocation, no libc calls.
#include "core/signal_names.h"

namespace memtrack::core {
namespace {

constexpr int kSigill = 4, kSigtrap = 5, kSigabrt = 6, kSigbus = 7, kSigfpe = 8, kSigsegv = 11;

const char* segv_cause(int code) {
  switch (code) {
    case 1:
      return "address not mapped";
    case 2:
      return "invalid permissions for mapped object";
    case 3:
      return "failed address bound checks";
    case 4:
      return "failed protection key checks";
    default:
      return nullptr;
  }
}

const char* bus_cause(int code) {
  switch (code) {
    case 1:
      return "invalid address alignment";
    case 2:
      return "nonexistent physical address (a mapped file shorter than the mapping?)";
    case 3:
      return "object-specific hardware error";
    default:
      return nullptr;
  }
}

const char* fpe_cause(int code) {
  static const char* const kCauses[] = {
      nullptr,
      "integer divide by zero",
      "integer overflow",
      "floating-point divide by zero",
      "floating-point overflow",
      "floating-point underflow",
      "floating-point inexact result",
      "floating-point invalid operation",
      "subscript out of range",
  };
  return code > 0 && code < 9 ? kCauses[code] : nullptr;
}

const char* ill_cause(int code) {
  static const char* const kCauses[] = {
      nullptr,
      "illegal opcode",
      "illegal operand",
      "illegal addressing mode",
      "illegal trap",
      "privileged opcode",
      "privileged register",
      "coprocessor error",
      "internal stack error",
  };
  return code > 0 && code < 9 ? kCauses[code] : nullptr;
}

}  // namespace

const char* signal_name(int sig) {
  static const char* const kNames[] = {
      nullptr,     "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
      "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
      "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
      "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS",
  };
  return sig > 0 && sig < 32 ? kNames[sig] : nullptr;
}

const char* signal_cause(int sig, int code) {
  if (code <= 0) {
    switch (code) {
      case 0:
        return "sent by kill";
      case -1:
        return "sent by sigqueue";
      case -6:
        return sig == kSigabrt ? "raised by the program (abort)" : "raised by the program";
      default:
        return nullptr;
    }
  }
  switch (sig) {
    case kSigsegv:
      return segv_cause(code);
    case kSigbus:
      return bus_cause(code);
    case kSigfpe:
      return fpe_cause(code);
    case kSigill:
    case kSigtrap:
      return sig == kSigill ? ill_cause(code) : nullptr;
    default:
      return nullptr;
  }
}

}  // namespace memtrack::core
