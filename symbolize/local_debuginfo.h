// A libdwfl find_debuginfo callback that only looks on this machine: never asks a debuginfod
// server, never downloads. Tools-only (opens files, allocates).
#pragma once

#include <elfutils/libdwfl.h>

namespace memtrack::symbolize {

// Finds separate debug info for `mod` in this order:
//  0. the inflated copy in the debug file cache (debuginfo_cache.h), by build-id;
//  1. by build-id under the debuginfo path (/usr/lib/debug/.build-id/xx/yyyy.debug, which is
//     where Debian's -dbgsym packages install it; also dwz ".gnu_debugaltlink" files);
//  2. by .gnu_debuglink name next to the file, in its .debug/ subdirectory, and under
//     /usr/lib/debug/<dir of the file>/, accepted only if its build-id equals the module's.
// A file found by 1 or 2 whose sections are compressed is copied into the cache inflated, and
// the copy is returned. Returns an open fd (ownership passes to libdwfl) and sets
// *debuginfo_file_name to a malloc'd path, or returns -1.
//
// Why not dwfl_standard_find_debuginfo: in elfutils 0.188 it ends with a debuginfod query
// whenever libdebuginfod is installed and DEBUGINFOD_URLS is set (Debian sets it system-wide
// through libdebuginfod-common), which would make symbolizing a report download gigabytes.
// Thread safety: as libdwfl's own callbacks (no shared state).
int find_local_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                         const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                         char** debuginfo_file_name);

}  // namespace memtrack::symbolize
