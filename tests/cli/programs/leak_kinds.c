// One leak group of each kind memcheck knows, each from its own function, for comparing
// memtrack's reports with valgrind's: a definitely lost 48-byte node holding an indirectly
// lost 32-byte block, a 64-byte block reached only through a pointer into its middle
// (possibly lost), a 24-byte block a global points to (still reachable), and a 100-byte
// block definitely lost from a function two calls deep. No stdio, so the reports hold only
// these blocks.
#include "cli_util.h"

struct node {
  char* payload;
  char pad[40];
};

char* interior;  // points 16 bytes into the possibly lost block
void* cache;     // keeps the still reachable block

__attribute__((noinline)) struct node* make_node(void) {
  struct node* n = malloc(sizeof(struct node));
  ESCAPE(n);
  n->payload = malloc(32);
  ESCAPE(n->payload);
  return n;
}

__attribute__((noinline)) void make_interior(void) {
  char* block = malloc(64);
  ESCAPE(block);
  interior = block + 16;
}

__attribute__((noinline)) void make_cache(void) {
  cache = malloc(24);
  ESCAPE(cache);
}

__attribute__((noinline)) void* alloc_deep(void) {
  void* p = malloc(100);
  ESCAPE(p);
  return p;
}

__attribute__((noinline)) void* call_deep(void) {
  void* p = alloc_deep();
  ESCAPE(p);
  return p;
}

int main(int argc, char** argv) {
  struct node* n = make_node();
  ESCAPE(n);
  n = NULL;
  ESCAPE(n);
  make_interior();
  make_cache();
  void* deep = call_deep();
  ESCAPE(deep);
  deep = NULL;
  ESCAPE(deep);
  return status_arg(argc, argv, 1);
}
