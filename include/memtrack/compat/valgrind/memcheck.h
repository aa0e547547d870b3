/* memtrack's memcheck.h: valgrind's own memcheck.h where it is installed (its macros keep
 * their meaning under valgrind), with valgrind.h's allocator macros reporting to memtrack
 * too (valgrind.h here); elsewhere its macros do nothing, except VALGRIND_DO_LEAK_CHECK,
 * which asks memtrack for a leak report now. */
#ifndef MEMTRACK_COMPAT_MEMCHECK_H_
#define MEMTRACK_COMPAT_MEMCHECK_H_

#if defined(__has_include_next)
#if __has_include_next(<valgrind/memcheck.h>)
#include_next <valgrind/memcheck.h>
#define MEMTRACK_WITH_MEMCHECK 1
#endif
#endif

/* Through the include path, so that valgrind.h here finds valgrind's own after it. */
#include <valgrind/valgrind.h>

#ifndef MEMTRACK_WITH_MEMCHECK
#define VALGRIND_MAKE_MEM_NOACCESS(addr, len) 0
#define VALGRIND_MAKE_MEM_UNDEFINED(addr, len) 0
#define VALGRIND_MAKE_MEM_DEFINED(addr, len) 0
#define VALGRIND_MAKE_MEM_DEFINED_IF_ADDRESSABLE(addr, len) 0
#define VALGRIND_CREATE_BLOCK(addr, len, desc) 0
#define VALGRIND_DISCARD(blkindex) 0
#define VALGRIND_CHECK_MEM_IS_ADDRESSABLE(addr, len) 0
#define VALGRIND_CHECK_MEM_IS_DEFINED(addr, len) 0
#define VALGRIND_CHECK_VALUE_IS_DEFINED(lvalue) 0
#define VALGRIND_DO_LEAK_CHECK ((void)memtrack_do_leak_check())
#define VALGRIND_DO_ADDED_LEAK_CHECK ((void)memtrack_do_leak_check())
#define VALGRIND_DO_CHANGED_LEAK_CHECK ((void)memtrack_do_leak_check())
#define VALGRIND_DO_QUICK_LEAK_CHECK ((void)memtrack_do_leak_check())
#define VALGRIND_DISABLE_ERROR_REPORTING \
  do {                                   \
  } while (0)
#define VALGRIND_ENABLE_ERROR_REPORTING \
  do {                                  \
  } while (0)
#endif

#endif /* MEMTRACK_COMPAT_MEMCHECK_H_ */
