// Helpers for the CLI test programs. They are built -O2 without frame pointers, so each
// allocation is defended against the optimizer (a malloc whose result is unused is deleted,
// a final call becomes a tail call that drops the caller's frame).
#pragma once

#include <stdlib.h>

// Makes the compiler believe `p` is used; after a call it also prevents a tail call.
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

// The exit status requested on the command line (argv[index]), 0 if not given.
static inline int status_arg(int argc, char** argv, int index) {
  return argc > index ? atoi(argv[index]) : 0;
}
