// A service for memtrack run --pprof-http (test_pprof_http.py): holds 100 blocks of 10,000
// bytes from cache_fill (reachable), has lost 50 blocks of 1,000 bytes from leak_some
// (definitely lost) and allocated and freed 1,000 blocks of 500 bytes in churn, prints
// "ready PID", then waits for SIGTERM (or 60 s).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void* g_cache[100];  // not static: the program's data, a root of the leak scan
static volatile sig_atomic_t g_stop = 0;

static void on_term(int sig) {
  (void)sig;
  g_stop = 1;
}

NOINLINE static void cache_fill(void) {
  for (int i = 0; i < 100; ++i) {
    g_cache[i] = malloc(10000);
    memset(g_cache[i], 1, 10000);
  }
}

NOINLINE static void leak_some(void) {
  for (int i = 0; i < 50; ++i) {
    char* p = malloc(1000);
    memset(p, 2, 1000);
    __asm__ volatile("" : : "r"(p) : "memory");
  }
}

NOINLINE static void churn(void) {
  for (int i = 0; i < 1000; ++i) {
    char* p = malloc(500);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
  }
}

// Overwrites the stack below main's frame, where leak_some's last pointer may still lie.
NOINLINE static void scrub_stack(void) {
  volatile char area[16384];
  for (size_t i = 0; i < sizeof(area); ++i) area[i] = 0;
}

int main(void) {
  signal(SIGTERM, on_term);
  cache_fill();
  leak_some();
  churn();
  scrub_stack();
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  for (int i = 0; i < 600 && !g_stop; ++i) usleep(100000);
  for (int i = 0; i < 100; ++i) free(g_cache[i]);
  return 0;
}
