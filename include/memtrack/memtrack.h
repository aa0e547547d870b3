/* memtrack's optional cooperation header for C and C++ programs (like LeakSanitizer's
 * lsan_interface.h). Everything here is safe without memtrack: the calls do nothing when the
 * program does not run under libmemtrack.so, and nothing needs to be linked.
 *
 *   #include <memtrack/memtrack.h>
 *   memtrack_ignore_object(cache);   // never report this block (nor what only it holds)
 *   memtrack_do_leak_check();        // print a leak report now, while running
 *
 *
 *   // An allocator of the program's own (a pool, an arena, a free list over memory it got
 *   // elsewhere): its blocks are leak-checked and reported like malloc's, at the annotating
 *   // call's stack. Code annotated for valgrind compiles against these with
 *   // -I<prefix>/include/memtrack/compat (compat/valgrind/valgrind.h); heaptrack's
 *   // heaptrack_api.h needs no change at all.
 *   memtrack_create_pool(pool);
 *   memtrack_pool_alloc(pool, chunk, size);   // a block of the pool
 *   memtrack_pool_free(pool, chunk);
 *   memtrack_destroy_pool(pool);              // its blocks are gone (not leaks)
 *   memtrack_malloclike_block(p, size);       // a block of no pool
 *   memtrack_freelike_block(p);
 *
 *   // Default runtime options, read before MEMTRACK_OPTIONS (which wins). The runtime finds
 *   // it in the program's symbol table, so the program must not be stripped (or be linked
 *   // with -rdynamic).
 *   const char* memtrack_default_options(void) { return "max_frames=16"; }
 */
#ifndef MEMTRACK_MEMTRACK_H_
#define MEMTRACK_MEMTRACK_H_

