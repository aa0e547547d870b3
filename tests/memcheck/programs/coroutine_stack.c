// A coroutine on a stack the program allocated with malloc (makecontext): it allocates and
// drops blocks of four sizes, then yields back to main, which exits with the coroutine
// suspended. The stack block is reachable (the global context points at it) and is scanned
// whole, including the dead area below the coroutine's saved stack pointer, where the
// allocator's frames ran: copies they left of the blocks' addresses must not make the
// dropped blocks reachable. The last block stays reachable under both tools: swapcontext
// saved the register that still held its address into the global context.
// Built -O2 so that the program's own frames keep the pointers in registers only.
// MEMCHECK: definite 192 3
// MEMCHECK: reachable 65632 2
// REACHABLE: compare
#include <ucontext.h>

#include "memcheck_case.h"

static ucontext_t g_main;
static ucontext_t g_coroutine;

NOINLINE static void* dropped(size_t size) {
  void* p = malloc(size);
  ESCAPE(p);
  return p;
}

NOINLINE static void body(void) {
  for (int i = 0; i < 4; ++i) dropped(48 + 16 * (size_t)i);
  swapcontext(&g_coroutine, &g_main);
}

int main(void) {
  size_t size = 64 * 1024;
  char* stack = malloc(size);
  CHECK(stack != NULL && getcontext(&g_coroutine) == 0);
  g_coroutine.uc_stack.ss_sp = stack;
  g_coroutine.uc_stack.ss_size = size;
  g_coroutine.uc_link = &g_main;
  makecontext(&g_coroutine, body, 0);
  CHECK(swapcontext(&g_main, &g_coroutine) == 0);
  return 0;
}
