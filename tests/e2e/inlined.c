// An allocating function inlined into its caller: new_node is always_inline, so at -O2 its
// malloc call sits inside build_list and has no symbol of its own. The CLI's symbolizer reads
// the inline chain from the debug info and shows new_node as a frame of its own, marked
// inlined, at the malloc line, followed by build_list at the line of the inlined call. The
// runtime's text report knows symbols only: there, build_list made the allocation.
// EXPECT-LEAKED: 48 bytes in 1 block
// EXPECT-GROUPS: 1
// TEXT-EXPECT-FRAMES: 2
// TEXT-EXPECT-GROUP: 48 bytes in 1 block | build_list main !new_node
// CLI-EXPECT-FRAMES: 3
// CLI-EXPECT-GROUP: 48 bytes in 1 block | new_node@alloc[inlined] build_list@inline main@call
#include "e2e_util.h"

static inline __attribute__((always_inline)) void* new_node(size_t size) {
  void* node = malloc(size);  // @alloc
  ESCAPE(node);
  return node;
}

__attribute__((noinline)) void* build_list(void) {
  void* head = new_node(48);  // @inline
  ESCAPE(head);
  return head;
}

int main(void) {
  void* list = build_list();  // @call
  ESCAPE(list);
  return 0;
}