#ifdef __cplusplus
extern "C" {
#endif

/* The pointer is only compared, never read through: tell gcc, or -Wmaybe-uninitialized
 * fires on a freshly allocated block. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#define MEMTRACK_ADDRESS_ONLY __attribute__((access(none, 1)))
#else
#define MEMTRACK_ADDRESS_ONLY
#endif

/* Provided by libmemtrack.so; weak, so they are null without it. */
void memtrack_rt_ignore_object(const void* ptr) __attribute__((weak)) MEMTRACK_ADDRESS_ONLY;
long memtrack_rt_do_leak_check(void) __attribute__((weak));

/* Treats the block that starts at `ptr` as reachable: it is never reported as a leak, and
 * blocks reachable from it are not either. `ptr` must be what malloc/new returned. */
MEMTRACK_ADDRESS_ONLY static inline void memtrack_ignore_object(const void* ptr) {
  if (memtrack_rt_ignore_object) memtrack_rt_ignore_object(ptr);
}

/* Scans for leaks now and writes a report while the program goes on running; the exit
 * report still follows. Under `memtrack run` the report reaches the CLI, which shows it
 * before the exit report, where the other reports go (--log-file, and `checks` in --json);
 * without the CLI it goes to stderr or the log_file option. Returns the number of leaked
 * bytes found (definitely, indirectly and possibly lost), or -1 without memtrack. */
static inline long memtrack_do_leak_check(void) {
  return memtrack_rt_do_leak_check ? memtrack_rt_do_leak_check() : -1;
}

/* The program's own allocators (docs/annotations.md). A pool is named by an address (its own
 * object's, usually); its blocks are the program's to place, inside memory it got from malloc
 * (a superblock: the leak check then leaves that block out, as memcheck does, and checks
 * the pool's blocks instead) or elsewhere. Blocks must start at a multiple of 8. Without
 * memtrack each call tests one pointer and does nothing. */
#define MEMTRACK_ANNOTATE_MALLOCLIKE 1
#define MEMTRACK_ANNOTATE_FREELIKE 2
#define MEMTRACK_ANNOTATE_RESIZE 3
#define MEMTRACK_ANNOTATE_CREATE_POOL 4
#define MEMTRACK_ANNOTATE_DESTROY_POOL 5
#define MEMTRACK_ANNOTATE_POOL_ALLOC 6
#define MEMTRACK_ANNOTATE_POOL_FREE 7
#define MEMTRACK_ANNOTATE_POOL_TRIM 8
#define MEMTRACK_ANNOTATE_MOVE_POOL 9
#define MEMTRACK_ANNOTATE_POOL_CHANGE 10
#define MEMTRACK_ANNOTATE_REGISTER_ROOT_REGION 11
#define MEMTRACK_ANNOTATE_UNREGISTER_ROOT_REGION 12
#define MEMTRACK_ANNOTATE_POOL_EXISTS 13
long memtrack_rt_annotate(int request, const void* pool, const void* addr, __SIZE_TYPE__ size,
                          const void* other) __attribute__((weak));

/* Macros, so that a block's stack starts in the function that makes the call, as under
 * valgrind's macros (an inline function would be a frame of its own in the report). */
#define MEMTRACK_ANNOTATE_CALL(request, pool, addr, size, other)                   \
  (memtrack_rt_annotate                                                            \
       ? memtrack_rt_annotate((request), (const void*)(pool), (const void*)(addr), \
                              (__SIZE_TYPE__)(size), (const void*)(other))         \
       : 0L)

/* A block of `size` bytes at `addr`, of no pool (valgrind's MALLOCLIKE_BLOCK). */
#define memtrack_malloclike_block(addr, size) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_MALLOCLIKE, 0, addr, size, 0))
/* The block at `addr` was freed (FREELIKE_BLOCK). */
#define memtrack_freelike_block(addr) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_FREELIKE, 0, addr, 0, 0))
/* The block at `addr` now has `size` bytes, in place (RESIZEINPLACE_BLOCK). */
#define memtrack_resize_block(addr, size) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_RESIZE, 0, addr, size, 0))
/* A pool named `pool` (CREATE_MEMPOOL); memtrack_pool_alloc makes one too. */
#define memtrack_create_pool(pool) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_CREATE_POOL, pool, 0, 0, 0))
/* The pool and all its blocks are gone (DESTROY_MEMPOOL): none of them is a leak. */
#define memtrack_destroy_pool(pool) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_DESTROY_POOL, pool, 0, 0, 0))
/* A block of `size` bytes at `addr` in `pool` (MEMPOOL_ALLOC). */
#define memtrack_pool_alloc(pool, addr, size) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_POOL_ALLOC, pool, addr, size, 0))
/* The pool's block at `addr` was freed (MEMPOOL_FREE). */
#define memtrack_pool_free(pool, addr) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_POOL_FREE, pool, addr, 0, 0))
/* The pool's blocks not wholly inside [addr, addr + size) were freed (MEMPOOL_TRIM). */
#define memtrack_pool_trim(pool, addr, size) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_POOL_TRIM, pool, addr, size, 0))
/* The pool named `from` is now named `to` (MOVE_MEMPOOL). */
#define memtrack_move_pool(from, to) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_MOVE_POOL, from, 0, 0, to))
/* The pool's block at `from` now lies at `to` with `size` bytes (MEMPOOL_CHANGE). */
#define memtrack_pool_change(pool, from, to, size) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_POOL_CHANGE, pool, from, size, to))
/* 1 if a pool named `pool` exists (MEMPOOL_EXISTS); 0 without memtrack. */
#define memtrack_pool_exists(pool) \
  ((int)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_POOL_EXISTS, pool, 0, 0, 0))
/* [addr, addr + size) is scanned for pointers like a global (LeakSanitizer's
 * __lsan_register_root_region), until unregistered with the same arguments. */
#define memtrack_register_root_region(addr, size) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_REGISTER_ROOT_REGION, 0, addr, size, 0))
#define memtrack_unregister_root_region(addr, size) \
  ((void)MEMTRACK_ANNOTATE_CALL(MEMTRACK_ANNOTATE_UNREGISTER_ROOT_REGION, 0, addr, size, 0))

/* Define this in the program to set default runtime options (see docs/flags.md). */
const char* memtrack_default_options(void);

#ifdef __cplusplus
}
#endif

#endif /* MEMTRACK_MEMTRACK_H_ */
