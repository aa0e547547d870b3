// Helpers for the end-to-end test programs (C and C++). The programs are built -O2 without
// frame pointers, like distribution packages, so they must defend their allocations against
// the optimizer: gcc deletes a malloc whose result is unused, and turns a final call into a
// jump (a tail call) that leaves the caller's frame off the stack.
#pragma once

#include <stdio.h>
#include <stdlib.h>

// Makes the compiler believe `p` is used, so the allocation that produced it stays. Placed
// after a call, it also keeps that call from being a tail call.
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

// Checks a condition the program itself is about; on failure says which on stderr and exits
// with status 1 (the runner expects 0 unless told otherwise).
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)
