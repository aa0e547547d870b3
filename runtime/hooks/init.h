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

// memtrack_attach (hooks/attach.h): initialises the runtime with `options` in place of the
// environment's (or, attached again, reads them anew). False if the real allocator is not
// found. Then start_attached_services: the fork handlers (once), the settings file, the
// start marker and memtrack's thread.
bool initialize_attached(const char* options);
void start_attached_services(const char* options);

}  // namespace memtrack::rt
