// Files left open: a FILE from fopen that is never fclosed, descriptors from open, openat and
// creat, a directory. What is closed again (fopen/fclose, open/close) is not reported, and the
// FILE object glibc allocates is not reported as memory: the program leaks no memory.
// The program runs in its temporary directory (%t); the report names files by full path.
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-GROUPS: 0
// EXPECT-RESOURCE: file log.txt, fopen("w") | open_log@fopen main@log
// EXPECT-RESOURCE: file data.bin, open(O_RDWR|O_CREAT|O_TRUNC) | open_data@open main
// EXPECT-RESOURCE: file at.txt, openat(O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC) | open_at@openat main
// EXPECT-RESOURCE: file made.txt, creat(O_WRONLY|O_CREAT|O_TRUNC) | make_file@creat main
// EXPECT-RESOURCE: directory ., open(O_RDONLY|O_DIRECTORY) | open_dir@dir main
#include <fcntl.h>
#include <unistd.h>

#include "e2e_util.h"

__attribute__((noinline)) FILE* open_log(void) {
  FILE* log = fopen("log.txt", "w");  // @fopen
  CHECK(log != NULL);
  return log;
}

__attribute__((noinline)) int open_data(void) {
  int fd = open("data.bin", O_RDWR | O_CREAT | O_TRUNC, 0644);  // @open
  CHECK(fd >= 0);
  return fd;
}

__attribute__((noinline)) int open_at(int dir) {
  int fd = openat(dir, "at.txt", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);  // @openat
  CHECK(fd >= 0);
  return fd;
}

__attribute__((noinline)) int make_file(void) {
  int fd = creat("made.txt", 0600);  // @creat
  CHECK(fd >= 0);
  return fd;
}

__attribute__((noinline)) int open_dir(void) {
  int fd = open(".", O_RDONLY | O_DIRECTORY);  // @dir
  CHECK(fd >= 0);
  return fd;
}

// Opened and closed again: not reported.
__attribute__((noinline)) void read_and_close(void) {
  FILE* f = fopen("log.txt", "r");
  CHECK(f != NULL);
  CHECK(fclose(f) == 0);
  int fd = open("data.bin", O_RDONLY);
  CHECK(fd >= 0);
  CHECK(close(fd) == 0);
}

int main(void) {
  FILE* log = open_log();  // @log
  CHECK(fputs("started\n", log) >= 0);
  int dir = open_dir();
  ESCAPE(open_data());
  ESCAPE(open_at(dir));
  ESCAPE(make_file());
  read_and_close();
  return 0;
}
