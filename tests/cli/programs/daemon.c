// A daemon-like program for live mode and snapshots. One site leaks a block every 50 ms and
// never frees it (the leak); another holds 20 blocks for 1.5 s, frees them all and starts
// over (a cache, not a leak); one block is lost at start (a definite leak for snapshots).
// Runs for argv[1] seconds (default 8) or until SIGTERM; prints "ready PID" once running.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile sig_atomic_t g_stop = 0;
static void** g_leaked;  // the leaked blocks stay reachable: this is about their age
static size_t g_leaked_count;

static void on_term(int sig) {
  (void)sig;
  g_stop = 1;
}

// The empty asm keeps malloc from being a tail call, so these functions stay in the stack.
NOINLINE static void* leak_one(void) {
  void* p = malloc(100);  // @leak
  __asm__ volatile("" : : "r"(p) : "memory");
  return p;
}

NOINLINE static void* cache_one(void) {
  void* p = malloc(64);  // @cache
  __asm__ volatile("" : : "r"(p) : "memory");
  return p;
}

NOINLINE static void lose_one(void) {
  volatile char* p = malloc(48);  // @lost
  p[0] = 1;
}

// Overwrites the stack below main's frame, where lose_one's pointer may still lie.
NOINLINE static void scrub_stack(void) {
  volatile char area[16384];
  for (size_t i = 0; i < sizeof(area); ++i) area[i] = 0;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 8;
  signal(SIGTERM, on_term);
  g_leaked = calloc(4096, sizeof(void*));
  lose_one();
  scrub_stack();
  void* cache[20] = {0};
  double start = now();
  double cache_since = start;
  for (int i = 0; i < 20; ++i) cache[i] = cache_one();
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  while (!g_stop && now() - start < seconds) {
    if (g_leaked_count < 4096) g_leaked[g_leaked_count++] = leak_one();
    if (now() - cache_since > 1.5) {
      for (int i = 0; i < 20; ++i) free(cache[i]);
      for (int i = 0; i < 20; ++i) cache[i] = cache_one();
      cache_since = now();
    }
    usleep(50000);
  }
  for (int i = 0; i < 20; ++i) free(cache[i]);
  return 0;
}
