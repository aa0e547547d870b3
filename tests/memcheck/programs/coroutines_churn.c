// Eight coroutines on stacks from malloc (makecontext), each churning small blocks and, in
// every round, dropping a 24-byte block from a call chain of another depth before it
// switches back; main runs them to their end. The stacks stay reachable (the global contexts
// point at them) and are scanned whole, dead parts included: whatever the allocator's frames
// left there of a dropped block's address (the stack capture runs kilobytes below the hook,
// the recording of the block a few hundred bytes) must not make it reachable. A churn after
// each drop clears the scratch registers swapcontext saves, so memcheck sees every drop lost.
// Built -O2 so that the program's own frames keep the pointers in registers only.
// MEMCHECK: definite 768 32
// MEMCHECK: reachable 524288 8
// REACHABLE: compare
#include <ucontext.h>

#include "memcheck_case.h"

enum { kCoroutines = 8, kRounds = 4, kStackBytes = 64 * 1024 };

static ucontext_t g_main;
static ucontext_t g_coroutines[kCoroutines];
static int g_finished[kCoroutines];

NOINLINE static void churn(void) {
  for (int i = 0; i < 50; ++i) {
    void* p = malloc(16 + (size_t)(i % 7) * 16);
    ESCAPE(p);
    free(p);
  }
}

// Allocates at the bottom of a chain of `depth` calls, so the drops of one coroutine happen
// at different depths of its stack, below the frames of what it does afterwards.
NOINLINE static void drop(int depth) {
  if (depth > 0) {
    drop(depth - 1);
    ESCAPE(depth);
    return;
  }
  lose(malloc(24));
}

static void body(int id) {
  for (int round = 0; round < kRounds; ++round) {
    churn();
    drop((id * 3 + round) % 7);
    churn();
    swapcontext(&g_coroutines[id], &g_main);
  }
  g_finished[id] = 1;
}

// getcontext and swapcontext return twice, as setjmp does: kept out of main, whose loop
// counters they would clobber.
NOINLINE static void prepare(int id) {
  CHECK(getcontext(&g_coroutines[id]) == 0);
  g_coroutines[id].uc_stack.ss_sp = malloc(kStackBytes);
  CHECK(g_coroutines[id].uc_stack.ss_sp != NULL);
  g_coroutines[id].uc_stack.ss_size = kStackBytes;
  g_coroutines[id].uc_link = &g_main;
  makecontext(&g_coroutines[id], (void (*)(void))body, 1, id);
}

NOINLINE static void resume(int id) {
  CHECK(swapcontext(&g_main, &g_coroutines[id]) == 0);
}

int main(void) {
  for (int i = 0; i < kCoroutines; ++i) prepare(i);
  for (int round = 0; round <= kRounds; ++round) {
    for (int i = 0; i < kCoroutines; ++i) {
      if (!g_finished[i]) resume(i);
    }
  }
  return 0;
}
