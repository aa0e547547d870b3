// C++ allocations leaked, with the sizes operator new sees: a 44-byte object, new int[25]
// (100 bytes), and new Tracked[4] (4 x 16 bytes plus the 8-byte array cookie the Itanium ABI
// adds for types with a destructor, as does the ARM C++ ABI of 32-bit ARM with its element
// size and count: 72 bytes).
// EXPECT-LEAKED: 216 bytes in 3 blocks
// EXPECT-GROUPS: 3
// EXPECT-GROUP: 44 bytes in 1 block | make_widget@alloc_widget main@call_widget
// EXPECT-GROUP: 100 bytes in 1 block | make_ints@alloc_ints main@call_ints
// EXPECT-GROUP: 72 bytes in 1 block | make_tracked@alloc_tracked main@call_tracked !Tracked
#include <cstdint>

#include "e2e_util.h"

struct Widget {
  char name[40];
  int id;
};
static_assert(sizeof(Widget) == 44);

struct Tracked {
  int64_t a = 0, b = 0;         // 16 bytes on 32-bit targets too
  ~Tracked() { ESCAPE(this); }  // non-trivial: new[] stores the element count before the array
};
static_assert(sizeof(Tracked) == 16);

__attribute__((noinline)) Widget* make_widget() {
  Widget* w = new Widget;  // @alloc_widget
  ESCAPE(w);
  return w;
}

__attribute__((noinline)) int* make_ints() {
  int* ints = new int[25];  // @alloc_ints
  ESCAPE(ints);
  return ints;
}

__attribute__((noinline)) Tracked* make_tracked() {
  Tracked* tracked = new Tracked[4];  // @alloc_tracked
  ESCAPE(tracked);
  return tracked;
}

int main() {
  ESCAPE(make_widget());   // @call_widget
  ESCAPE(make_ints());     // @call_ints
  ESCAPE(make_tracked());  // @call_tracked
  return 0;
}
