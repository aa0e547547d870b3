// An object of a class with two polymorphic bases, held only through a pointer to its second
// base, which points 16 bytes into the block: still reachable by memcheck's
// "multipleinheritance" heuristic (both the pointed-to word and the block's first word are
// vtable pointers).
// MEMCHECK: reachable 48 1
// REACHABLE: compare
#include "memcheck_case.h"

struct First {
  virtual ~First() = default;
  long a = 1;
};
struct Second {
  virtual ~Second() = default;
  long b = 2;
};
struct Both : First, Second {
  long c = 3;
  long d = 4;
};
static_assert(sizeof(Both) == 48);

Second* g_second;

NOINLINE static void setup() {
  Both* both = new Both();
  g_second = both;
  CHECK(reinterpret_cast<char*>(g_second) == reinterpret_cast<char*>(both) + 16);
}

int main() {
  setup();
  scrub_stack();
  return 0;
}
