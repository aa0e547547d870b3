// Helpers for the memcheck agreement programs (C and C++). Test programs only: they run under
// valgrind and under memtrack, and the leak verdicts of both must agree.
//
// The programs are built -O0 -g so that every pointer the source names lives in a stack slot
// or a global the source can see, and the compiler neither keeps a copy in a callee-saved
// register nor drops one (cases that need -O2 say why). Blocks are allocated in noinline
// functions whose frames are dead (below the stack pointer, never scanned) once they return.
//
// Sizes are multiples of 16 unless the size is the point of the case: then a block's end
// is also the end of its glibc chunk, so glibc's own bookkeeping pointers (main_arena.top,
// bin heads), which native runs have and valgrind runs do not, never point inside a block.
// allocator_metadata.c is the case about exactly those pointers.
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define UNUSED __attribute__((unused))

// Makes the compiler believe `p` is used, so the allocation that produced it stays.
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

// Checks a condition the program itself relies on; on failure says which on stderr and exits
// with status 1 (the runner expects 0 unless told otherwise).
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#ifdef __cplusplus
extern "C" {
#endif

// Drops the last pointer to `p` (the caller's copy dies with its frame). Noinline and opaque,
// so the allocation before it cannot be optimised away.
NOINLINE UNUSED static void lose(void* p) {
  ESCAPE(p);
}

// Overwrites the stack below the caller with zeros. Call it after the frames that handled
// pointers have returned and before anything else runs: the frames of later calls (exit,
// atexit handlers) reuse that memory, and their uninitialised slots would still hold the old
// pointers. memcheck ignores such slots (stack memory becomes undefined when the stack
// grows, and undefined words are never roots); a native scanner cannot tell them apart.
NOINLINE UNUSED static void scrub_stack(void) {
  volatile char area[16384];
  for (size_t i = 0; i < sizeof(area); ++i) area[i] = 0;
}

#ifdef __cplusplus
}
#endif
