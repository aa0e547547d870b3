// Four threads open and close descriptors at once (files, pipes, dups, FILE streams), 2,000
// rounds each, while the kernel hands the same numbers from one thread to another; each
// leaves exactly one file open. The report has exactly those four, with their threads'
// stacks: no entry was lost or left behind by the races between opens and closes.
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-RESOURCE: file kept.0, open(O_WRONLY|O_CREAT|O_TRUNC) | keep_one@keep worker
// EXPECT-RESOURCE: file kept.1, open(O_WRONLY|O_CREAT|O_TRUNC) | keep_one@keep worker
// EXPECT-RESOURCE: file kept.2, open(O_WRONLY|O_CREAT|O_TRUNC) | keep_one@keep worker
// EXPECT-RESOURCE: file kept.3, open(O_WRONLY|O_CREAT|O_TRUNC) | keep_one@keep worker
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "e2e_util.h"

#define THREADS 4
#define ROUNDS 2000

__attribute__((noinline)) void keep_one(long id) {
  char name[16] = "kept.0";
  name[5] = (char)('0' + id);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);  // @keep
  CHECK(fd >= 0);
}

static void* worker(void* arg) {
  long id = (long)arg;
  for (int i = 0; i < ROUNDS; ++i) {
    int fd = open("/dev/null", O_RDONLY);
    CHECK(fd >= 0);
    int copy = dup(fd);
    CHECK(copy >= 0 && close(fd) == 0);
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(close(p[0]) == 0 && close(p[1]) == 0 && close(copy) == 0);
    if (i % 10 == 0) {
      FILE* f = fopen("/dev/null", "r");
      CHECK(f != NULL && fclose(f) == 0);
    }
  }
  keep_one(id);
  return NULL;
}

int main(void) {
  pthread_t threads[THREADS];
  for (long i = 0; i < THREADS; ++i) {
    CHECK(pthread_create(&threads[i], NULL, worker, (void*)i) == 0);
  }
  for (int i = 0; i < THREADS; ++i) CHECK(pthread_join(threads[i], NULL) == 0);
  return 0;
}
