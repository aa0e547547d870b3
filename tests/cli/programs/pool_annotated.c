// A pool allocator over superblocks from malloc, annotated one of three ways (ANNOTATE: 1
// memtrack.h, 2 valgrind's macros through memtrack's compatibility valgrind.h, 3 heaptrack's
// heaptrack_api.h), with the same leaks whichever way:
//   - pool A, never destroyed, reachable from a global: a block kept (reachable), a block
//     given back (pool free), a block of 48 bytes whose pointer is dropped (definitely lost),
//     and the 32-byte block only it points to (indirectly lost);
//   - pool B: its blocks, one still live, go with the pool (destroyed, its superblock freed);
//   - a malloc-like block of 24 bytes outside any pool, dropped (definitely lost), and one
//     freed (free-like).
// The superblocks hold the pools' blocks and are no leaks of their own (memcheck leaves out
// such a block too). With ANNOTATE 2 the same binary runs under valgrind's memcheck.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if ANNOTATE == 1
#include <memtrack/memtrack.h>
#define POOL_CREATE(pool) memtrack_create_pool(pool)
#define POOL_DESTROY(pool) memtrack_destroy_pool(pool)
#define POOL_ALLOC(pool, p, n) memtrack_pool_alloc(pool, p, n)
#define POOL_FREE(pool, p) memtrack_pool_free(pool, p)
#define BLOCK_ALLOC(p, n) memtrack_malloclike_block(p, n)
#define BLOCK_FREE(p) memtrack_freelike_block(p)
#elif ANNOTATE == 2
#include <valgrind/memcheck.h>
#define POOL_CREATE(pool) VALGRIND_CREATE_MEMPOOL(pool, 0, 0)
#define POOL_DESTROY(pool) VALGRIND_DESTROY_MEMPOOL(pool)
#define POOL_ALLOC(pool, p, n) VALGRIND_MEMPOOL_ALLOC(pool, p, n)
#define POOL_FREE(pool, p) VALGRIND_MEMPOOL_FREE(pool, p)
#define BLOCK_ALLOC(p, n) VALGRIND_MALLOCLIKE_BLOCK(p, n, 0, 0)
#define BLOCK_FREE(p) VALGRIND_FREELIKE_BLOCK(p, 0)
#elif ANNOTATE == 3
// heaptrack's API has blocks but no pools: a pool's destruction is the free of each of its
// live blocks, which this pool keeps a list of for that (outside the pool's own memory).
#include <heaptrack_api.h>
#define HEAPTRACK_POOLS 1
#define POOL_CREATE(pool) ((void)(pool))
#define POOL_DESTROY(pool) ((void)(pool))
#define POOL_ALLOC(pool, p, n)    \
  do {                            \
    (void)(pool);                 \
    heaptrack_report_alloc(p, n); \
  } while (0)
#define POOL_FREE(pool, p)    \
  do {                        \
    (void)(pool);             \
    heaptrack_report_free(p); \
  } while (0)
#define BLOCK_ALLOC(p, n) heaptrack_report_alloc(p, n)
#define BLOCK_FREE(p) heaptrack_report_free(p)
#else
#error "ANNOTATE must be 1, 2 or 3"
#endif

struct Pool {
  char* super;
  size_t used;
  size_t capacity;
};

static struct Pool* pool_a;  // the global that keeps pool A reachable
static void* kept;           // pool A's block still in use at exit
static void* volatile sink;

__attribute__((noinline)) static struct Pool* pool_new(size_t capacity) {
  struct Pool* pool = malloc(sizeof *pool);
  pool->super = malloc(capacity);
  pool->used = 0;
  pool->capacity = capacity;
  POOL_CREATE(pool);
  return pool;
}

__attribute__((noinline)) static void* pool_alloc(struct Pool* pool, size_t size) {
  size_t rounded = (size + 15) & ~(size_t)15;
  if (pool->used + rounded > pool->capacity) return NULL;
  void* p = pool->super + pool->used;
  pool->used += rounded;
  POOL_ALLOC(pool, p, size);  // POOL-ALLOC
  return p;
}

__attribute__((noinline)) static void pool_free(struct Pool* pool, void* p) {
  POOL_FREE(pool, p);
}

__attribute__((noinline)) static void pool_delete(struct Pool* pool) {
  POOL_DESTROY(pool);
  free(pool->super);
  free(pool);
}

// Blocks of no pool, carved from one more superblock (reachable from `arena`).
static char* arena;
__attribute__((noinline)) static void* block_alloc(size_t offset, size_t size) {
  void* p = arena + offset;
  BLOCK_ALLOC(p, size);  // BLOCK-ALLOC
  return p;
}

__attribute__((noinline)) static void use_pool_a(void) {
  pool_a = pool_new(4096);
  kept = pool_alloc(pool_a, 100);
  void* given_back = pool_alloc(pool_a, 64);
  pool_free(pool_a, given_back);
  void** lost = pool_alloc(pool_a, 48);
  void* only_from_lost = pool_alloc(pool_a, 32);
  memset(only_from_lost, 0, 32);
  lost[0] = only_from_lost;
  sink = lost;
  lost = NULL;
  sink = NULL;
}

__attribute__((noinline)) static void use_pool_b(void) {
  struct Pool* pool = pool_new(1024);
  void* first = pool_alloc(pool, 200);
  void* second = pool_alloc(pool, 300);
  pool_free(pool, first);
#ifdef HEAPTRACK_POOLS
  pool_free(pool, second);  // no pools in heaptrack's API: each block is freed
#endif
  sink = second;
  sink = NULL;
  pool_delete(pool);
}

__attribute__((noinline)) static void use_blocks(void) {
  arena = malloc(256);
  void* dropped = block_alloc(16, 24);  // not at the superblock's start, which `arena` holds
  void* freed = block_alloc(64, 40);
  BLOCK_FREE(freed);
  sink = dropped;
  sink = NULL;
}

int main(void) {
  use_pool_a();
  use_pool_b();
  use_blocks();
  printf("pool_annotated: %s\n", kept != NULL ? "done" : "out of pool memory");
  return 0;
}
