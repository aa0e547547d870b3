// When memtrack's tables may not grow (max_metadata_mb), the program keeps running, the
// runtime warns once, and the report counts what it could not track. 300,000 blocks of 16
// bytes need about 10 MiB of table; 4 MiB holds only part of them. Every block is freed,
// so all tracked blocks are gone at exit and only the untracked count remains.
// RUN-OPTIONS: max_metadata_mb=4
// EXPECT-DIAGNOSTIC: the allocation table cannot grow (max_metadata_mb reached or mmap failed)
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-GROUPS: 0
// TEXT-EXPECT-NOTE: untracked:
// CLI-EXPECT-NOTE: allocations untracked
#include "e2e_util.h"

enum { kBlocks = 300000 };
static void* blocks[kBlocks];

int main(void) {
  for (int i = 0; i < kBlocks; ++i) blocks[i] = malloc(16);
  long sum = 0;
  for (int i = 0; i < kBlocks; ++i) {
    CHECK(blocks[i] != NULL);
    sum += (long)((char*)blocks[i] - (char*)0) & 1;
    free(blocks[i]);
  }
  printf("freed %d blocks (%ld odd)\n", kBlocks, sum);
  return 0;
}
