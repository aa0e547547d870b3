// A leak from a static function, which has no dynamic symbol: its name must come from the
// program's own symbol table (.symtab).
// EXPECT-LEAKED: 512 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 512 bytes in 1 block | hidden_helper@alloc main@call
#include "e2e_util.h"

__attribute__((noinline)) static char* hidden_helper(size_t size) {
  char* p = malloc(size);  // @alloc
  ESCAPE(p);
  return p;
}

int main(void) {
  char* p = hidden_helper(512);  // @call
  ESCAPE(p);
  return 0;
}
