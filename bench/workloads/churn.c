// Whole-process workload: malloc+free pairs at a fixed call depth with a non-LIFO working set
// (each pair frees a pseudo-randomly chosen slot and refills it), in 1 or more threads that
// each do the same work, so per-thread cost can be compared with the single-thread run.
// Usage: churn [pairs per thread=1000000] [depth=10] [threads=1]
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKING_SET 1024
#define MAX_THREADS 64

struct ChurnThread {
  long pairs;
  int depth;
  uint32_t seed;
  void* slots[WORKING_SET];
};

static struct ChurnThread threads[MAX_THREADS];

__attribute__((noinline)) static void churn_at_depth(struct ChurnThread* t, int depth) {
  if (depth > 1) {
    churn_at_depth(t, depth - 1);
    __asm__ volatile("" ::: "memory");  // keeps the recursion from becoming a loop
    return;
  }
  uint32_t x = t->seed;
  for (long i = 0; i < t->pairs; ++i) {
    x = x * 1103515245u + 12345u;
    uint32_t slot = (x >> 8) % WORKING_SET;
    free(t->slots[slot]);
    t->slots[slot] = malloc(16 + (x >> 24) % 240);
  }
}

static void* churn_thread(void* arg) {
  struct ChurnThread* t = arg;
  churn_at_depth(t, t->depth);
  for (int i = 0; i < WORKING_SET; ++i) free(t->slots[i]);
  return NULL;
}

int main(int argc, char** argv) {
  long pairs = argc > 1 ? atol(argv[1]) : 1000000;
  int depth = argc > 2 ? atoi(argv[2]) : 10;
  int nthreads = argc > 3 ? atoi(argv[3]) : 1;
  if (depth < 1 || nthreads < 1 || nthreads > MAX_THREADS) {
    fprintf(stderr, "usage: churn [pairs per thread] [depth >= 1] [threads 1-%d]\n", MAX_THREADS);
    return 2;
  }
  for (int i = 0; i < nthreads; ++i) {
    threads[i] = (struct ChurnThread){.pairs = pairs, .depth = depth, .seed = 12345u + 7919u * i};
  }
  if (nthreads == 1) {
    churn_thread(&threads[0]);  // on the main thread, as before threads were added
  } else {
    pthread_t ids[MAX_THREADS];
    for (int i = 0; i < nthreads; ++i) {
      if (pthread_create(&ids[i], NULL, churn_thread, &threads[i]) != 0) {
        perror("pthread_create");
        return 1;
      }
    }
    for (int i = 0; i < nthreads; ++i) pthread_join(ids[i], NULL);
  }
  printf("%ld pairs at depth %d in %d thread(s)\n", pairs, depth, nthreads);
  return 0;
}
