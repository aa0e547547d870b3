// A copy-on-write std::string (the pre-C++11 libstdc++ ABI, built with
// -D_GLIBCXX_USE_CXX11_ABI=0) points at its characters, 24 bytes into its heap block after
// length, capacity and refcount. Held by a global: still reachable by memcheck's
// "stdstring" heuristic. The string lives in never-destroyed static storage.
// MEMCHECK: reachable 125 1
// REACHABLE: compare
#include <new>
#include <string>

#include "memcheck_case.h"

static_assert(_GLIBCXX_USE_CXX11_ABI == 0, "needs the copy-on-write std::string");

alignas(std::string) unsigned char g_storage[sizeof(std::string)];

NOINLINE static void setup() {
  new (g_storage) std::string(100, 's');  // a 24 + 100 + 1 = 125-byte block
}

int main() {
  setup();
  scrub_stack();
  return 0;
}
