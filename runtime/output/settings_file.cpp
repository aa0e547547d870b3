// The settings file (settings_file.h). Calls libc open/write/mmap/close; no malloc.
#include "runtime/output/settings_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/flags.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/runtime.h"

namespace memtrack::rt {
namespace {

// This process's mapping of its settings file (nullptr: none), so that a forked child can
// republish it under its own pid and drop its parent's.
const char* g_mapped = nullptr;
size_t g_mapped_size = 0;

using SettingsPath = core::FixedText<core::kMaxFlagStringLength + 64>;

SettingsPath settings_path() {
  SettingsPath path;
  path.str(g_flags.result_dir).str("/memtrack.").i64(core::sys::current_pid()).str(".settings");
  return path;
}

// Writes `size` bytes of options and a line break (a mapping needs a byte to map) and maps
// the file read-only; only its name in /proc/PID/maps and its content matter.
void write_and_map(const char* options, size_t size) {
  SettingsPath path = settings_path();
  int fd = open(path.data(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  bool written =
      (size == 0 || core::sys::write_all(fd, options, size)) && core::sys::write_all(fd, "\n", 1);
  if (written) {
    void* mapped = mmap(nullptr, size + 1, PROT_READ, MAP_SHARED, fd, 0);
    if (mapped != MAP_FAILED) {
      g_mapped = static_cast<const char*>(mapped);
      g_mapped_size = size + 1;
    }
  }
  close(fd);
}

}  // namespace

void publish_settings(const char* options) {
  if (g_flags.result_dir[0] == '\0') return;
  write_and_map(options, options != nullptr ? core::string_length(options) : 0);
}

void republish_settings_after_fork() {
  if (g_mapped == nullptr) return;
  const char* parent = g_mapped;
  size_t parent_size = g_mapped_size;
  g_mapped = nullptr;
  write_and_map(parent, parent_size - 1);
  munmap(const_cast<char*>(parent), parent_size);
}

void withdraw_settings() {
  if (g_mapped == nullptr) return;
  unlink(settings_path().data());
}

void unpublish_settings() {
  if (g_mapped == nullptr) return;
  unlink(settings_path().data());
  munmap(const_cast<char*>(g_mapped), g_mapped_size);
  g_mapped = nullptr;
  g_mapped_size = 0;
}

}  // namespace memtrack::rt
