// mallinfo2 and mallinfo count the program's blocks whichever allocator serves them (under
// memtrack, small blocks come from memtrack's own heap, which glibc's own counts do not
// see): 1000 blocks of 200 bytes raise the bytes in use by at least their size, and freeing
// them lowers it again.
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-GROUPS: 0
#include <malloc.h>

#include "e2e_util.h"

enum { kBlocks = 1000, kSize = 200 };

int main(void) {
  static void* blocks[kBlocks];
  struct mallinfo2 before = mallinfo2();
  for (int i = 0; i < kBlocks; ++i) {
    blocks[i] = malloc(kSize);
    CHECK(blocks[i] != NULL);
  }
  struct mallinfo2 during = mallinfo2();
  CHECK(during.uordblks >= before.uordblks + (size_t)kBlocks * kSize);
  CHECK(during.arena >= during.uordblks);
  for (int i = 0; i < kBlocks; ++i) free(blocks[i]);
  struct mallinfo2 after = mallinfo2();
  CHECK(after.uordblks + (size_t)kBlocks * kSize <= during.uordblks);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  struct mallinfo old = mallinfo();
#pragma GCC diagnostic pop
  CHECK((size_t)(unsigned)old.uordblks == after.uordblks);
  printf("mallinfo2 and mallinfo count the blocks\n");
  return 0;
}
