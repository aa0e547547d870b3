// A known heap pattern made by 4 threads at once, for the heap profile tests
// (test_profile.py): each thread makes 2,000 temporary allocations of 48 bytes
// (make_temporary), hands 250 blocks of 64 bytes over (hand_over) that the next thread frees
// once all have made theirs (frees from another thread than the allocating one, while the
// others still allocate), and leaks one block of 1,000 bytes (leak_one). After the threads
// ended, main holds a peak of 4 x 262,144 bytes (build_peak) and frees it.
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

enum { kThreads = 4, kTemporaries = 2000, kHandedOver = 250 };

void* volatile g_sink;  // keeps the compiler from removing malloc/free pairs
static void* g_handed[kThreads][kHandedOver];
static pthread_barrier_t g_all_handed;

__attribute__((noinline)) void* make_temporary(size_t size) {
  void* p = malloc(size);
  g_sink = p;
  return p;
}

__attribute__((noinline)) void* hand_over(void) {
  void* p = malloc(64);
  g_sink = p;
  return p;
}

__attribute__((noinline)) void leak_one(void) {
  g_sink = malloc(1000);
}

__attribute__((noinline)) void build_peak(void) {
  void* blocks[4];
  for (int i = 0; i < 4; ++i) {
    blocks[i] = malloc(262144);
    g_sink = blocks[i];
  }
  for (int i = 0; i < 4; ++i) free(blocks[i]);
}

static void* worker(void* arg) {
  int self = (int)(intptr_t)arg;
  for (int i = 0; i < kHandedOver; ++i) {
    for (int j = 0; j < kTemporaries / kHandedOver; ++j) free(make_temporary(48));
    g_handed[self][i] = hand_over();
  }
  pthread_barrier_wait(&g_all_handed);
  int next = (self + 1) % kThreads;
  for (int i = 0; i < kHandedOver; ++i) free(g_handed[next][i]);
  leak_one();
  return NULL;
}

int main(void) {
  pthread_barrier_init(&g_all_handed, NULL, kThreads);
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    pthread_create(&threads[i], NULL, worker, (void*)(intptr_t)i);
  }
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
  build_peak();
  return 0;
}
