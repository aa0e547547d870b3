// Preloaded ahead of gcc 12's liblsan.so.0 by bench/compare.py. That runtime, when preloaded
// rather than linked with -fsanitize=leak, never resolves the libc function behind its signal()
// interceptor and jumps to address 0 at the program's first signal() call (git and as crash at
// start); its sigaction() interceptor works. This signal() does what glibc's does, through
// sigaction(), so LeakSanitizer can be measured on those programs. Allocation is not touched.
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>

sighandler_t signal(int signum, sighandler_t handler) {
  struct sigaction action, old;
  memset(&action, 0, sizeof action);
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, signum);  // BSD semantics, as glibc: block it while handling
  action.sa_flags = SA_RESTART;
  if (sigaction(signum, &action, &old) < 0) return SIG_ERR;
  return old.sa_handler;
}
