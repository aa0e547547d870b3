// Leaks with known sizes for the profile formats (pprof, speedscope): 1,000 bytes in
// leak_buffer, 5 x 100 bytes in leak_loop, a 3-node list built by build_list through the
// always-inlined new_node (the head definitely lost, the 2 nodes behind it indirectly lost,
// all from one stack). Definitely lost: 1,532 bytes in 7 blocks; indirectly lost: 64 bytes in
// 2 blocks. The tests find the lines they expect by the text of the calls (marker_line).
#include "cli_util.h"

struct node {
  struct node* next;
  char payload[24];
};

static inline __attribute__((always_inline)) struct node* new_node(struct node* next) {
  struct node* n = malloc(sizeof(struct node));
  n->next = next;
  return n;
}

__attribute__((noinline)) struct node* build_list(int count) {
  struct node* head = 0;
  for (int i = 0; i < count; ++i) head = new_node(head);
  return head;
}

__attribute__((noinline)) void* leak_buffer(void) {
  void* p = malloc(1000);
  ESCAPE(p);
  return p;
}

__attribute__((noinline)) void leak_loop(void) {
  for (int i = 0; i < 5; ++i) {
    void* p = malloc(100);
    ESCAPE(p);
  }
}

int main(int argc, char** argv) {
  void* a = leak_buffer();
  ESCAPE(a);
  leak_loop();
  struct node* list = build_list(3);
  ESCAPE(list);
  a = list = 0;
  ESCAPE(a);
  ESCAPE(list);
  return status_arg(argc, argv, 1);
}
