// Heap profile recording (see profile.h). Calls libc through core::sys (open, write, close,
// read of /proc/self/statm) but never malloc; the buffers and the bitmap of the stacks
// already written are mmap'd.
#include "runtime/record/profile.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <new>
#include <span>

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

// A thread's buffer: 64 KiB, about 8,000 events between writes. The largest record (a stack
// of 256 frames, then its event) takes under 3 KiB.
constexpr size_t kThreadBufferSize = size_t{64} << 10;
// The buffer of threads beyond kThreadBuffers (and of a thread's last frees after its
// buffer went back at its exit), shared under its lock as every thread's was before.
constexpr size_t kSharedBufferSize = size_t{1} << 20;
constexpr int kThreadBuffers = 256;
constexpr int kSharedIndex = kThreadBuffers + 1;  // t_thread.profile_buffer of the shared one
constexpr size_t kMaxRecord = 64 + 10 * (core::kMaxFramesLimit + 3);
constexpr size_t kBitmapBytes = (size_t{core::StackDepot::kMaxStacks} + 1) / 8 + 1;
constexpr size_t kMaxPath = 4096 + core::kMaxFlagStringLength + 32;
// How often a flush of another thread's buffer tries its lock before giving up on it (a
// thread stopped or interrupted while recording): its batch is then lost, not the process.
constexpr int kFlushLockTries = 200;
// A batch open this long is written by whichever thread fills its own buffer next (or by
// memtrack's thread): the packer holds back every later event until it has it. The coarse
// clock makes this one to two of its ticks.
constexpr uint64_t kStaleNs = 2000000;

// One batch being filled (core/profile_format.h, kBatch): its header's room at the start of
// `data`, then its records. Each buffer has a cache line of its own, so threads recording
// at once touch no common line but the sequence counter.
struct alignas(64) Buffer {
  core::SpinLock lock;
  std::atomic<bool> claimed{false};  // a thread owns it (not used for the shared one)
  bool has_event = false;            // guarded by lock: first_seq is set
  uint8_t* data = nullptr;           // capacity bytes; mapped when first claimed
  size_t capacity = 0;
  size_t used = 0;  // guarded by lock; 0: no batch open
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t opened_ns = 0;  // when the open batch got its first record
  uint64_t last_us = 0;    // time of the batch's last timed record
  uintptr_t last_ptr = 0;
  int last_tid = 0;
};

// kThreadBuffers + 1 of them, the last one shared; mapped by the first profile_start (a
// static array would be 33 KB of .bss among the allocation path's globals, and moved them).
Buffer* g_buffers = nullptr;
constexpr size_t kBuffersBytes = sizeof(Buffer) * (kThreadBuffers + 1);
std::atomic<int> g_claimed_high{0};  // 1 + the highest index of a buffer ever claimed

// The one number every event takes (a relaxed fetch_add): it orders the events of all
// threads. A free's number is taken before the block goes back to the allocator and an
// allocation's after it came out, so a block reused by another thread is freed before it is
// allocated again in this order too.
struct alignas(64) Sequence {
  std::atomic<uint64_t> next{0};
};
Sequence g_sequence;

core::SpinLock g_file_lock;     // one write to the file at a time (batches, modules, the end)
uint8_t* g_written = nullptr;   // bitmap of the stack ids already recorded (reserved)
uint64_t g_start_ns = 0;        // the header's start time
uint64_t g_flush_after_ns = 0;  // memtrack's thread writes a batch open this long
char g_path[kMaxPath];          // the raw file; set by profile_start
std::atomic<bool> g_unbuffered{false};  // set by the final flush: every record written at once
std::atomic<bool> g_warned{false};
std::atomic<bool> g_warned_lost{false};
std::atomic<uint64_t> g_pending_rss{0};  // an RSS sample not yet written, | 1; 0 = none
pthread_key_t g_exit_key;
bool g_have_exit_key = false;

Buffer& shared_buffer() {
  return g_buffers[kThreadBuffers];
}

void write_file(const uint8_t* bytes, size_t size) {
  core::SpinLockGuard guard(g_file_lock);
  int fd = open(g_path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0 || !core::sys::write_all(fd, reinterpret_cast<const char*>(bytes), size)) {
    warn_once(g_warned, "warning: cannot write the heap profile; its records are lost");
  }
  core::sys::close_fd(fd);
}

