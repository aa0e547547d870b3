// The containers of cxx_containers_global.cpp inside one new'd owner whose pointer is lost:
// the owner is definitely lost and every container block indirectly lost.
//
// Address order matters here: the map's root node points back into the owner (to the tree
// header) and the unordered_map's first bucket does too (to _M_before_begin), so the owner
// and those blocks form cycles, and memcheck makes the lowest-addressed block of a cycle the
// clique leader. The owner is allocated first, before any container block, and nothing is
// freed in between (reserve() up front), so it is the lowest address in both allocators.
// A last block held by a global keeps glibc's top chunk away from the container blocks.
// MEMCHECK: definite 160 1
// MEMCHECK: indirect 557 11
// MEMCHECK: reachable 64 1
// REACHABLE: compare
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "memcheck_case.h"

struct Owner {
  std::string text;
  std::vector<long> numbers;
  std::map<int, long> tree;
  std::unordered_map<int, long> hash;
};

void* g_guard;

NOINLINE static void setup() {
  Owner* owner = new Owner();
  owner->text.assign(100, 'x');
  owner->numbers.reserve(10);
  for (long i = 0; i < 10; ++i) owner->numbers.push_back(i);
  for (int i = 0; i < 4; ++i) owner->tree[i] = i;
  owner->hash.reserve(8);
  for (int i = 0; i < 4; ++i) owner->hash[i] = i;
  lose(owner);
  g_guard = malloc(64);
}

int main() {
  setup();
  scrub_stack();
  return 0;
}
