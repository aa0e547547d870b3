// Copies of descriptors: dup, dup2, dup3 and fcntl(F_DUPFD, F_DUPFD_CLOEXEC). A copy left open
// is reported with the call that made it (and its original's flags), a closed original is
// not; dup2 and dup3 onto an open descriptor close it; a failed dup2 closes nothing; dup2 of
// a descriptor onto itself changes nothing. A copy of stdout is the program's own.
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-RESOURCE: file %t/a.txt, dup(O_WRONLY|O_CREAT|O_TRUNC) | copy_of@dup main@copy
// EXPECT-RESOURCE: file %t/c.txt, dup2(O_RDONLY|O_CREAT) | redirect@dup2 main
// EXPECT-RESOURCE: file %t/a.txt, dup3(O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC) | main@dup3
// EXPECT-RESOURCE: file %t/a.txt, fcntl(O_WRONLY|O_CREAT|O_TRUNC) | main@dupfd
// EXPECT-RESOURCE: pipe pipe:*, dup(O_WRONLY) | main@stdout
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "e2e_util.h"

__attribute__((noinline)) int copy_of(int fd) {
  int copy = dup(fd);  // @dup
  CHECK(copy >= 0);
  return copy;
}

// `target` is closed by dup2 and becomes a copy of `fd`.
__attribute__((noinline)) void redirect(int fd, int target) {
  CHECK(dup2(fd, target) == target);  // @dup2
}

static int open_file(const char* name, int flags) {
  int fd = open(name, flags, 0644);
  CHECK(fd >= 0);
  return fd;
}

int main(void) {
  int a = open_file("a.txt", O_WRONLY | O_CREAT | O_TRUNC);
  int b = copy_of(a);  // @copy
  CHECK(close(a) == 0);

  int c = open_file("c.txt", O_RDONLY | O_CREAT);
  int target = open_file("target.txt", O_RDONLY | O_CREAT);
  redirect(c, target);
  CHECK(close(c) == 0);
  CHECK(dup2(target, target) == target);

  int d = open_file("d.txt", O_RDONLY | O_CREAT);
  CHECK(dup3(b, d, O_CLOEXEC) == d);  // @dup3
  errno = 0;
  CHECK(dup2(1000, d) == -1 && errno == EBADF);  // fails: d stays what dup3 made it

  int high = fcntl(b, F_DUPFD, 100);  // @dupfd
  CHECK(high >= 100);
  int cloexec = fcntl(b, F_DUPFD_CLOEXEC, 0);
  CHECK(cloexec >= 0 && close(cloexec) == 0);

  int out = dup(1);  // @stdout
  CHECK(out >= 0);
  ESCAPE(&b);
  return 0;
}
