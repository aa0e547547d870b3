// A daemon-like program that writes its process title over its environment's memory, as
// redis and others do (setproctitle): the strings /proc/PID/environ shows are gone. Then
// leaks 48 bytes, creates the file named by argv[1] and waits until it receives SIGTERM.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"

extern char** environ;

static volatile sig_atomic_t g_stop;

static void on_term(int sig) {
  (void)sig;
  g_stop = 1;
}

int main(int argc, char** argv) {
  if (argc < 2) return 1;
  // The environment strings lie one after another; overwrite all of them.
  char* first = environ[0];
  char* last = first;
  for (char** e = environ; *e != NULL; ++e) last = *e + strlen(*e);
  if (first != NULL) memset(first, 'x', (size_t)(last - first));
  void* p = malloc(48);
  ESCAPE(p);
  p = NULL;
  ESCAPE(p);
  signal(SIGTERM, on_term);
  FILE* ready = fopen(argv[1], "w");
  if (ready == NULL) return 1;
  fclose(ready);
  while (!g_stop) pause();
  return 0;
}
