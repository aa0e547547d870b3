/* memtrack's valgrind.h: code annotated for valgrind (its allocator macros) reports its
 * blocks to memtrack too, after a rebuild with this directory first on the include path:
 *
 *   cc -I<prefix>/include/memtrack/compat ...
 *
 * Where valgrind's own valgrind.h is installed it is included as well and each macro makes
 * both calls, so the same binary runs under valgrind as before; elsewhere the macros call
 * memtrack only. Mapped: VALGRIND_MALLOCLIKE_BLOCK, VALGRIND_FREELIKE_BLOCK,
 * VALGRIND_RESIZEINPLACE_BLOCK, VALGRIND_CREATE_MEMPOOL(_EXT) (its flags are not kept),
 * VALGRIND_DESTROY_MEMPOOL, VALGRIND_MEMPOOL_ALLOC, VALGRIND_MEMPOOL_FREE,
 * VALGRIND_MEMPOOL_TRIM, VALGRIND_MOVE_MEMPOOL, VALGRIND_MEMPOOL_CHANGE and
 * VALGRIND_MEMPOOL_EXISTS (docs/annotations.md). Red zones are not memtrack's. */
#ifndef MEMTRACK_COMPAT_VALGRIND_H_
#define MEMTRACK_COMPAT_VALGRIND_H_

#if defined(__has_include_next)
#if __has_include_next(<valgrind/valgrind.h>)
#include_next <valgrind/valgrind.h>
#define MEMTRACK_WITH_VALGRIND 1
#endif
#endif

#include "../../memtrack.h"

#ifdef MEMTRACK_WITH_VALGRIND
/* valgrind's client request first, then memtrack's call. */
#define MEMTRACK_VG_BOTH(valgrind_call, memtrack_call) \
  do {                                                 \
    valgrind_call;                                     \
    memtrack_call;                                     \
  } while (0)
#define MEMTRACK_VG_REQUEST(request, a1, a2, a3, a4) \
  VALGRIND_DO_CLIENT_REQUEST_STMT(request, a1, a2, a3, a4, 0)
#else
#define MEMTRACK_VG_BOTH(valgrind_call, memtrack_call) \
  do {                                                 \
    memtrack_call;                                     \
  } while (0)
#define MEMTRACK_VG_REQUEST(request, a1, a2, a3, a4) ((void)0)
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif
#ifndef VALGRIND_DO_CLIENT_REQUEST_STMT
#define VALGRIND_DO_CLIENT_REQUEST_STMT(request, a1, a2, a3, a4, a5) \
  do {                                                               \
  } while (0)
#endif
#ifndef VALGRIND_DO_CLIENT_REQUEST_EXPR
#define VALGRIND_DO_CLIENT_REQUEST_EXPR(_zzq_default, request, a1, a2, a3, a4, a5) (_zzq_default)
#endif
#endif

#undef VALGRIND_MALLOCLIKE_BLOCK
#define VALGRIND_MALLOCLIKE_BLOCK(addr, sizeB, rzB, is_zeroed)                                     \
  MEMTRACK_VG_BOTH(MEMTRACK_VG_REQUEST(VG_USERREQ__MALLOCLIKE_BLOCK, addr, sizeB, rzB, is_zeroed), \
                   memtrack_malloclike_block((const void*)(addr), (__SIZE_TYPE__)(sizeB)))
#undef VALGRIND_RESIZEINPLACE_BLOCK
#define VALGRIND_RESIZEINPLACE_BLOCK(addr, oldSizeB, newSizeB, rzB)                        \
  MEMTRACK_VG_BOTH(                                                                        \
      MEMTRACK_VG_REQUEST(VG_USERREQ__RESIZEINPLACE_BLOCK, addr, oldSizeB, newSizeB, rzB), \
      memtrack_resize_block((const void*)(addr), (__SIZE_TYPE__)(newSizeB)))
#undef VALGRIND_FREELIKE_BLOCK
#define VALGRIND_FREELIKE_BLOCK(addr, rzB)                                           \
  MEMTRACK_VG_BOTH(MEMTRACK_VG_REQUEST(VG_USERREQ__FREELIKE_BLOCK, addr, rzB, 0, 0), \
                   memtrack_freelike_block((const void*)(addr)))
