// /proc/self/maps parser. Calls libc (open, read) but never malloc.
#include "runtime/leakcheck/proc_maps.h"

#include <fcntl.h>
#include <unistd.h>

#include "core/text_buffer.h"

namespace memtrack::rt {
namespace {

uintptr_t parse_hex(const char*& p, const char* end) {
  uintptr_t v = 0;
  for (; p < end; ++p) {
    char c = *p;
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) break;
    v = v * 16 + static_cast<uintptr_t>(digit);
  }
  return v;
}

bool starts_with(const char* s, const char* end, const char* prefix) {
  for (; *prefix != '\0'; ++s, ++prefix) {
    if (s >= end || *s != *prefix) return false;
  }
  return true;
}

// "start-end perms offset dev inode   path"
bool parse_line(const char* p, const char* end, MapRegion* region) {
  region->start = parse_hex(p, end);
  if (p >= end || *p != '-') return false;
  ++p;
  region->end = parse_hex(p, end);
  if (end - p < 5) return false;
  region->readable = p[1] == 'r';
  region->writable = p[2] == 'w';
  // Skip perms, offset, device and inode to the path, if any.
  for (int field = 0; field < 4; ++field) {
    while (p < end && *p == ' ') ++p;
    while (p < end && *p != ' ') ++p;
  }
  while (p < end && *p == ' ') ++p;
  bool has_path = p < end;
  region->heap = starts_with(p, end, "[heap]");
  region->special = starts_with(p, end, "[vvar]") || starts_with(p, end, "[vdso]") ||
                    starts_with(p, end, "[vsyscall]");
  region->file_backed = has_path && *p == '/';
  region->device = starts_with(p, end, "/dev/") && !starts_with(p, end, "/dev/zero");
  return true;
}

}  // namespace

bool read_proc_maps(core::MmapArray<MapRegion>& out) {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  static char buffer[1 << 16];
  size_t used = 0;
  bool ok = true;
  for (;;) {
    ssize_t n = read(fd, buffer + used, sizeof(buffer) - used);
    if (n < 0) {
      ok = false;
      break;
    }
    used += static_cast<size_t>(n);
    size_t line_start = 0;
    for (size_t i = 0; i < used; ++i) {
      if (buffer[i] != '\n') continue;
      MapRegion region{};
      if (parse_line(buffer + line_start, buffer + i, &region) && !out.try_push_back(region)) {
        ok = false;
      }
      line_start = i + 1;
    }
    // Keep the unfinished line for the next read.
    core::copy_bytes(buffer, buffer + line_start, used - line_start);
    used -= line_start;
    if (n == 0 || !ok) break;
    if (used == sizeof(buffer)) {  // a line longer than the buffer: drop it
      used = 0;
    }
  }
  close(fd);
  return ok;
}

}  // namespace memtrack::rt
