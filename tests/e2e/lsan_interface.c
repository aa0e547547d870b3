// A program written for LeakSanitizer: it calls the functions of <sanitizer/lsan_interface.h>
// and defines the ones LSan calls back. The same source is built plainly for memtrack (the
// weak __lsan_* references resolve to libmemtrack.so, which is preloaded) and with
// -fsanitize=leak (they resolve to liblsan); check_lsan_verdict.py checks that both tools
// find the same leaks. Per site:
//   lose_direct  48 lost                        a leak for both
//   lose_list    32 + 32 (head -> node)         definite + indirect (LSan: Direct + Indirect)
//   keep_ignored 64, __lsan_ignore_object       not a leak
//   disabled     80 + 16 between disable/enable not a leak; the other thread's 24 is one
//   rooted       40, held only by a registered root region: not a leak; the region (a
//                heap block of 64, reachable only through the registration) is one
//   unregistered 16 -> 8, a region registered and then unregistered: both leak
//   keep_global  72, held by a global: not a leak (a leak with use_globals=0)
//   by_default   56, matched by __lsan_default_suppressions: suppressed under memtrack run
//   after_check  1000, after __lsan_do_leak_check: never reported (the check is done)
// With the argument "recoverable" it first calls __lsan_do_recoverable_leak_check, which
// reports and returns 1; LSan and memtrack then report again at __lsan_do_leak_check.
// Emulated (tests/emulated), the host's `memtrack report` reads the result file alone: it was
// written at __lsan_do_leak_check, while the process ran, and no `memtrack run` waited for the
// process to learn its status, so how it ended is unknown.
// RUN-OPTIONS: report_on_signal=0
// PLAIN-COMPARE: none
// TEXT-EXPECT-HOW: __lsan_do_leak_check
// EMULATED-EXPECT-HOW: unknown
// TEXT-EXPECT-LEAKED: 280 bytes in 8 blocks
// CLI-EXPECT-LEAKED: 224 bytes in 7 blocks
// EXPECT-GROUP: 64 bytes in 1 block | register_root@region main
// TEXT-EXPECT-GROUP: 56 bytes in 1 block | by_default@by_default main
// EXPECT-GROUP: 48 bytes in 1 block | lose_direct@direct main
// EXPECT-GROUP: 32 bytes in 1 block | lose_list@head main
// EXPECT-GROUP: 32 bytes in 1 block | lose_list@node main
// EXPECT-GROUP: 24 bytes in 1 block | other_thread@thread
// EXPECT-GROUP: 16 bytes in 1 block | unregistered@unreg_region main
// EXPECT-GROUP: 8 bytes in 1 block | unregistered@unreg main
// TEXT-EXPECT-GROUPS: 8
// CLI-EXPECT-GROUPS: 7
#include <pthread.h>
#include <sanitizer/lsan_interface.h>
#include <stdint.h>
#include <string.h>

#include "e2e_util.h"

// Weak, as in code bases that call LSan's interface without always linking liblsan.
#pragma weak __lsan_ignore_object
#pragma weak __lsan_disable
#pragma weak __lsan_enable
#pragma weak __lsan_register_root_region
#pragma weak __lsan_unregister_root_region
#pragma weak __lsan_do_leak_check
#pragma weak __lsan_do_recoverable_leak_check

struct node {
  struct node* next;
  char payload[32 - sizeof(struct node*)];  // 32 bytes on 32-bit targets too
};

const char* __lsan_default_options(void) {
  return "use_registers=1";
}

const char* __lsan_default_suppressions(void) {
  return "# the program's own\nleak:by_default\n";
}

// Held by a global: reachable, unless LSAN_OPTIONS=use_globals=0 takes the globals out of the
// roots (check_lsan_verdict.py runs that too).
void* g_kept;

// Pointers the scan must not see: stored xor-ed.
static uintptr_t g_hidden[2];
#define HIDE(p) ((uintptr_t)(p) ^ 0x5a5a5a5a5a5a5a5aULL)

__attribute__((noinline)) void lose_direct(void) {
  ESCAPE(malloc(48));  // @direct
}

__attribute__((noinline)) void lose_list(void) {
  struct node* head = malloc(sizeof *head);  // @head
  head->next = malloc(sizeof *head);         // @node
  head->next->next = NULL;
  ESCAPE(head);
}

__attribute__((noinline)) void keep_ignored(void) {
  void* p = malloc(64);
  memset(p, 0, 64);
  __lsan_ignore_object(p);
  ESCAPE(p);
}

static void* other_thread(void* arg) {
  (void)arg;
  ESCAPE(malloc(24));  // @thread
  return NULL;
}

__attribute__((noinline)) void disabled(void) {
  __lsan_disable();
  ESCAPE(malloc(80));
  __lsan_disable();  // nested
  ESCAPE(malloc(16));
  __lsan_enable();
  // Per thread: another thread's blocks are checked as usual.
  pthread_t t;
  CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  __lsan_enable();
}

__attribute__((noinline)) void register_root(void) {
  void** region = malloc(64);  // @region
  memset(region, 0, 64);
  region[0] = malloc(40);  // reachable through the root region only
  __lsan_register_root_region(region, 64);
  g_hidden[0] = HIDE(region);
  ESCAPE(region);
}

__attribute__((noinline)) void unregistered(void) {
  void** region = malloc(16);  // @unreg_region
  region[1] = NULL;
  region[0] = malloc(8);  // @unreg
  __lsan_register_root_region(region, 16);
  __lsan_unregister_root_region(region, 16);
  g_hidden[1] = HIDE(region);
  ESCAPE(region);
}

__attribute__((noinline)) void keep_global(void) {
  g_kept = malloc(72);  // @global
}

__attribute__((noinline)) void by_default(void) {
  ESCAPE(malloc(56));  // @by_default
}

__attribute__((noinline)) void after_check(void) {
  ESCAPE(malloc(1000));
}

int main(int argc, char** argv) {
  lose_direct();
  lose_list();
  keep_ignored();
  disabled();
  register_root();
  unregistered();
  keep_global();
  by_default();
  ESCAPE(0);
  if (argc > 1 && strcmp(argv[1], "recoverable") == 0) {
    printf("recoverable check: %d\n", __lsan_do_recoverable_leak_check());
  }
  __lsan_do_leak_check();
  after_check();
  __lsan_do_leak_check();  // no effect: the one check is done
  printf("done\n");
  return 0;
}
