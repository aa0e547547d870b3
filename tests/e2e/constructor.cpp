// Leaks made before main: by an __attribute__((constructor)) function (222 bytes) and by the
// constructor of a global C++ object (111 bytes). Both are the program's leaks, not the
// runtime's, and main is not on their stacks. PluginRegistry's constructor is inlined into the
// static initializer: only the CLI's symbolizer shows it, as a frame of its own.
// Each constructor scrubs the stack below itself once its pointer is dropped: the C library's
// start-up frames that later call main reuse that memory with slots they never write (armhf's
// __libc_start_call_main keeps a jmp_buf there), and a native scan cannot tell a stale copy
// from a root (memcheck counts such words as undefined; tests/memcheck/programs/memcheck_case.h).
// EXPECT-LEAKED: 333 bytes in 2 blocks
// EXPECT-GROUPS: 2
// EXPECT-GROUP: 222 bytes in 1 block | leak_early@early early_init@init !main
// TEXT-EXPECT-GROUP: 111 bytes in 1 block | register_plugin !main
// CLI-EXPECT-GROUP: 111 bytes in 1 block | register_plugin@alloc PluginRegistry@ctor[inlined] !main
#include <cstdio>

#include "e2e_util.h"

static bool g_constructed = false;

__attribute__((noinline)) static void scrub_stack() {
  volatile char area[16384];
  for (size_t i = 0; i < sizeof(area); ++i) area[i] = 0;
}

__attribute__((noinline)) void leak_early() {
  void* p = malloc(222);  // @early
  ESCAPE(p);
}

__attribute__((constructor)) static void early_init() {
  leak_early();  // @init
  scrub_stack();
  g_constructed = true;
}

__attribute__((noinline)) void register_plugin() {
  void* p = malloc(111);  // @alloc
  ESCAPE(p);
}

struct PluginRegistry {
  PluginRegistry() {
    register_plugin();  // @ctor
    scrub_stack();
    ESCAPE(this);
  }
};
PluginRegistry g_registry;

int main() {
  printf("constructors ran: %s\n", g_constructed ? "yes" : "no");
  return 0;
}
