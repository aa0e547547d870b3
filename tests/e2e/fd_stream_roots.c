// Memory that only an open FILE points to is still reachable, as memcheck says: glibc's list
// of open streams is a root, and memtrack scans the FILE objects it does not count as memory.
// Here a wide-character stream's buffer and a setvbuf buffer the program keeps no pointer to.
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-GROUPS: 0
// EXPECT-RESOURCE: file wide.txt, fopen("w") | main@wide
// EXPECT-RESOURCE: file buffered.txt, fopen("w") | buffered@buffered main
#include <wchar.h>

#include "e2e_util.h"

FILE* g_wide;

__attribute__((noinline)) FILE* buffered(void) {
  FILE* f = fopen("buffered.txt", "w");  // @buffered
  CHECK(f != NULL);
  char* buffer = malloc(4096);
  CHECK(buffer != NULL && setvbuf(f, buffer, _IOFBF, 4096) == 0);
  CHECK(fputs("kept in a buffer only the FILE points to\n", f) >= 0);
  return f;
}

int main(void) {
  g_wide = fopen("wide.txt", "w");  // @wide
  CHECK(g_wide != NULL);
  CHECK(fwprintf(g_wide, L"%ls\n", L"wide") > 0);
  ESCAPE(buffered());
  return 0;
}
