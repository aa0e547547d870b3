// A coroutine on a stack the program allocated with malloc (makecontext): it allocates and
// drops blocks of four sizes, then yields back to main, which exits with the coroutine
// suspended. The stack block is reachable (the global context points at it) and is scanned
// whole, including the dead area below the coroutine's saved stack pointer, where the
// allocator's frames ran: copies they left of the blocks' addresses must not make the
// dropped blocks reachable. A call between the last drop and the switch clears the scratch
// registers swapcontext saves into the global context, which would otherwise hold whatever
// the allocator left there (glibc's malloc leaves the last block's address, memtrack's not).
// Built -O2 so that the program's own frames keep the pointers in registers only.
// MEMCHECK: definite 288 4
// MEMCHECK: reachable 65536 1
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

// Leaves other values in the registers that carry arguments.
NOINLINE static void clear_scratch_registers(long a, long b, long c, long d, long e, long f) {
  __asm__ volatile("" : : "r"(a), "r"(b), "r"(c), "r"(d), "r"(e), "r"(f));
}

NOINLINE static void body(void) {
  for (int i = 0; i < 4; ++i) dropped(48 + 16 * (size_t)i);
  clear_scratch_registers(1, 2, 3, 4, 5, 6);
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
