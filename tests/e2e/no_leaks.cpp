// Every block is freed: malloc, calloc, realloc, new/delete, new[]/delete[] and std::string.
// printf makes stdio allocate its stdout buffer, which it keeps until the process ends; that
// block belongs to the runtime libraries and must not be reported.
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-GROUPS: 0
#include <cstdio>
#include <cstdlib>
#include <string>

#include "e2e_util.h"

struct Point {
  int x, y;
};

__attribute__((noinline)) static void use_c_allocator() {
  char* a = static_cast<char*>(malloc(100));
  ESCAPE(a);
  int* b = static_cast<int*>(calloc(20, sizeof(int)));
  ESCAPE(b);
  a = static_cast<char*>(realloc(a, 5000));  // moves the block: the old one is freed
  ESCAPE(a);
  free(a);
  free(b);
}

__attribute__((noinline)) static void use_cpp_allocator() {
  Point* p = new Point{1, 2};
  ESCAPE(p);
  int* array = new int[64];
  ESCAPE(array);
  std::string text(200, 'x');  // longer than the small-string buffer: allocates
  ESCAPE(text.data());
  delete p;
  delete[] array;
}

int main() {
  use_c_allocator();
  use_cpp_allocator();
  printf("allocated and freed with every allocator\n");
  return 0;
}
