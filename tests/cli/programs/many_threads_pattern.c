// A heap pattern made by more threads than the runtime has profile buffers (256), for the
// heap profile tests (test_profile.py): 300 threads alive at once each make 10 temporary
// allocations of 48 bytes (make_temporary) and hand one block of 100 bytes to main
// (hand_over), which frees them after the threads ended; the threads beyond the 256th record
// into the shared buffer, and each exiting thread gives its buffer back. One more thread
// allocates a block of 1,000 bytes (slow_one) and frees it only after main has made 200,000
// temporary allocations of 16 bytes meanwhile: its batch stays open for the whole time, so
// the CLI's packer must hold main's events back until memtrack's thread writes it.
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

enum { kThreads = 300, kTemporaries = 10, kMainTemporaries = 200000 };

void* volatile g_sink;  // keeps the compiler from removing malloc/free pairs
static void* g_handed[kThreads];
static pthread_barrier_t g_all_alive;
static pthread_barrier_t g_slow_started;
static volatile int g_main_done;

__attribute__((noinline)) void* make_temporary(size_t size) {
  void* p = malloc(size);
  g_sink = p;
  return p;
}

__attribute__((noinline)) void* hand_over(void) {
  void* p = malloc(100);
  g_sink = p;
  return p;
}

__attribute__((noinline)) void* slow_one(void) {
  void* p = malloc(1000);
  g_sink = p;
  return p;
}

static void* worker(void* arg) {
  int self = (int)(intptr_t)arg;
  for (int i = 0; i < kTemporaries; ++i) free(make_temporary(48));
  g_handed[self] = hand_over();
  pthread_barrier_wait(&g_all_alive);
  return NULL;
}

static void* slow(void* arg) {
  (void)arg;
  void* p = slow_one();
  pthread_barrier_wait(&g_slow_started);
  while (!g_main_done) usleep(1000);
  free(p);
  return NULL;
}

int main(void) {
  pthread_t slow_thread;
  pthread_barrier_init(&g_slow_started, NULL, 2);
  pthread_create(&slow_thread, NULL, slow, NULL);
  pthread_barrier_wait(&g_slow_started);
  for (int i = 0; i < kMainTemporaries; ++i) {
    free(make_temporary(16));
    if (i % 20000 == 0) usleep(5000);  // long enough for memtrack's thread to tick
  }
  g_main_done = 1;
  pthread_join(slow_thread, NULL);

  pthread_barrier_init(&g_all_alive, NULL, kThreads + 1);
  static pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_create(&threads[i], &attr, worker, (void*)(intptr_t)i);
    pthread_attr_destroy(&attr);
  }
  pthread_barrier_wait(&g_all_alive);
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < kThreads; ++i) free(g_handed[i]);
  return 0;
}
