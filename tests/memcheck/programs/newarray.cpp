// new[] of objects with a destructor stores the element count in front of the elements and
// returns start+8. A global holding only that pointer makes the block still reachable
// (memcheck's "newarray" heuristic: the first word is a count that divides the rest). Also:
// such an array lost (definitely lost), and a block whose first word does not divide the
// rest, pointed to at start+8 (possibly lost: no heuristic applies).
// MEMCHECK: reachable 128 1
// MEMCHECK: definite 80 1
// MEMCHECK: possible 128 1
// REACHABLE: compare
#include <cstring>

#include "memcheck_case.h"

struct Widget {
  long v[3];
  ~Widget() { v[0] = 0; }  // non-trivial: new[] adds the 8-byte count
};

Widget* g_widgets;
char* g_not_array;

NOINLINE static void setup() {
  g_widgets = new Widget[5];  // 8 + 5 * 24 = 128 bytes, pointer at +8
  lose(new Widget[3]);        // 8 + 3 * 24 = 80 bytes
  auto* block = static_cast<unsigned long*>(calloc(1, 128));
  block[0] = 7;  // 120 % 7 != 0, and != 120 (length64)
  g_not_array = reinterpret_cast<char*>(block) + 8;
}

int main() {
  setup();
  scrub_stack();
  return 0;
}
