// Only in the link-time archive: the program's entry, __libc_start_main wrapped (the preload
// build's is in process_hooks.cpp). Calls nothing of libc before main.
#include "runtime/output/process_info.h"

namespace rt = memtrack::rt;

extern "C" int __real___libc_start_main(int (*main)(int, char**, char**), int argc, char** argv,
                                        void (*init)(), void (*fini)(), void (*rtld_fini)(),
                                        void* stack_end);

// _start calls this before the C library is set up: in a static program no thread pointer
// (so no TLS, no errno) yet, and in a static-pie no relocations applied. It only swaps main
// for the wrapper that learns main's status (process_info.h), with PC-relative accesses;
// start-up proper happens in the runtime's constructor, or in the first hook called.
extern "C" __attribute__((visibility("default"))) int __wrap___libc_start_main(
    int (*main)(int, char**, char**), int argc, char** argv, void (*init)(), void (*fini)(),
    void (*rtld_fini)(), void* stack_end) {
  return __real___libc_start_main(rt::wrap_main(main), argc, argv, init, fini, rtld_fini,
                                  stack_end);
}
