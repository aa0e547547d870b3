// How long live reports make allocation calls wait: holds N live blocks (argv[1], default
// 1,000,000), then for argv[2] seconds (default 5) times every malloc+free pair and prints
// the longest, the 99.9th percentile and the median, in microseconds. Run it under memtrack
// with live reports on, e.g. MEMTRACK_OPTIONS=expire_ms=100:report_interval_ms=200.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a;
  uint64_t y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  long live = argc > 1 ? atol(argv[1]) : 1000000;
  double seconds = argc > 2 ? atof(argv[2]) : 5;
  void** blocks = malloc(sizeof(void*) * (size_t)live);
  for (long i = 0; i < live; ++i) blocks[i] = malloc(32);
  size_t capacity = 1 << 26;
  uint64_t* samples = malloc(sizeof(uint64_t) * capacity);
  size_t count = 0;
  uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
  while (count < capacity) {
    uint64_t t0 = now_ns();
    if (t0 >= end) break;
    void* p = malloc(64);
    __asm__ volatile("" : : "r"(p) : "memory");  // the pair must not be optimised away
    free(p);
    samples[count++] = now_ns() - t0;
  }
  qsort(samples, count, sizeof(uint64_t), compare);
  size_t over_50us = 0;
  size_t over_500us = 0;
  for (size_t i = 0; i < count; ++i) {
    over_50us += samples[i] > 50000;
    over_500us += samples[i] > 500000;
  }
  printf(
      "%zu pairs: median %.2f us, 99.9%% %.2f us, 99.999%% %.1f us, longest %.1f us; "
      "%zu over 50 us, %zu over 500 us\n",
      count, (double)samples[count / 2] / 1000, (double)samples[count * 999 / 1000] / 1000,
      (double)samples[count - count / 100000 - 1] / 1000, (double)samples[count - 1] / 1000,
      over_50us, over_500us);
  for (long i = 0; i < live; ++i) free(blocks[i]);
  free(blocks);
  free(samples);
  return 0;
}
