// Helpers for the allocator misuse programs (misuse.c, misuse.cpp), on top of cli_util.h.
// They keep gcc -O2 from seeing the misuse (it warns: -Wfree-nonheap-object,
// -Wuse-after-free, -Wmismatched-new-delete) and from renaming or merging the functions whose
// names and lines the tests check.
#pragma once

#include "cli_util.h"

// No inlining, no cloning (.constprop/.isra names), no interprocedural facts about the
// function: its frame and name stay as written.
#if defined(__clang__)
#define NOT_OPTIMIZED_AWAY __attribute__((noinline, optnone))
#else
#define NOT_OPTIMIZED_AWAY __attribute__((noipa))
#endif

// Makes the compiler forget where `p` came from.
#define HIDE(p) __asm__ volatile("" : "+r"(p))

// After a call: keeps it from becoming a tail call, which would drop the caller's frame.
#define NO_TAIL_CALL() __asm__ volatile("" : : : "memory")
