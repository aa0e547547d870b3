// sigaction and signal, interposed so that the program sees its own signal table: where
// memtrack stands in for the default action, the program is told SIG_DFL, and a program
// that asks for SIG_DFL there keeps memtrack's stand-in (which ends the process just as the
// default would, after the report). Any other action replaces memtrack's.
// Calls libc (the real sigaction) but never malloc.
#include "runtime/signal_table.h"

#include <atomic>
#include <cstring>

#include "runtime/runtime.h"

namespace memtrack::rt {
namespace {

constexpr int kMaxSignal = 65;
// Handler memtrack installed for a signal, or null where the program has the action it
// chose. Written by the constructor and by the hooks.
std::atomic<void (*)(int, siginfo_t*, void*)> g_stand_in[kMaxSignal];

bool valid(int sig) {
  return sig > 0 && sig < kMaxSignal;
}

bool is_default(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == SIG_DFL;
}

struct sigaction stand_in_action(void (*handler)(int, siginfo_t*, void*)) {
  struct sigaction action {};
  action.sa_sigaction = handler;
  action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  return action;
}

}  // namespace

bool install_hidden_handler(int sig, void (*handler)(int, siginfo_t*, void*)) {
  struct sigaction old {};
  if (!valid(sig) || real_sigaction(sig, nullptr, &old) != 0 || !is_default(old)) return false;
  struct sigaction action = stand_in_action(handler);
  if (real_sigaction(sig, &action, nullptr) != 0) return false;
  g_stand_in[sig].store(handler, std::memory_order_release);
  return true;
}

void restore_default_action(int sig) {
  if (!valid(sig)) return;
  g_stand_in[sig].store(nullptr, std::memory_order_release);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  real_sigaction(sig, &dfl, nullptr);
}

}  // namespace memtrack::rt

namespace rt = memtrack::rt;

#define MEMTRACK_EXPORT extern "C" __attribute__((visibility("default")))

MEMTRACK_EXPORT int sigaction(int sig, const struct sigaction* action,
                              struct sigaction* old) noexcept {
  if (!rt::valid(sig) || rt::in_runtime()) return rt::real_sigaction(sig, action, old);
  auto* stand_in = rt::g_stand_in[sig].load(std::memory_order_acquire);
  int result = 0;
  if (action != nullptr && stand_in != nullptr && rt::is_default(*action)) {
    result = rt::real_sigaction(sig, nullptr, old);  // keep the stand-in
  } else {
    result = rt::real_sigaction(sig, action, old);
    if (result == 0 && action != nullptr) rt::g_stand_in[sig].store(nullptr);
  }
  if (result == 0 && old != nullptr && stand_in != nullptr) {
    memset(old, 0, sizeof(*old));
    old->sa_handler = SIG_DFL;
  }
  return result;
}

// glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its handler).
MEMTRACK_EXPORT sighandler_t signal(int sig, sighandler_t handler) noexcept {
  struct sigaction action {};
  struct sigaction old {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  if (sig > 0 && sig < NSIG) sigaddset(&action.sa_mask, sig);
  action.sa_flags = SA_RESTART;
  if (sigaction(sig, &action, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}
