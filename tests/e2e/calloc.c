// calloc(10, 30) leaked: recorded as 300 bytes (count x size), and zeroed as calloc promises.
// EXPECT-LEAKED: 300 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 300 bytes in 1 block | make_table@alloc main@call
#include "e2e_util.h"

__attribute__((noinline)) int* make_table(void) {
  int* table = calloc(10, 30);  // @alloc
  ESCAPE(table);
  return table;
}

int main(void) {
  int* table = make_table();  // @call
  for (int i = 0; i < 75; ++i) CHECK(table[i] == 0);
  ESCAPE(table);
  return 0;
}
