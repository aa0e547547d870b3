// The process's descriptor table and the stdio scope (fd_tracking.h). Runtime-safe: no malloc.
#include "runtime/fd/fd_tracking.h"

namespace memtrack::rt {

FdTable g_fds;

}  // namespace memtrack::rt
