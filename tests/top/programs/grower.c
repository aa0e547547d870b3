// Helper of the memtrack top end-to-end test: a process whose RSS grows steadily, or one
// that holds a fixed amount. Both run a second thread named "grower-worker" and end by
// themselves after 60 s, so a test that dies cannot leave them behind for long.
//   grower grow TAG      touches 256 KiB more every 100 ms (up to 256 MiB)
//   grower static TAG N  touches N MiB once, then holds it
// TAG is only there for the test to find the process by its command line.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void* worker(void* arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void touch(size_t bytes) {
  char* p = malloc(bytes);
  if (p == NULL) exit(3);
  memset(p, 1, bytes);  // resident, not just reserved
  // Without this gcc drops the malloc+memset of a block that is never read.
  __asm__ volatile("" : : "r"(p) : "memory");
}

int main(int argc, char** argv) {
  if (argc < 3 || (strcmp(argv[1], "grow") != 0 && strcmp(argv[1], "static") != 0)) {
    fprintf(stderr, "usage: grower grow TAG | grower static TAG MIB\n");
    return 2;
  }
  pthread_t thread;
  pthread_create(&thread, NULL, worker, NULL);
  pthread_setname_np(thread, "grower-worker");
  int grow = strcmp(argv[1], "grow") == 0;
  if (!grow) touch((size_t)atoi(argc > 3 ? argv[3] : "64") << 20);
  printf("ready\n");
  fflush(stdout);
  for (int step = 0; step < 600; ++step) {  // 60 s
    if (grow && step < 1024) touch(256 << 10);
    sleep_ms(100);
  }
  return 0;
}