// Completes the open batch's header and appends the batch to the file. b.lock held.
void flush_locked(Buffer& b) {
  if (b.used == 0) return;
  auto payload = static_cast<uint32_t>(b.used - profile::kBatchHeaderSize);
  b.data[0] = static_cast<uint8_t>(Tag::kBatch);
  core::copy_bytes(b.data + 1, &payload, sizeof(payload));
  core::copy_bytes(b.data + 5, &b.first_seq, sizeof(b.first_seq));
  write_file(b.data, b.used);
  b.used = 0;
}

// A record written at the end of b's open batch (b.lock held). The place it writes to is a
// local, kept in a register: with b.used advanced by every field, each byte stored through
// b.data (a uint8_t store may alias anything) made the compiler load b.used again, and each
// field of an event waited for the store of the one before (a third of profile_alloc's time).
class RecordWriter {
 public:
  explicit RecordWriter(Buffer& b) : b_(b), at_(b.data + b.used) {}
  ~RecordWriter() { b_.used = static_cast<size_t>(at_ - b_.data); }
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  void tag(Tag tag) { *at_++ = static_cast<uint8_t>(tag); }
  void byte(uint8_t value) { *at_++ = value; }
  void varint(uint64_t value) { at_ += profile::put_varint(at_, value); }

 private:
  Buffer& b_;
  uint8_t* at_;
};

bool in_use(const Buffer& b) {
  return &b == &shared_buffer() || b.claimed.load(std::memory_order_acquire);
}

// Whether b's open batch has been open for `age` at `now` (b.lock held). Another thread may
// have opened it after `now` was read.
bool open_for(const Buffer& b, uint64_t now, uint64_t age) {
  return b.used != 0 && now >= b.opened_ns && now - b.opened_ns >= age;
}

// Writes the batches other threads have left open for longer than kStaleNs. Called by a
// thread that has just written its own full batch: busy threads do it, at normal priority,
// so it does not wait for memtrack's thread, which a saturated machine runs seldom at nice
// 19. A batch whose owner is inside its lock is left to it (the lock is only tried).
void flush_stale(const Buffer& own, uint64_t now) {
  int high = g_claimed_high.load(std::memory_order_relaxed);
  for (int i = 0; i <= high && i <= kThreadBuffers; ++i) {
    Buffer& b = i == high ? shared_buffer() : g_buffers[i];
    if (&b == &own || !in_use(b) || !b.lock.try_lock()) continue;
    if (open_for(b, now, kStaleNs)) flush_locked(b);
    b.lock.unlock();
  }
}

// Writes a full batch and opens the next one. b.lock held.
[[gnu::noinline]] void open_batch_locked(Buffer& b, uint64_t now) {
  if (b.used != 0) {
    flush_locked(b);
    flush_stale(b, now);
  }
  b.used = profile::kBatchHeaderSize;
  b.has_event = false;
  b.opened_ns = now;
  b.last_us = 0;
  b.last_ptr = 0;
  b.last_tid = 0;
}

// Room for one more record of at most kMaxRecord bytes, in an open batch. b.lock held.
[[gnu::always_inline]] inline void reserve_locked(Buffer& b, uint64_t now) {
  if (b.used == 0 || b.used + kMaxRecord > b.capacity) open_batch_locked(b, now);
}

// CLOCK_MONOTONIC_COARSE: the kernel tick's resolution (4 ms at HZ=250), read from the vDSO
// in about a tenth of the precise clock's time; the precise clock cost a third of the
// recording's overhead per event (docs/runtime.md, "The heap profile").
uint64_t coarse_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

// The tag, sequence number and time of an event. `now` is read before the lock is taken;
// in the shared buffer a thread that read the clock just before another's later reading may
// take the lock after it, so the time is raised to the batch's previous record's.
// Taken first thing after the buffer's lock, before the record's stores: a locked
// instruction waits for the stores before it to drain.
uint64_t next_sequence() {
  return g_sequence.next.fetch_add(1, std::memory_order_relaxed);
}

// The sequence number's difference from the batch's previous event goes into the tag byte's
// high half when it is 1 to 15 (always 1 with one thread), else into a varint after it.
[[gnu::always_inline]] inline void put_event_locked(Buffer& b, RecordWriter& out, Tag tag,
                                                    uint64_t seq, uint64_t now) {
  if (!b.has_event) {
    b.has_event = true;
    b.first_seq = seq;
    b.last_seq = seq;
  }
  uint64_t delta = seq - b.last_seq;
  if (delta - 1 < profile::kMaxTagSeqDelta) {
    out.byte(static_cast<uint8_t>(static_cast<uint8_t>(tag) | delta << 4));
  } else {
    out.tag(tag);
    out.varint(delta);
  }
  b.last_seq = seq;
  uint64_t now_us = now > g_start_ns ? (now - g_start_ns) / 1000 : 0;
  uint64_t last_us = b.last_us;
  if (now_us < last_us) now_us = last_us;
  out.varint(now_us - last_us);
  b.last_us = now_us;
}

