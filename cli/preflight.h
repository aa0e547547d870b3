// What memtrack can tell before it starts a program: whether LD_PRELOAD can reach it at all
// (a static binary, a setuid/setgid program or one with file capabilities cannot be
// tracked), and whether MEMTRACK_OPTIONS turns the exit report off.
#pragma once

#include <optional>
#include <string>

namespace memtrack::cli {

// Why `path` (an executable file) would run without libmemtrack.so, as a message for the
// user ("PATH is statically linked: ..."), or nothing when it can be tracked. Scripts (#!)
// are not looked into. Reads the ELF program headers (PT_INTERP), the set-user/group-ID bits
// (as the kernel applies them for this process: not on a nosuid mount, not when memtrack
// already runs as that user or group) and the security.capability attribute.
// A program that carries the runtime (linked with $(memtrack link-flags)) is always trackable.
std::optional<std::string> untrackable_reason(const std::string& path);

// True if the ELF file at `path` carries the link-time runtime (its .memtrack_runtime
// section, docs/static-link.md). False for anything unreadable.
bool carries_runtime(const std::string& path);

// True when MEMTRACK_OPTIONS (as set in memtrack's environment) turns report_at_exit off,
// parsed by the runtime's own option parser.
bool environment_disables_exit_report();

}  // namespace memtrack::cli
