// Whole-process workload: malloc/free of 8-512 B through 806 distinct call paths, 8 to 20
// frames deep, over a ring of 10,000 live blocks per thread, in 1 or more threads. The shape of
// allocation-heavy C++ code (test suites, servers): a stack memo keyed by the call site alone
// keeps missing, as it does on real programs, unlike churn's single path.
//
// A path is a number p: its depth is 8 + p % 13 frames of the walk below, and the first frames
// are chosen among four functions by the base-4 digits of p / 13 (62 values), so each p gives
// its own sequence of return addresses.
// Usage: many_sites [ops per thread=2000000] [threads=1]
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PATHS 806
#define RING 10000
#define MAX_THREADS 64

struct SitesThread {
  long ops;
  uint32_t seed;
  void** ring;
};

static struct SitesThread threads[MAX_THREADS];

static void step(struct SitesThread* t, int depth, unsigned digits, uint32_t x);

// At the bottom of a path: one free and one allocation in a pseudo-random slot of the ring.
__attribute__((noinline)) static void churn_slot(struct SitesThread* t, uint32_t x) {
  uint32_t slot = (x >> 7) % RING;
  free(t->ring[slot]);
  t->ring[slot] = malloc(8 + (x >> 3) % 505);
}

// Four frames that differ only in their return addresses; the volatile asm after each call
// keeps it a call (no tail call, no merge of the four).
#define STEP_FUNCTION(name)                                                                \
  __attribute__((noinline)) static void name(struct SitesThread* t, int depth, unsigned d, \
                                             uint32_t x) {                                 \
    step(t, depth - 1, d >> 2, x);                                                         \
    __asm__ volatile("" ::: "memory");                                                     \
  }
STEP_FUNCTION(step_a)
STEP_FUNCTION(step_b)
STEP_FUNCTION(step_c)
STEP_FUNCTION(step_d)

__attribute__((noinline)) static void step(struct SitesThread* t, int depth, unsigned digits,
                                           uint32_t x) {
  if (depth <= 1) {
    churn_slot(t, x);
  } else {
    switch (digits & 3) {
      case 0:
        step_a(t, depth, digits, x);
        break;
      case 1:
        step_b(t, depth, digits, x);
        break;
      case 2:
        step_c(t, depth, digits, x);
        break;
      default:
        step_d(t, depth, digits, x);
        break;
    }
  }
  __asm__ volatile("" ::: "memory");
}

static void* sites_thread(void* arg) {
  struct SitesThread* t = arg;
  uint32_t x = t->seed;
  for (long i = 0; i < t->ops; ++i) {
    x = x * 1103515245u + 12345u;
    unsigned path = (x >> 16) % PATHS;
    // The digits start above 0 so that every path's frames differ from its neighbours'.
    step(t, 8 + (int)(path % 13), 4 + path / 13, x);
  }
  for (int i = 0; i < RING; ++i) free(t->ring[i]);
  return NULL;
}

int main(int argc, char** argv) {
  long ops = argc > 1 ? atol(argv[1]) : 2000000;
  int nthreads = argc > 2 ? atoi(argv[2]) : 1;
  if (ops < 0 || nthreads < 1 || nthreads > MAX_THREADS) {
    fprintf(stderr, "usage: many_sites [ops per thread] [threads 1-%d]\n", MAX_THREADS);
    return 2;
  }
  for (int i = 0; i < nthreads; ++i) {
    void** ring = calloc(RING, sizeof(void*));
    if (ring == NULL) {
      perror("calloc");
      return 1;
    }
    threads[i] = (struct SitesThread){.ops = ops, .seed = 2654435761u + 7919u * i, .ring = ring};
  }
  if (nthreads == 1) {
    sites_thread(&threads[0]);
  } else {
    pthread_t ids[MAX_THREADS];
    for (int i = 0; i < nthreads; ++i) {
      if (pthread_create(&ids[i], NULL, sites_thread, &threads[i]) != 0) {
        perror("pthread_create");
        return 1;
      }
    }
    for (int i = 0; i < nthreads; ++i) pthread_join(ids[i], NULL);
  }
  for (int i = 0; i < nthreads; ++i) free(threads[i].ring);
  printf("%ld ops through %d call paths in %d thread(s)\n", ops, PATHS, nthreads);
  return 0;
}
