// Thin wrappers over Linux system calls. Runtime-safe: none of these allocate.
#include "core/sys_linux.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace memtrack::core::sys {

void* map_pages(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void unmap_pages(void* addr, size_t bytes) {
  if (addr != nullptr) munmap(addr, bytes);
}

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

int open_for_write(const char* path) {
  return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

void close_fd(int fd) {
  if (fd >= 0) close(fd);
}

// getpid() is not cached by glibc >= 2.25, so it is correct after fork and in vfork children.
int current_pid() {
  return static_cast<int>(syscall(SYS_getpid));
}
int current_tid() {
  return static_cast<int>(syscall(SYS_gettid));
}

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void yield_cpu() {
  sched_yield();
}

size_t page_size() {
  return static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

int get_errno() {
  return errno;
}
void set_errno(int value) {
  errno = value;
}

}  // namespace memtrack::core::sys
