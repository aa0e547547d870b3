// Known heap graphs for memtrack run --show-retainers (test_retainers.py): each root and
// what it alone keeps is fixed, so the dominator tree's numbers are exact.
//  - g_table: a global table of 8 lists of 4 nodes each (a map of lists): 1 + 8 * 4 blocks.
//  - a cache only a thread's stack frame keeps (3 blocks), and a cycle of 5 blocks behind a
//    thread-local pointer of the same thread, which waits at exit.
//  - a block two globals point to (g_first, g_second): neither keeps it alone, nor its child.
//  - a 56-byte block only the main thread's TLS points to.
//  - waiting for snapshots only: a lost 48-byte node pointing at another (indirectly lost).
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
  struct node* next;
  char payload[40];  // 48 bytes a node
};

struct node** g_table;
void* g_first;
void* g_second;
// Not static: the compiler drops a store to a static variable that nothing reads.
__thread struct node* t_ring;
__thread void* t_config;
static pthread_barrier_t g_ready;

__attribute__((noinline)) struct node* new_node(struct node* next) {
  struct node* n = malloc(sizeof(struct node));
  memset(n->payload, 0, sizeof(n->payload));
  n->next = next;
  return n;
}

__attribute__((noinline)) void build_table(void) {
  g_table = calloc(8, sizeof(struct node*));  // 64 bytes
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) g_table[i] = new_node(g_table[i]);
  }
}

__attribute__((noinline)) void* make_cache(void) {
  void** cache = malloc(3 * sizeof(void*));  // 24 bytes holding two 100-byte blocks
  cache[0] = malloc(100);
  cache[1] = malloc(100);
  cache[2] = NULL;
  return cache;
}

__attribute__((noinline)) void build_ring(void) {
  struct node* first = new_node(NULL);
  struct node* last = first;
  for (int i = 0; i < 4; ++i) last = new_node(last);
  first->next = last;  // a cycle of 5
  t_ring = last;
}

// Overwrites the stack below the caller's frame, where build_ring left copies of its
// pointers: the scan reads 128 bytes below a thread's stack pointer (the red zone), and a stale
// copy there would share the ring with the TLS pointer.
__attribute__((noinline)) void scrub_stack(void) {
  volatile char scratch[1024];
  for (size_t i = 0; i < sizeof(scratch); ++i) scratch[i] = 0;
}

static void* cache_thread(void* arg) {
  (void)arg;
  void* volatile cache = make_cache();
  build_ring();
  scrub_stack();
  pthread_barrier_wait(&g_ready);
  for (;;) pause();  // holds its cache until the process exits
  return cache;
}

__attribute__((noinline)) void build_shared(void) {
  void** shared = malloc(2 * sizeof(void*));  // 16 bytes holding a 32-byte child
  shared[0] = malloc(32);
  shared[1] = NULL;
  g_first = shared;
  g_second = shared;
}

// The addresses printed are XORed with this, so that no copy of one is left in printf's
// frames (below the stack pointer, but a stale word the scan would read if it took the stack
// for data); the test XORs them back.
#define HIDE(p) ((unsigned long)(uintptr_t)(p) ^ 0x5a5a5a5a5a5aUL)

// A lost pair: the first block, lost, points at the second (indirectly lost). Returns the
// second's address, hidden.
__attribute__((noinline)) unsigned long build_lost_pair(void) {
  struct node* second = new_node(NULL);
  new_node(second);  // lost as soon as it returns
  return HIDE(second);
}

// Prints "ready", its pid and the hidden addresses of a table node, the shared block, the main
// thread's TLS block and an indirectly lost block. Not inlined: the registers that held them
// are restored or reused once it returns, so no stopped thread's register keeps one.
__attribute__((noinline)) void print_ready(void) {
  unsigned long lost = build_lost_pair();
  printf("ready %d %lx %lx %lx %lx\n", (int)getpid(), HIDE(g_table[3]->next), HIDE(g_first),
         HIDE(t_config), lost);
  fflush(stdout);
}

// With an argument: prints its addresses, then waits (for memtrack snapshot --retainers) until
// SIGTERM or 60 s.
static void wait_for_snapshots(void) {
  print_ready();
  scrub_stack();
  for (int i = 0; i < 600; ++i) usleep(100000);
}

int main(int argc, char** argv) {
  (void)argv;
  pthread_barrier_init(&g_ready, NULL, 2);
  build_table();
  build_shared();
  t_config = malloc(56);
  pthread_t thread;
  pthread_create(&thread, NULL, cache_thread, NULL);
  pthread_barrier_wait(&g_ready);
  if (argc > 1) wait_for_snapshots();
  return 0;
}
