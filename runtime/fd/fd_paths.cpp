// Remembered descriptor paths (fd_paths.h). No libc, no malloc.
#include "runtime/fd/fd_paths.h"

#include <atomic>

#include "core/sys_linux.h"

namespace memtrack::rt {
namespace {

constexpr size_t kSlot = kMaxRememberedPath + 1;  // NUL-terminated; "" = none
constexpr size_t kTableBytes = kSlot * kMaxRememberedFd;

std::atomic<char*> g_paths{nullptr};

// The table, reserved on first use; nullptr if it cannot be (paths then fall back).
char* table() {
  char* paths = g_paths.load(std::memory_order_acquire);
  if (paths != nullptr) return paths;
  auto* fresh = static_cast<char*>(core::sys::reserve_pages(kTableBytes));
  if (fresh == nullptr) return nullptr;
  if (!g_paths.compare_exchange_strong(paths, fresh, std::memory_order_acq_rel)) {
    core::sys::unmap_pages(fresh, kTableBytes);  // another thread was first
    return paths;
  }
  return fresh;
}

}  // namespace

void remember_fd_path(int fd, const char* path) {
  if (fd < 0 || fd >= kMaxRememberedFd) return;
  size_t length = 0;
  while (path != nullptr && path[length] != '\0' && length <= kMaxRememberedPath) ++length;
  bool fits = path != nullptr && length > 0 && length <= kMaxRememberedPath;
  char* paths = fits ? table() : g_paths.load(std::memory_order_acquire);
  if (paths == nullptr) return;  // nothing remembered yet, so nothing to forget
  char* slot = paths + static_cast<size_t>(fd) * kSlot;
  if (!fits) {
    slot[0] = '\0';
    return;
  }
  for (size_t i = 0; i < length; ++i) slot[i] = path[i];
  slot[length] = '\0';
}

bool try_append_fd_path(int fd, core::TextBuffer& text) {
  char* paths = g_paths.load(std::memory_order_acquire);
  if (paths == nullptr || fd < 0 || fd >= kMaxRememberedFd) return false;
  const char* slot = paths + static_cast<size_t>(fd) * kSlot;
  if (slot[0] == '\0') return false;
  text.str(slot);
  return true;
}

}  // namespace memtrack::rt
