// Whether a process runs under memtrack run: its memory map holds the runtime library
// (libmemtrack.so, loaded by LD_PRELOAD), or memtrack attach's (libmemtrack_attach.so). Used by
// memtrack snapshot and memtrack ui. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace memtrack::top {

// True when `maps` (the text of /proc/PID/maps) maps a file named libmemtrack.so.
inline bool maps_show_memtrack(std::string_view maps) {
  return maps.find("/libmemtrack.so") != std::string_view::npos;
}

// True when `maps` maps libmemtrack_attach.so, the runtime memtrack attach loads: the process
// is attached, or was (the library stays after a detach; its settings file does not).
inline bool maps_show_attach_runtime(std::string_view maps) {
  return maps.find("/libmemtrack_attach.so") != std::string_view::npos;
}

// True when `maps` (of process `pid`) shows memtrack attach's runtime attached now: the
// library, and the settings file it maps while attached (runtime/output/settings_file.h).
inline bool maps_show_attached(std::string_view maps, uint32_t pid) {
  return maps_show_attach_runtime(maps) &&
         maps.find("/memtrack." + std::to_string(pid) + ".settings") != std::string_view::npos;
}

}  // namespace memtrack::top
