// C++ static data members (an out-of-class definition and an inline one) holding new'd
// blocks are still reachable. The objects are trivially destructible, so no destructor at
// exit frees anything.
// MEMCHECK: reachable 192 2
// REACHABLE: compare
#include "memcheck_case.h"

struct Registry {
  static int* table;                           // defined below, in .bss
  static inline Registry* instance = nullptr;  // C++17 inline variable, in .bss (COMDAT)
  char name[32];
  long slots[10];
};
int* Registry::table = nullptr;

NOINLINE static void setup() {
  Registry::table = new int[20];        // 80 bytes: int has no destructor, so no array cookie
  Registry::instance = new Registry();  // 112 bytes
  static_assert(sizeof(Registry) == 112);
}

int main() {
  setup();
  scrub_stack();
  return 0;
}