void put_ptr_locked(Buffer& b, RecordWriter& out, uintptr_t ptr) {
  out.varint(profile::zigzag(static_cast<int64_t>(ptr - b.last_ptr)));
  b.last_ptr = ptr;
}

void put_thread_locked(Buffer& b, RecordWriter& out, int tid) {
  if (tid == b.last_tid) return;
  b.last_tid = tid;
  out.tag(Tag::kThread);
  out.varint(static_cast<uint64_t>(tid));
}

int current_thread_id() {
  if (t_thread.tid == 0) t_thread.tid = core::sys::current_tid();
  return t_thread.tid;
}

// Marks the stack as recorded; true if this call did (exactly one thread writes it).
bool claim_stack(uint32_t id) {
  uint8_t bit = static_cast<uint8_t>(1u << (id % 8));
  uint8_t* byte = &g_written[id / 8];
  if ((__atomic_load_n(byte, __ATOMIC_RELAXED) & bit) != 0) return false;
  return (__atomic_fetch_or(byte, bit, __ATOMIC_RELAXED) & bit) == 0;
}

void put_stack_locked(RecordWriter& out, uint32_t id) {
  if (id == core::StackDepot::kInvalidId || id > core::StackDepot::kMaxStacks) return;
  const core::StackView stack = g_stacks.get(id);
  if (stack.frames == nullptr || !claim_stack(id)) return;
  out.tag(Tag::kStack);
  out.varint(id);
  out.varint(stack.size);
  uintptr_t previous = 0;
  for (uint32_t i = 0; i < stack.size; ++i) {
    out.varint(profile::zigzag(static_cast<int64_t>(stack.frames[i] - previous)));
    previous = stack.frames[i];
  }
}

void put_pending_sample_locked(Buffer& b, RecordWriter& out, uint64_t now) {
  if (g_pending_rss.load(std::memory_order_relaxed) == 0) return;
  uint64_t rss = g_pending_rss.exchange(0, std::memory_order_relaxed) & ~uint64_t{1};
  if (rss == 0) return;  // another thread took it meanwhile
  put_event_locked(b, out, Tag::kSample, next_sequence(), now);
  out.varint(rss);
}

// Written after every record when the process is ending (later records would be lost).
void end_record_locked(Buffer& b) {
  if (g_unbuffered.load(std::memory_order_relaxed)) flush_locked(b);
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

void release_at_thread_exit(void* value) {
  auto* b = static_cast<Buffer*>(value);
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  b->lock.lock();
  flush_locked(*b);
  b->lock.unlock();
  b->claimed.store(false, std::memory_order_release);
  t_thread.profile_buffer = kSharedIndex;  // frees in later thread-exit destructors
  core::sys::set_errno(saved_errno);
}

// The calling thread's buffer: its own (claimed at its first event and given back when it
// exits), or the shared one when every buffer is taken or cannot be mapped.
Buffer& thread_buffer() {
  int index = t_thread.profile_buffer;
  if (index > 0) return g_buffers[index - 1];
  for (int i = 0; i < kThreadBuffers && g_have_exit_key; ++i) {
    Buffer& b = g_buffers[i];
    bool expected = false;
    if (b.claimed.load(std::memory_order_relaxed) ||
        !b.claimed.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
      continue;
    }
    if (b.data == nullptr) b.data = static_cast<uint8_t*>(core::sys::map_pages(kThreadBufferSize));
    if (b.data == nullptr || pthread_setspecific(g_exit_key, &b) != 0) {
      b.claimed.store(false, std::memory_order_release);
      break;
    }
    b.capacity = kThreadBufferSize;
    t_thread.profile_buffer = i + 1;
    int high = g_claimed_high.load(std::memory_order_relaxed);
    while (high < i + 1 && !g_claimed_high.compare_exchange_weak(high, i + 1)) {
    }
    return b;
  }
  t_thread.profile_buffer = kSharedIndex;
  return shared_buffer();
}

// Takes the lock of a buffer to write it out: only tried for the caller's own buffer when a
// signal interrupted it inside the runtime (it may hold it), a bounded number of times for
// another thread's (that thread may be stopped while it holds it).
bool lock_for_flush(Buffer& b, bool interrupted_runtime) {
  bool own = t_thread.profile_buffer > 0 && &g_buffers[t_thread.profile_buffer - 1] == &b;
  if (own && interrupted_runtime) return b.lock.try_lock();
  if (own) {
    b.lock.lock();
    return true;
  }
  for (int i = 0; i < kFlushLockTries; ++i) {
    if (b.lock.try_lock()) return true;
    core::sys::yield_cpu();
  }
  return false;
}

// Appends every thread's open batch to the file.
void flush_all(bool interrupted_runtime) {
  for (Buffer& b : std::span(g_buffers, kThreadBuffers + 1)) {
    if (!in_use(b)) continue;
    if (!lock_for_flush(b, interrupted_runtime)) {
      warn_once(g_warned_lost,
                "warning: a thread's heap profile records could not be written (it held its "
                "buffer when the process ended); the profile misses them");
      continue;
    }
    flush_locked(b);
    b.lock.unlock();
  }
}

void reset_buffers() {
  for (Buffer& b : std::span(g_buffers, kThreadBuffers + 1)) {
    b.lock.reset_after_fork();
    b.claimed.store(false, std::memory_order_relaxed);
    b.used = 0;
  }
}

}  // namespace

