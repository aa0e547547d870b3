// libcli_preload_hello.so: a user's own LD_PRELOAD library. Its constructor writes
// "preload_hello: loaded in NAME" (NAME = the program's short name) to stderr.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void say_hello(void) {
  char line[256];
  int n =
      snprintf(line, sizeof(line), "preload_hello: loaded in %s\n", program_invocation_short_name);
  if (n > 0) {
    ssize_t ignored = write(STDERR_FILENO, line, strlen(line));
    (void)ignored;
  }
}
