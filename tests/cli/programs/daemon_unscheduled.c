// A daemon that has not run yet when the program ends: the program seizes its child (the
// middle process) with ptrace, following forks, so the daemon the middle forks starts in a
// ptrace stop, before it runs anything of its own (its fork handlers included), and is then
// detached with SIGSTOP: it stays stopped. The middle exits as soon as fork returns.
// Prints "daemon PID parent MIDDLE" on stdout and exits 0; exits 3 if ptrace is not
// permitted here, 1 on another failure. The stopped daemon is the caller's to kill.
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"

// The middle process: waits until it is seized, forks the daemon and exits at once.
static void middle(int seized_fd) {
  char byte;
  while (read(seized_fd, &byte, 1) < 0) {
  }
  close(seized_fd);
  setsid();
  if (fork() == 0) {  // the daemon, once it runs (not before the test kills it)
    void* p = malloc(64);
    ESCAPE(p);
    pause();
    _exit(0);
  }
  _exit(0);
}

// Follows `child` with ptrace until it has exited and its daemon is detached, stopped.
// Returns the daemon's pid, -1 on failure.
static pid_t detach_daemon_stopped(pid_t child) {
  pid_t daemon = -1;
  int exited = 0;
  int detached = 0;
  while (!exited || !detached) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, __WALL);
    if (pid < 0) return -1;
    if (pid == child && (WIFEXITED(status) || WIFSIGNALED(status))) {
      exited = 1;
    } else if (pid == child && status >> 8 == (SIGTRAP | (PTRACE_EVENT_FORK << 8))) {
      unsigned long message = 0;
      ptrace(PTRACE_GETEVENTMSG, child, 0, &message);
      daemon = (pid_t)message;
      ptrace(PTRACE_CONT, child, 0, 0);
    } else if (pid == child) {
      ptrace(PTRACE_CONT, child, 0, 0);
    } else if (WIFSTOPPED(status)) {  // the daemon's first stop: it has not run yet
      // Detached from this stop, it would resume (a signal passed to PTRACE_DETACH is only
      // delivered from a signal-delivery stop): SIGSTOP is queued first, and a process
      // handles its signals before it runs an instruction of its own.
      daemon = pid;
      if (kill(pid, SIGSTOP) != 0 || ptrace(PTRACE_DETACH, pid, 0, 0) != 0) return -1;
      detached = 1;
    }
  }
  return daemon;
}

int main(void) {
  int seized[2];
  if (pipe(seized) != 0) return 1;
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    close(seized[1]);
    middle(seized[0]);
  }
  close(seized[0]);
  if (ptrace(PTRACE_SEIZE, child, 0, PTRACE_O_TRACEFORK) != 0) {
    perror("ptrace");
    kill(child, SIGKILL);
    return 3;
  }
  if (write(seized[1], "s", 1) != 1) return 1;
  close(seized[1]);
  pid_t daemon = detach_daemon_stopped(child);
  if (daemon <= 0) return 1;
  printf("daemon %d parent %d\n", (int)daemon, (int)child);
  return 0;
}