bool profile_start(const char* path) {
  if (g_buffers == nullptr) {
    void* memory = core::sys::map_pages(kBuffersBytes);
    if (memory == nullptr) {
      diag("warning: cannot map memory for the heap profile; it is off");
      return false;
    }
    g_buffers = static_cast<Buffer*>(memory);
    for (int i = 0; i <= kThreadBuffers; ++i) new (&g_buffers[i]) Buffer;
  }
  Buffer& shared = shared_buffer();
  if (shared.data == nullptr) {
    shared.data = static_cast<uint8_t*>(core::sys::map_pages(kSharedBufferSize));
    shared.capacity = kSharedBufferSize;
  }
  if (g_written != nullptr) core::sys::unmap_pages(g_written, kBitmapBytes);  // a forked child
  g_written = static_cast<uint8_t*>(core::sys::reserve_pages(kBitmapBytes));
  if (shared.data == nullptr || g_written == nullptr) {
    diag("warning: cannot map memory for the heap profile; it is off");
    return false;
  }
  // Without the key a thread's buffer could not be given back at its exit: every thread then
  // uses the shared buffer.
  if (!g_have_exit_key)
    g_have_exit_key = pthread_key_create(&g_exit_key, release_at_thread_exit) == 0;
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
  reset_buffers();
  g_sequence.next.store(0, std::memory_order_relaxed);
  g_unbuffered.store(false, std::memory_order_relaxed);
  g_start_ns = coarse_ns();
  g_flush_after_ns = static_cast<uint64_t>(g_flags.profile_interval_ms) * 1000000u;
  uint8_t header[profile::kRawHeaderSize];
  core::copy_bytes(header, profile::kRawMagic, sizeof(profile::kRawMagic));
  uint32_t fields[2] = {profile::kVersion, static_cast<uint32_t>(core::sys::current_pid())};
  // The sampled mode's interval tells the analysis how to weigh the blocks that have a stack.
  uint64_t times[2] = {g_start_ns, static_cast<uint64_t>(g_flags.sample_bytes)};
  core::copy_bytes(header + 8, fields, sizeof(fields));
  core::copy_bytes(header + 16, times, sizeof(times));
  write_file(header, sizeof(header));  // the header now, so a reader never sees a file without
  g_profile_on.store(true, std::memory_order_release);
  return true;
}

ProfileReallocScope::ProfileReallocScope() {
  t_thread.in_realloc = true;
}

ProfileReallocScope::~ProfileReallocScope() {
  t_thread.in_realloc = false;
}

void profile_alloc(uintptr_t ptr, uint64_t size, uint32_t stack_id) {
  int tid = current_thread_id();
  uint64_t now = coarse_ns();
  Buffer& b = thread_buffer();
  core::SpinLockGuard guard(b.lock);
  uint64_t seq = next_sequence();
  reserve_locked(b, now);
  {
    RecordWriter out(b);
    put_thread_locked(b, out, tid);
    put_stack_locked(out, stack_id);
    put_event_locked(b, out, Tag::kAlloc, seq, now);
    out.varint(size);
    out.varint(stack_id);
    put_ptr_locked(b, out, ptr);
    put_pending_sample_locked(b, out, now);
  }
  end_record_locked(b);
}

