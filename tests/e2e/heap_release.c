// Freed memory goes back to the system: after malloc_trim at once, and without it once the
// freed blocks stayed unused for a while (under memtrack, small blocks live in memtrack's own
// heap, whose free chunks keep their pages until then; glibc trims the top of its heap as
// soon as the blocks there are freed). 8 MiB in 4 KiB blocks are written and freed each
// time; the process's resident memory must fall by most of it.
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-GROUPS: 0
#include <malloc.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "e2e_util.h"

enum { kBlocks = 2048, kSize = 4096, kSmall = 300 };

static long resident_kib(void) {
  FILE* f = fopen("/proc/self/statm", "r");
  CHECK(f != NULL);
  long size = 0;
  long resident = 0;
  CHECK(fscanf(f, "%ld %ld", &size, &resident) == 2);
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void* blocks[kBlocks];

static void fill_and_free(void) {
  for (int i = 0; i < kBlocks; ++i) {
    blocks[i] = malloc(kSize);
    CHECK(blocks[i] != NULL);
    memset(blocks[i], i, kSize);
  }
  for (int i = 0; i < kBlocks; ++i) free(blocks[i]);
}

// Allocation traffic of another size, as a program that goes on running has.
static void other_work(void) {
  static void* small[kSmall];
  for (int i = 0; i < kSmall; ++i) {
    small[i] = malloc(64);
    CHECK(small[i] != NULL);
    ESCAPE(small[i]);
  }
  for (int i = 0; i < kSmall; ++i) free(small[i]);
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

int main(void) {
  const long freed_kib = (long)kBlocks * kSize / 1024;

  long before = resident_kib();
  fill_and_free();
  malloc_trim(0);
  long trimmed = resident_kib();
  CHECK(trimmed < before + freed_kib / 4);

  fill_and_free();
  // Freed blocks nobody took for over a second, twice over: given back by then.
  for (int round = 0; round < 3; ++round) {
    sleep_ms(1100);
    other_work();
  }
  long idle = resident_kib();
  CHECK(idle < before + freed_kib / 4);
  printf("freed memory went back to the system, with malloc_trim and without\n");
  return 0;
}
