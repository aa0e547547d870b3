// Start-up of the runtime: the real functions resolved, the options read, the fork handlers
// and the runtime thread installed. Runtime-safe: no malloc of its own.
#pragma once

namespace memtrack::rt {

// Makes sure the real functions are resolved and the options parsed. Returns false only on
// the thread that is doing the initialisation (dlsym may call calloc), and while a static
// program's C library is still starting (process_ready, link_mode.h): that caller must serve
// the request from the bootstrap arena. Thread safe. (initialized(), in runtime.h, says
// whether it has finished.)
bool ensure_initialized();

}  // namespace memtrack::rt
