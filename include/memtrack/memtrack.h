/* memtrack's optional cooperation header for C and C++ programs (like LeakSanitizer's
 * lsan_interface.h). Everything here is safe without memtrack: the calls do nothing when the
 * program does not run under libmemtrack.so, and nothing needs to be linked.
 *
 *   #include <memtrack/memtrack.h>
 *   memtrack_ignore_object(cache);   // never report this block (nor what only it holds)
 *   memtrack_do_leak_check();        // print a leak report now, while running
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

/* Define this in the program to set default runtime options (see docs/flags.md). */
const char* memtrack_default_options(void);

#ifdef __cplusplus
}
#endif

#endif /* MEMTRACK_MEMTRACK_H_ */
