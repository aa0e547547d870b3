// operator new of an impossible size calls the installed std::new_handler, then (once the
// handler has uninstalled itself) throws std::bad_alloc, which the program catches and goes
// on: the 42-byte leak afterwards is still recorded. Both new and new[] are exercised.
// EXPECT-LEAKED: 42 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 42 bytes in 1 block | keep_going@alloc main@call
#include <cstdint>
#include <new>

#include "e2e_util.h"

static int g_handler_calls = 0;

static void out_of_memory() {
  ++g_handler_calls;
  std::set_new_handler(nullptr);  // the next failure throws std::bad_alloc
}

// More than the address space (4 EiB; 4 GiB - 1 on 32-bit ARM), so the real allocator fails.
// Volatile, so gcc cannot warn at compile time about the size.
static volatile size_t g_huge =
    sizeof(size_t) == 8 ? size_t{1} << (sizeof(size_t) * 8 - 2) : SIZE_MAX;

__attribute__((noinline)) static bool huge_new_throws(bool array) {
  std::set_new_handler(out_of_memory);
  try {
    void* p = array ? static_cast<void*>(new char[g_huge]) : ::operator new(g_huge);
    ESCAPE(p);
    return false;
  } catch (const std::bad_alloc&) {
    return true;
  }
}

__attribute__((noinline)) void keep_going() {
  ESCAPE(new char[42]);  // @alloc
}

int main() {
  CHECK(huge_new_throws(false));
  CHECK(g_handler_calls == 1);
  CHECK(huge_new_throws(true));
  CHECK(g_handler_calls == 2);
  printf("caught std::bad_alloc twice, new_handler called %d times\n", g_handler_calls);
  keep_going();  // @call
  return 0;
}
