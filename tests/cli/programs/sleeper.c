// Leaks 100 bytes, creates the file argv[1] to say it is running, then sleeps forever with
// default signal dispositions (a SIGTERM kills it).
#include <fcntl.h>
#include <unistd.h>

#include "cli_util.h"

__attribute__((noinline)) void* leak_then_sleep(void) {
  void* p = malloc(100);
  ESCAPE(p);
  return p;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* p = leak_then_sleep();
  ESCAPE(p);
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return 2;
  close(fd);
  for (;;) sleep(1);
}
