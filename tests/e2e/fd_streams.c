// FILE streams other than fopen's: fdopen makes the FILE own the descriptor (reported with
// fdopen's stack and mode), freopen moves a stream to another file (the first is closed), and
// freopen of stdout is never reported (fds 0-2 never are). fopen + fclose leaves nothing.
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-RESOURCE: file %t/wrapped.txt, fdopen("r+") | wrap@fdopen main
// EXPECT-RESOURCE: file second.txt, freopen("a") | move@freopen main
#include <fcntl.h>
#include <unistd.h>

#include "e2e_util.h"

__attribute__((noinline)) FILE* wrap(int fd) {
  FILE* f = fdopen(fd, "r+");  // @fdopen
  CHECK(f != NULL);
  return f;
}

__attribute__((noinline)) FILE* move(FILE* f) {
  FILE* moved = freopen("second.txt", "a", f);  // @freopen
  CHECK(moved == f);
  return moved;
}

int main(void) {
  int fd = open("wrapped.txt", O_RDWR | O_CREAT, 0644);
  CHECK(fd >= 0);
  ESCAPE(wrap(fd));

  FILE* first = fopen("first.txt", "w");
  CHECK(first != NULL);
  ESCAPE(move(first));

  FILE* closed = fopen("first.txt", "r");
  CHECK(closed != NULL && fclose(closed) == 0);

  CHECK(freopen("/dev/null", "w", stdout) == stdout);
  CHECK(printf("into /dev/null\n") > 0);
  return 0;
}
