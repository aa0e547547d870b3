// Tests for the signal dispositions and mask memtrack was started with (inherited_signals.h).
// Each runs in a forked child, as restore_inherited_signals does in the launcher: the test
// process's own dispositions stay as they were.
#include "cli/inherited_signals.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

namespace memtrack::cli {
namespace {

// Runs `body` in a child process and returns the text it returned, or why there is none.
std::string in_child(const std::function<std::string()>& body) {
  int fds[2];
  if (pipe(fds) != 0) return "no pipe";
  pid_t pid = fork();
  if (pid < 0) return "no fork";
  if (pid == 0) {
    close(fds[0]);
    std::string text = body();
    ssize_t written = write(fds[1], text.data(), text.size());
    _exit(written == static_cast<ssize_t>(text.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string text;
  char buffer[256];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof(buffer))) > 0) text.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed: " + text;
  return text;
}

void handler(int) {}

void set_disposition(int sig, void (*disposition)(int)) {
  struct sigaction action {};
  action.sa_handler = disposition;
  sigemptyset(&action.sa_mask);
  sigaction(sig, &action, nullptr);
}

// "ignored", "default" or "handler".
std::string disposition(int sig) {
  struct sigaction current {};
  sigaction(sig, nullptr, &current);
  return current.sa_handler == SIG_IGN   ? "ignored"
         : current.sa_handler == SIG_DFL ? "default"
                                         : "handler";
}

bool blocked(int sig) {
  sigset_t mask;
  sigprocmask(SIG_SETMASK, nullptr, &mask);
  return sigismember(&mask, sig) == 1;
}

TEST(InheritedSignals, RemembersWhichSignalsWereIgnored) {
  std::string result = in_child([] {
    set_disposition(SIGHUP, SIG_IGN);
    set_disposition(SIGUSR1, SIG_DFL);
    set_disposition(SIGUSR2, handler);
    remember_inherited_signals();
    set_disposition(SIGHUP, SIG_DFL);  // what memtrack does later does not change the answer
    return std::string(inherited_ignored(SIGHUP) ? "HUP " : "") +
           (inherited_ignored(SIGUSR1) ? "USR1 " : "") +
           (inherited_ignored(SIGUSR2) ? "USR2 " : "") + (inherited_ignored(0) ? "0 " : "") +
           (inherited_ignored(-1) ? "-1 " : "") + (inherited_ignored(NSIG) ? "NSIG " : "") + "end";
  });
  EXPECT_EQ(result, "HUP end");
}

TEST(InheritedSignals, RestorePutsBackIgnoredAndDefaultDispositions) {
  std::string result = in_child([] {
    set_disposition(SIGHUP, SIG_IGN);
    set_disposition(SIGUSR1, SIG_DFL);
    set_disposition(SIGUSR2, handler);  // a handler never survives exec: it comes back default
    remember_inherited_signals();
    set_disposition(SIGHUP, handler);
    set_disposition(SIGUSR1, SIG_IGN);
    restore_inherited_signals();
    return "HUP " + disposition(SIGHUP) + ", USR1 " + disposition(SIGUSR1) + ", USR2 " +
           disposition(SIGUSR2);
  });
  EXPECT_EQ(result, "HUP ignored, USR1 default, USR2 default");
}

TEST(InheritedSignals, RestorePutsBackTheMask) {
  std::string result = in_child([] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_SETMASK, &set, nullptr);
    remember_inherited_signals();
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_SETMASK, &set, nullptr);
    restore_inherited_signals();
    return std::string("USR1 ") + (blocked(SIGUSR1) ? "blocked" : "not blocked") + ", USR2 " +
           (blocked(SIGUSR2) ? "blocked" : "not blocked");
  });
  EXPECT_EQ(result, "USR1 blocked, USR2 not blocked");
}

TEST(InheritedSignals, RestoreBeforeRememberChangesNothing) {
  std::string result = in_child([] {
    set_disposition(SIGUSR1, handler);
    restore_inherited_signals();
    return disposition(SIGUSR1);
  });
  EXPECT_EQ(result, "handler");
}

}  // namespace
}  // namespace memtrack::cli
