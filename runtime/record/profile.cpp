// Heap profile recording (see profile.h). Calls libc through core::sys (open, write, close,
// read of /proc/self/statm) but never malloc; the buffer and the bitmap of the stacks
// already written are mmap'd.
#include "runtime/record/profile.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "core/profile_format.h"
#include "core/spin_lock.h"
#include "core/stack_depot.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

std::atomic<bool> g_profile_on{false};

namespace {

namespace profile = core::profile;
using profile::Tag;

// 1 MiB: about 100,000 events between writes; a process killed by SIGKILL loses at most
// this much. The largest record (a stack of 256 frames) takes under 3 KiB.
constexpr size_t kBufferSize = size_t{1} << 20;
constexpr size_t kMaxRecord = 16 + 10 * (core::kMaxFramesLimit + 3);
constexpr size_t kBitmapBytes = (size_t{core::StackDepot::kMaxStacks} + 1) / 8 + 1;
constexpr size_t kMaxPath = 4096 + core::kMaxFlagStringLength + 32;

// What every event writes, on cache lines of its own: the linker had put the lock beside
// the allocation path's g_epoch and g_freed_after_report (record.cpp), so with several
// threads each allocation and free also missed on the line another thread's event had
// just taken.
struct alignas(64) Recorder {
  core::SpinLock lock;
  uint8_t* buffer = nullptr;   // kBufferSize bytes; guarded by lock
  size_t used = 0;             // guarded by lock
  uint64_t start_ns = 0;       // the header's start time
  uint64_t last_us = 0;        // time of the last timed record; guarded by lock
  uintptr_t last_ptr = 0;      // guarded by lock
  int last_tid = 0;            // guarded by lock
  bool unbuffered = false;     // guarded by lock: set by the final flush
  uint8_t* written = nullptr;  // bitmap of the stack ids already in the file (reserved)
};
Recorder g_rec;
char g_path[kMaxPath];  // the raw file; set by profile_start
std::atomic<bool> g_warned{false};
std::atomic<uint64_t> g_pending_rss{0};  // an RSS sample not yet written, | 1; 0 = none

void flush_locked() {
  if (g_rec.used == 0) return;
  int fd = open(g_path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0 ||
      !core::sys::write_all(fd, reinterpret_cast<const char*>(g_rec.buffer), g_rec.used)) {
    warn_once(g_warned, "warning: cannot write the heap profile; its records are lost");
  }
  core::sys::close_fd(fd);
  g_rec.used = 0;
}

// Room for one more record of at most kMaxRecord bytes.
void reserve_locked() {
  if (g_rec.used + kMaxRecord > kBufferSize) flush_locked();
}

void put_tag(Tag tag) {
  g_rec.buffer[g_rec.used++] = static_cast<uint8_t>(tag);
}

void put(uint64_t value) {
  g_rec.used += profile::put_varint(g_rec.buffer + g_rec.used, value);
}

// CLOCK_MONOTONIC_COARSE: the kernel tick's resolution (4 ms at HZ=250), read from the vDSO
// in about a tenth of the precise clock's time; the precise clock cost a third of the
// recording's overhead per event (docs/runtime.md, "The heap profile").
uint64_t coarse_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

// The time difference of a timed record. `now` is read before the lock is taken (the read,
// 13 ns, need not hold up the other threads); a thread that read the clock just before
// another's later reading may take the lock after it, so the time is raised to the previous
// record's: times in the file never go backwards, and the order is the lock's.
void put_time_locked(uint64_t now) {
  uint64_t now_us = now > g_rec.start_ns ? (now - g_rec.start_ns) / 1000 : 0;
  if (now_us < g_rec.last_us) now_us = g_rec.last_us;
  put(now_us - g_rec.last_us);
  g_rec.last_us = now_us;
}

void put_ptr_locked(uintptr_t ptr) {
  put(profile::zigzag(static_cast<int64_t>(ptr - g_rec.last_ptr)));
  g_rec.last_ptr = ptr;
}

void put_thread_locked(int tid) {
  if (tid == g_rec.last_tid) return;
  g_rec.last_tid = tid;
  put_tag(Tag::kThread);
  put(static_cast<uint64_t>(tid));
}

int current_thread_id() {
  if (t_thread.tid == 0) t_thread.tid = core::sys::current_tid();
  return t_thread.tid;
}

bool stack_written(uint32_t id) {
  return (g_rec.written[id / 8] >> (id % 8)) & 1;
}

void put_stack_locked(uint32_t id, const uintptr_t* frames, uint32_t depth) {
  if (id > core::StackDepot::kMaxStacks || frames == nullptr || stack_written(id)) return;
  g_rec.written[id / 8] = static_cast<uint8_t>(g_rec.written[id / 8] | (1u << (id % 8)));
  put_tag(Tag::kStack);
  put(id);
  put(depth);
  uintptr_t previous = 0;
  for (uint32_t i = 0; i < depth; ++i) {
    put(profile::zigzag(static_cast<int64_t>(frames[i] - previous)));
    previous = frames[i];
  }
  reserve_locked();
}

void put_pending_sample_locked(uint64_t now) {
  if (g_pending_rss.load(std::memory_order_relaxed) == 0) return;
  uint64_t rss = g_pending_rss.exchange(0, std::memory_order_relaxed) & ~uint64_t{1};
  put_tag(Tag::kSample);
  put_time_locked(now);
  put(rss);
}

// Written after every record when the process is ending (later records would be lost).
void end_record_locked() {
  if (g_rec.unbuffered) flush_locked();
}

uint64_t read_rss_bytes() {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[128];
  ssize_t n = read(fd, text, sizeof(text) - 1);
  core::sys::close_fd(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  const char* p = text;
  while (*p != ' ' && *p != '\0') ++p;  // size, then resident
  uint64_t pages = 0;
  for (++p; *p >= '0' && *p <= '9'; ++p) pages = pages * 10 + static_cast<uint64_t>(*p - '0');
  return pages * core::sys::page_size();
}

bool lock_unless_interrupted(bool interrupted_runtime) {
  if (!interrupted_runtime) {
    g_rec.lock.lock();
    return true;
  }
  return g_rec.lock.try_lock();
}

}  // namespace

bool profile_start(const char* path) {
  if (g_rec.buffer == nullptr)
    g_rec.buffer = static_cast<uint8_t*>(core::sys::map_pages(kBufferSize));
  if (g_rec.written != nullptr)
    core::sys::unmap_pages(g_rec.written, kBitmapBytes);  // a forked child
  g_rec.written = static_cast<uint8_t*>(core::sys::reserve_pages(kBitmapBytes));
  if (g_rec.buffer == nullptr || g_rec.written == nullptr) {
    diag("warning: cannot map memory for the heap profile; it is off");
    return false;
  }
  core::TextBuffer name(g_path, sizeof(g_path));
  name.str(path);
  int fd = open(g_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    core::FixedText<kMaxPath + 64> message;
    message.str("warning: cannot create the heap profile ").str(g_path).str(" (errno ");
    message.i64(core::sys::get_errno()).str("); it is off");
    diag(message.data());
    return false;
  }
  core::sys::close_fd(fd);
  g_rec.start_ns = coarse_ns();
  g_rec.used = 0;
  g_rec.last_us = 0;
  g_rec.last_ptr = 0;
  g_rec.last_tid = 0;
  g_rec.unbuffered = false;
  core::copy_bytes(g_rec.buffer, profile::kRawMagic, sizeof(profile::kRawMagic));
  uint32_t header[2] = {profile::kVersion, static_cast<uint32_t>(core::sys::current_pid())};
  uint64_t times[2] = {g_rec.start_ns, 0};
  core::copy_bytes(g_rec.buffer + 8, header, sizeof(header));
  core::copy_bytes(g_rec.buffer + 16, times, sizeof(times));
  g_rec.used = profile::kRawHeaderSize;
  {
    core::SpinLockGuard guard(g_rec.lock);
    flush_locked();  // the header now, so a reader never sees a file without one
  }
  g_profile_on.store(true, std::memory_order_release);
  return true;
}

ProfileReallocScope::ProfileReallocScope() {
  t_thread.in_realloc = true;
}

ProfileReallocScope::~ProfileReallocScope() {
  t_thread.in_realloc = false;
}

void profile_alloc(uintptr_t ptr, uint64_t size, uint32_t stack_id, const uintptr_t* frames,
                   uint32_t depth) {
  int tid = current_thread_id();
  uint64_t now = coarse_ns();
  core::SpinLockGuard guard(g_rec.lock);
  reserve_locked();
  put_pending_sample_locked(now);
  put_stack_locked(stack_id, frames, depth);
  put_thread_locked(tid);
  put_tag(Tag::kAlloc);
  put_time_locked(now);
  put(size);
  put(stack_id);
  put_ptr_locked(ptr);
  end_record_locked();
}

void profile_free(uintptr_t ptr) {
  Tag tag = t_thread.in_realloc ? Tag::kReallocFree : Tag::kFree;
  int tid = current_thread_id();
  uint64_t now = coarse_ns();
  core::SpinLockGuard guard(g_rec.lock);
  reserve_locked();
  put_pending_sample_locked(now);
  put_thread_locked(tid);
  put_tag(tag);
  put_time_locked(now);
  put_ptr_locked(ptr);
  end_record_locked();
}

// memtrack's thread runs at nice 19: were it to take the buffer lock, a busy machine could
// preempt it while it holds it and stall every allocating thread of the program for whole
// time slices (measured: +50% wall time on churn at load 14). So it only leaves the sample
// here, and the next event writes it under the lock it takes anyway.
void profile_sample() {
  g_pending_rss.store(read_rss_bytes() | 1, std::memory_order_relaxed);
}

void profile_append_modules(const uint8_t* payload, size_t size) {
  core::SpinLockGuard guard(g_rec.lock);
  flush_locked();
  uint8_t head[16];
  head[0] = static_cast<uint8_t>(Tag::kModules);
  size_t head_size = 1 + profile::put_varint(head + 1, size);
  int fd = open(g_path, O_WRONLY | O_APPEND | O_CLOEXEC);
  bool ok = fd >= 0 && core::sys::write_all(fd, reinterpret_cast<const char*>(head), head_size) &&
            core::sys::write_all(fd, reinterpret_cast<const char*>(payload), size);
  core::sys::close_fd(fd);
  if (!ok) warn_once(g_warned, "warning: cannot write the heap profile; its records are lost");
}

void profile_flush() {
  if (!profiling()) return;
  bool interrupted_runtime = in_runtime();
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  if (lock_unless_interrupted(interrupted_runtime)) {
    flush_locked();
    g_rec.lock.unlock();
  }
  core::sys::set_errno(saved_errno);
}

void profile_flush_final() {
  if (!profiling()) return;
  bool interrupted_runtime = in_runtime();
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  if (lock_unless_interrupted(interrupted_runtime)) {
    if (!g_rec.unbuffered) {
      put_pending_sample_locked(coarse_ns());  // reserve_locked keeps room for it and kEnd
      put_tag(Tag::kEnd);
      flush_locked();
      g_rec.unbuffered = true;
    }
    g_rec.lock.unlock();
  }
  core::sys::set_errno(saved_errno);
}

void profile_fork_prepare() {
  if (!profiling()) return;
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  g_rec.lock.lock();  // held across fork(): the child gets a buffer nobody is writing into
  flush_locked();
  core::sys::set_errno(saved_errno);
}

void profile_fork_parent() {
  if (!profiling()) return;
  g_rec.lock.unlock();
}

void profile_fork_child_reset() {
  if (!profiling()) return;
  g_rec.lock.reset_after_fork();
  g_profile_on.store(false, std::memory_order_relaxed);  // until the child's file exists
  t_thread.tid = 0;
}

}  // namespace memtrack::rt