void profile_free(uintptr_t ptr) {
  Tag tag = t_thread.in_realloc ? Tag::kReallocFree : Tag::kFree;
  int tid = current_thread_id();
  uint64_t now = coarse_ns();
  Buffer& b = thread_buffer();
  core::SpinLockGuard guard(b.lock);
  uint64_t seq = next_sequence();
  reserve_locked(b, now);
  {
    RecordWriter out(b);
    put_thread_locked(b, out, tid);
    put_event_locked(b, out, tag, seq, now);
    put_ptr_locked(b, out, ptr);
    put_pending_sample_locked(b, out, now);
  }
  end_record_locked(b);
}

// memtrack's thread runs at nice 19: were it to take a buffer lock often, a busy machine
// could preempt it while it holds one and stall that thread for whole time slices (measured
// with the one shared buffer of before: +50% wall time on churn at load 14). So it only
// leaves the sample here, and the next event of any thread writes it.
void profile_sample() {
  g_pending_rss.store(read_rss_bytes() | 1, std::memory_order_relaxed);
}

// The packer holds back every later event until it has a batch's events, so a batch must
// not stay open long: a busy thread fills its buffer in about a millisecond, and a batch open
// for a whole interval belongs to a thread that records slowly or is not running; it is
// written here. The lock is only tried (its owner may be inside it), and memtrack's thread
// holds it for the write only.
void profile_flush_idle() {
  if (!profiling()) return;
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  uint64_t now = coarse_ns();
  for (Buffer& b : std::span(g_buffers, kThreadBuffers + 1)) {
    if (!in_use(b) || !b.lock.try_lock()) continue;
    if (open_for(b, now, g_flush_after_ns)) flush_locked(b);
    b.lock.unlock();
  }
  core::sys::set_errno(saved_errno);
}

void profile_append_modules(const uint8_t* payload, size_t size) {
  uint8_t head[16];
  head[0] = static_cast<uint8_t>(Tag::kModules);
  size_t head_size = 1 + profile::put_varint(head + 1, size);
  core::SpinLockGuard guard(g_file_lock);
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
  flush_all(interrupted_runtime);
  core::sys::set_errno(saved_errno);
}

namespace {

// Writes a one-byte record at the top level of the file (an exec, its failure).
void write_mark(Tag tag) {
  if (!profiling()) return;
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  uint8_t byte = static_cast<uint8_t>(tag);
  write_file(&byte, 1);
  core::sys::set_errno(saved_errno);
}

}  // namespace

void profile_before_exec() {
  profile_flush();
  write_mark(Tag::kExec);
}

void profile_exec_failed() {
  write_mark(Tag::kExecFailed);
}

void profile_flush_final() {
  if (!profiling()) return;
  bool interrupted_runtime = in_runtime();
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  if (!g_unbuffered.load(std::memory_order_relaxed) && g_pending_rss.load() != 0) {
    uint64_t now = coarse_ns();
    Buffer& b = thread_buffer();
    if (lock_for_flush(b, interrupted_runtime)) {
      reserve_locked(b, now);
      {
        RecordWriter out(b);
        put_thread_locked(b, out, current_thread_id());
        put_pending_sample_locked(b, out, now);
      }
      b.lock.unlock();
    }
  }
  if (!g_unbuffered.exchange(true, std::memory_order_relaxed)) {
    flush_all(interrupted_runtime);
    uint8_t end = static_cast<uint8_t>(Tag::kEnd);
    write_file(&end, 1);
  }
  core::sys::set_errno(saved_errno);
}

// The child's buffers are reset (profile_fork_child_reset); the caller's batch is written
// first so that nothing it recorded before the fork waits in the parent for its next event.
void profile_fork_prepare() {
  if (!profiling()) return;
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  if (t_thread.profile_buffer > 0) {
    Buffer& b = g_buffers[t_thread.profile_buffer - 1];
    b.lock.lock();
    flush_locked(b);
    b.lock.unlock();
  }
  core::sys::set_errno(saved_errno);
}

void profile_fork_parent() {}

void profile_fork_child_reset() {
  if (!profiling()) return;
  g_profile_on.store(false, std::memory_order_relaxed);  // until the child's file exists
  g_file_lock.reset_after_fork();
  reset_buffers();  // the other threads' batches belong to the parent, which writes them
  if (g_have_exit_key) pthread_setspecific(g_exit_key, nullptr);
  t_thread.profile_buffer = 0;
  t_thread.tid = 0;
}

}  // namespace memtrack::rt
