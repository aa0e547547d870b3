// A 5-node singly linked list whose head pointer is lost: the head is definitely lost, the
// 4 nodes behind it indirectly lost. The list is built by pushing at the front, so the head
// is the last node allocated and (in both allocators) the highest address: memcheck visits
// the tail nodes first, makes each a clique leader, and folds them into the head's clique
// when it reaches the head. Totals per kind do not depend on the order.
// MEMCHECK: definite 32 1
// MEMCHECK: indirect 128 4
// REACHABLE: compare
#include "memcheck_case.h"

struct node {
  struct node* next;
  long value;
  char tag[16];
};
struct node* g_list;

NOINLINE static void setup(void) {
  for (int i = 0; i < 5; ++i) {
    struct node* n = malloc(sizeof(struct node));  // 32 bytes
    n->next = g_list;
    n->value = i;
    g_list = n;
  }
}

NOINLINE static void drop(void) {
  g_list = NULL;
}

int main(void) {
  setup();
  drop();
  scrub_stack();
  return 0;
}
