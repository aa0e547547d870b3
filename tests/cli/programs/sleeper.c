// Leaks 100 bytes, creates the file argv[1] to say it is running, then sleeps forever with
// default signal dispositions (a SIGTERM kills it).
#include <fcntl.h>
#include <unistd.h>

#include "cli_util.h"

// The block is lost (no pointer to it survives), so it is definitely lost when SIGTERM ends
// the program.
__attribute__((noinline)) void leak_then_sleep(void) {
  void* p = malloc(100);
  ESCAPE(p);
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  leak_then_sleep();
  ESCAPE(0);
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return 2;
  close(fd);
  for (;;) sleep(1);
}
