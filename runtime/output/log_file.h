// Where the standalone report goes: log_file or stderr. Runtime-safe: no malloc.
#pragma once

#include "core/text_buffer.h"

namespace memtrack::rt {

// Appends `pattern` to `path` with %p expanded to the pid and "%%" to '%' (log_file,
// trace_log).
void expand_log_path(const char* pattern, core::TextBuffer& path);

// The report destination: log_file (%p expanded) or stderr (2). The caller closes it
// unless it is 2.
int open_log_fd();

}  // namespace memtrack::rt
