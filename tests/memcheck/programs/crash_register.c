// A program that drops its only pointer to a block and then dies of SIGSEGV, with the
// block's address still in a scratch register (as memset or any call can leave it). The
// crashing thread dies of the signal: its registers are no roots, and the block is
// definitely lost, as memcheck says. Built -O2: the pointer lives in registers only.
// MEMCHECK: definite 4000 1
// REACHABLE: compare
// EXIT: -11
#include <string.h>

#include "memcheck_case.h"

int main(void) {
  char* p = malloc(4000);
  CHECK(p != NULL);
  memset(p, 1, 4000);
#if defined(__x86_64__)
  // The address in rdx, a register the fault's context holds; then a write to address 0.
  __asm__ volatile("mov %0, %%rdx\n\tmovl $1, 0" : : "r"(p) : "rdx", "memory");
#else
  __asm__ volatile("" : : "r"(p) : "memory");
  *(volatile int*)0 = 1;
#endif
  return 0;
}
