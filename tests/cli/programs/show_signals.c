// Prints the signals whose action is not the default at main, one "signal N" line each,
// as sigaction and signal report them; then "done". Under memtrack it must print what it
// prints without memtrack.
#include <signal.h>
#include <stdio.h>

int main(void) {
  for (int sig = 1; sig < 65; ++sig) {
    struct sigaction old;
    if (sigaction(sig, NULL, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) printf("signal %d\n", sig);
  }
  // signal() answers with the previous handler: the default, then the one set here.
  void (*previous)(int) = signal(SIGSEGV, SIG_IGN);
  printf("SIGSEGV was %s\n", previous == SIG_DFL ? "default" : "not default");
  previous = signal(SIGSEGV, SIG_DFL);
  printf("SIGSEGV then %s\n", previous == SIG_IGN ? "ignored" : "not ignored");
  printf("done\n");
  return 0;
}
