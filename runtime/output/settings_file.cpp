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

void publish_settings(const char* options) {
  if (g_flags.result_dir[0] == '\0') return;
  core::FixedText<core::kMaxFlagStringLength + 64> path;
  path.str(g_flags.result_dir).str("/memtrack.").i64(core::sys::current_pid()).str(".settings");
  int fd = open(path.data(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  size_t size = options != nullptr ? core::string_length(options) : 0;
  // A mapping needs a byte to map: the file ends with a line break.
  bool written =
      (size == 0 || core::sys::write_all(fd, options, size)) && core::sys::write_all(fd, "\n", 1);
  if (written) {
    void* mapped = mmap(nullptr, size + 1, PROT_READ, MAP_SHARED, fd, 0);
    (void)mapped;  // kept for the life of the image: only its name in /proc/PID/maps matters
  }
  close(fd);
}

}  // namespace memtrack::rt