#undef VALGRIND_CREATE_MEMPOOL
#define VALGRIND_CREATE_MEMPOOL(pool, rzB, is_zeroed)                                        \
  MEMTRACK_VG_BOTH(MEMTRACK_VG_REQUEST(VG_USERREQ__CREATE_MEMPOOL, pool, rzB, is_zeroed, 0), \
                   memtrack_create_pool((const void*)(pool)))
#undef VALGRIND_CREATE_MEMPOOL_EXT
#define VALGRIND_CREATE_MEMPOOL_EXT(pool, rzB, is_zeroed, flags)                                 \
  MEMTRACK_VG_BOTH(MEMTRACK_VG_REQUEST(VG_USERREQ__CREATE_MEMPOOL, pool, rzB, is_zeroed, flags), \
                   memtrack_create_pool((const void*)(pool)))
#undef VALGRIND_DESTROY_MEMPOOL
#define VALGRIND_DESTROY_MEMPOOL(pool)                                              \
  MEMTRACK_VG_BOTH(MEMTRACK_VG_REQUEST(VG_USERREQ__DESTROY_MEMPOOL, pool, 0, 0, 0), \
                   memtrack_destroy_pool((const void*)(pool)))
#undef VALGRIND_MEMPOOL_ALLOC
#define VALGRIND_MEMPOOL_ALLOC(pool, addr, size)                           \
  MEMTRACK_VG_BOTH(                                                        \
      MEMTRACK_VG_REQUEST(VG_USERREQ__MEMPOOL_ALLOC, pool, addr, size, 0), \
      memtrack_pool_alloc((const void*)(pool), (const void*)(addr), (__SIZE_TYPE__)(size)))
#undef VALGRIND_MEMPOOL_FREE
#define VALGRIND_MEMPOOL_FREE(pool, addr)                                           \
  MEMTRACK_VG_BOTH(MEMTRACK_VG_REQUEST(VG_USERREQ__MEMPOOL_FREE, pool, addr, 0, 0), \
                   memtrack_pool_free((const void*)(pool), (const void*)(addr)))
#undef VALGRIND_MEMPOOL_TRIM
#define VALGRIND_MEMPOOL_TRIM(pool, addr, size)                           \
  MEMTRACK_VG_BOTH(                                                       \
      MEMTRACK_VG_REQUEST(VG_USERREQ__MEMPOOL_TRIM, pool, addr, size, 0), \
      memtrack_pool_trim((const void*)(pool), (const void*)(addr), (__SIZE_TYPE__)(size)))
#undef VALGRIND_MOVE_MEMPOOL
#define VALGRIND_MOVE_MEMPOOL(poolA, poolB)                                           \
  MEMTRACK_VG_BOTH(MEMTRACK_VG_REQUEST(VG_USERREQ__MOVE_MEMPOOL, poolA, poolB, 0, 0), \
                   memtrack_move_pool((const void*)(poolA), (const void*)(poolB)))
#undef VALGRIND_MEMPOOL_CHANGE
#define VALGRIND_MEMPOOL_CHANGE(pool, addrA, addrB, size)                                     \
  MEMTRACK_VG_BOTH(MEMTRACK_VG_REQUEST(VG_USERREQ__MEMPOOL_CHANGE, pool, addrA, addrB, size), \
                   memtrack_pool_change((const void*)(pool), (const void*)(addrA),            \
                                        (const void*)(addrB), (__SIZE_TYPE__)(size)))
#undef VALGRIND_MEMPOOL_EXISTS
#ifdef MEMTRACK_WITH_VALGRIND
/* Under valgrind valgrind's answer, else memtrack's. */
#define VALGRIND_MEMPOOL_EXISTS(pool)                                                             \
  (RUNNING_ON_VALGRIND ? (unsigned)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, VG_USERREQ__MEMPOOL_EXISTS, \
                                                                   pool, 0, 0, 0, 0)              \
                       : (unsigned)memtrack_pool_exists((const void*)(pool)))
#else
#define VALGRIND_MEMPOOL_EXISTS(pool) ((unsigned)memtrack_pool_exists((const void*)(pool)))
#endif

#endif /* MEMTRACK_COMPAT_VALGRIND_H_ */
