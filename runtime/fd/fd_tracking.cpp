// The process's descriptor table and the stdio scope (fd_tracking.h). Runtime-safe: no malloc.
#include "runtime/fd/fd_tracking.h"

namespace memtrack::rt {

FdTable g_fds;
__thread int t_stdio_scope = 0;
__thread uintptr_t t_stdio_first_block = 0;
__thread uint32_t t_stdio_first_size = 0;

}  // namespace memtrack::rt
