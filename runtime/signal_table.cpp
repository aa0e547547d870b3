// The handlers memtrack stands in with for the default action, hidden from the program
// (signal_table.h). Calls libc (the real sigaction) but never malloc.
#include "runtime/signal_table.h"

#include <atomic>

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

void (*stand_in_handler(int sig))(int, siginfo_t*, void*) {
  return valid(sig) ? g_stand_in[sig].load(std::memory_order_acquire) : nullptr;
}

void forget_stand_in(int sig) {
  if (valid(sig)) g_stand_in[sig].store(nullptr);
}

bool is_default_action(const struct sigaction& action) {
  return is_default(action);
}

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
