// The only copy of a block's address is in registers of a thread that is still running
// (spinning in inline assembly with it in r12, a callee-saved register, and in the input
// register) when main calls exit(): still reachable, because every live thread's
// general-purpose registers are roots.
//
// Built -O2: at -O0 gcc would spill malloc's result to the worker's stack, and the case would
// test the stack instead of the registers. At -O2 the worker is (objdump -d, gcc 12):
//   push %r12; mov $0x1f0,%edi; call malloc; mov %rax,%r12; movl $1,g_ready; 1: pause; jmp 1b
// so the address is in rax and r12 only; the stack holds the caller's r12. The size, 496, is
// a multiple of 16, so glibc's top-chunk pointer of the thread's arena (in an anonymous
// mapping, scanned) ends exactly at the block's end and points into no block.
// MEMCHECK: reachable 496 1
// REACHABLE: compare
#include <pthread.h>
#include <stdatomic.h>

#include "memcheck_case.h"

static atomic_int g_ready;

static void* worker(void* arg) {
  (void)arg;
  void* block = malloc(496);
  __asm__ volatile(
      "mov %0, %%r12\n\t"
      "movl $1, %1\n\t"  // g_ready = 1 (a plain store is a release store on x86-64)
      "1: pause\n\t"
      "jmp 1b"
      :
      : "r"(block), "m"(g_ready)
      : "r12", "memory");
  __builtin_unreachable();
}

int main(void) {
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, worker, NULL) == 0);
  while (atomic_load(&g_ready) == 0) {
  }
  exit(0);
}
