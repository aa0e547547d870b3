// Thin wrappers over Linux system calls. Runtime-safe: none of these allocate.
#include "core/sys_linux.h"

#include "core/spin_lock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace memtrack::core::sys {
namespace {

// The registry of the runtime's own mappings. A spin lock is enough: mappings are made and
// dropped rarely (table growth, 1 MiB depot chunks, report working sets).
constexpr size_t kMaxOwnMappings = 16384;
MemoryRange g_own[kMaxOwnMappings];
size_t g_own_count = 0;
size_t g_own_lost = 0;  // registrations that did not fit
SpinLock g_own_lock;

void remember_mapping(uintptr_t start, size_t bytes) {
  SpinLockGuard guard(g_own_lock);
  if (g_own_count == kMaxOwnMappings) {
    ++g_own_lost;
    return;
  }
  g_own[g_own_count++] = MemoryRange{start, start + bytes};
}

void forget_mapping(uintptr_t start) {
  SpinLockGuard guard(g_own_lock);
  for (size_t i = 0; i < g_own_count; ++i) {
    if (g_own[i].start == start) {
      g_own[i] = g_own[--g_own_count];
      return;
    }
  }
}

}  // namespace

void* map_pages(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  remember_mapping(reinterpret_cast<uintptr_t>(p), bytes);
  return p;
}

void* reserve_pages(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  remember_mapping(reinterpret_cast<uintptr_t>(p), bytes);
  return p;
}

void* reserve_address_space(size_t bytes, size_t alignment) {
  size_t padded = bytes + alignment;
  void* p = mmap(nullptr, padded, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto start = reinterpret_cast<uintptr_t>(p);
  uintptr_t aligned = (start + alignment - 1) & ~(uintptr_t{alignment} - 1);
  if (aligned > start) munmap(p, aligned - start);
  uintptr_t end = aligned + bytes;
  if (start + padded > end) munmap(reinterpret_cast<void*>(end), start + padded - end);
  remember_mapping(aligned, bytes);
  return reinterpret_cast<void*>(aligned);
}

void exclude_from_core_dump(void* addr, size_t bytes) {
  madvise(addr, bytes, MADV_DONTDUMP);
}

bool commit_pages(void* addr, size_t bytes) {
  return mprotect(addr, bytes, PROT_READ | PROT_WRITE) == 0;
}

bool protect_pages(void* addr, size_t bytes) {
  return mprotect(addr, bytes, PROT_NONE) == 0;
}

bool release_pages(void* addr, size_t bytes) {
  return madvise(addr, bytes, MADV_DONTNEED) == 0;
}

void unmap_pages(void* addr, size_t bytes) {
  if (addr == nullptr) return;
  forget_mapping(reinterpret_cast<uintptr_t>(addr));
  munmap(addr, bytes);
}

size_t own_mappings(MemoryRange* out, size_t max) {
  SpinLockGuard guard(g_own_lock);
  for (size_t i = 0; i < g_own_count && i < max; ++i) out[i] = g_own[i];
  return g_own_count + g_own_lost;
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

int open_for_append(const char* path) {
  return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
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

int thread_count() {
  int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  int count = 0;
  alignas(8) char buffer[2048];
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buffer, sizeof(buffer));
    if (n < 0) count = -1;
    if (n <= 0) break;
    for (long pos = 0; pos < n;) {
      auto* entry = reinterpret_cast<struct dirent64*>(buffer + pos);
      pos += entry->d_reclen;
      if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9') ++count;
    }
  }
  close(fd);
  return count;
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

}  // namespace memtrack::core::sys
