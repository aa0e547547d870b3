// The event log (see trace_log.h). Calls libc (open, write, close, getcwd) but never
// malloc; every entry point runs inside the runtime scope, so the log's own calls and those
// of a signal handler interrupting it are neither tracked nor logged.
#include "runtime/output/trace_log.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/spin_lock.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/output/log_file.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

std::atomic<bool> g_trace_on{false};

namespace {

constexpr size_t kBufferSize = 64 << 10;
constexpr size_t kMaxPath = 4096;
constexpr size_t kMaxStringShown = 512;  // of a path argument; longer ones end in "..."

core::SpinLock g_lock;
char g_buffer[kBufferSize];                             // guarded by g_lock
size_t g_used = 0;                                      // guarded by g_lock
bool g_unbuffered = false;                              // guarded by g_lock: set by the final flush
char g_pattern[kMaxPath + core::kMaxFlagStringLength];  // absolute; set once at start-up
std::atomic<bool> g_warned{false};

int thread_id() {
  if (t_thread.tid == 0) t_thread.tid = core::sys::current_tid();
  return t_thread.tid;
}

// The file name for the current process: %p is the pid, %% a '%'.
void expand_path(core::TextBuffer& path) {
  expand_log_path(g_pattern, path);
}

// Appends the buffer to the file. Opening it for each flush (every 64 KiB) costs little and
// leaves no descriptor of ours among the program's.
void flush_locked() {
  if (g_used == 0) return;
  core::FixedText<kMaxPath + core::kMaxFlagStringLength + 32> path;
  expand_path(path);
  int fd = open(path.data(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0 || !core::sys::write_all(fd, g_buffer, g_used)) {
    if (!g_warned.exchange(true)) {
      core::FixedText<640> message;
      message.str("warning: cannot write the trace log ").str(path.data()).str(" (errno ");
      message.i64(errno).str("); its lines are lost");
      diag(message.data());
    }
  }
  if (fd >= 0) close(fd);
  g_used = 0;
}

void append(const char* text, size_t size) {
  core::SpinLockGuard guard(g_lock);
  if (g_used + size > kBufferSize) flush_locked();
  core::copy_bytes(g_buffer + g_used, text, size);
  g_used += size;
  if (g_unbuffered) flush_locked();
}

// One event: "<tid> " then what the caller adds, then '\n', appended when it goes out of
// scope. Keeps errno and enters the runtime scope for its lifetime. Formats into a plain
// array (TextBuffer's checks per character cost a third of the log's time in bench/churn).
class Line {
 public:
  Line() : saved_errno_(errno) { i64(thread_id()).chr(' '); }
  ~Line() {
    text_[size_++] = '\n';  // kMaxText keeps room for it
    append(text_, size_);
    errno = saved_errno_;
  }
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;

  void clear() { size_ = 0; }
  Line& chr(char c) {
    if (size_ < kMaxText) text_[size_++] = c;
    return *this;
  }
  Line& str(const char* s) {
    while (*s != '\0' && size_ < kMaxText) text_[size_++] = *s++;
    return *this;
  }
  Line& u64(uint64_t value) {
    char digits[20];
    int n = core::format_decimal(value, digits);
    for (int i = 0; i < n; ++i) chr(digits[i]);
    return *this;
  }
  Line& i64(int64_t value) {
    if (value < 0) return chr('-').u64(0 - static_cast<uint64_t>(value));
    return u64(static_cast<uint64_t>(value));
  }
  Line& ptr(const void* p) {
    static const char kHex[] = "0123456789abcdef";
    auto value = reinterpret_cast<uintptr_t>(p);
    char digits[16];
    int n = 0;
    do {
      digits[n++] = kHex[value & 15];
      value >>= 4;
    } while (value != 0);
    chr('0').chr('x');
    while (n > 0) chr(digits[--n]);
    return *this;
  }
  // A C string argument in double quotes, with '"', '\' and control characters escaped;
  // NULL for a null pointer.
  Line& quoted(const char* s) {
    if (s == nullptr) return str("NULL");
    chr('"');
    size_t n = 0;
    for (; s[n] != '\0' && n < kMaxStringShown; ++n) {
      auto c = static_cast<unsigned char>(s[n]);
      if (c == '"' || c == '\\') {
        chr('\\').chr(static_cast<char>(c));
      } else if (c < 0x20 || c == 0x7f) {
        static const char kHex[] = "0123456789abcdef";
        chr('\\').chr('x').chr(kHex[c >> 4]).chr(kHex[c & 15]);
      } else {
        chr(static_cast<char>(c));
      }
    }
    return str(s[n] != '\0' ? "...\"" : "\"");
  }

 private:
  // Three quoted strings of kMaxStringShown characters, each escaped to 4 bytes at most,
  // plus numbers; one more byte for the newline.
  static constexpr size_t kMaxText = 12 * kMaxStringShown + 256;
  RuntimeScope scope_;
  int saved_errno_;
  size_t size_ = 0;
  char text_[kMaxText + 1];
};

void stream_result(Line& line, const void* result, int fd, int error) {
  line.str(" = ").ptr(result);
  if (result != nullptr) {
    line.str(" (fd ").i64(fd).chr(')');
  } else {
    line.str(" (errno ").i64(error).chr(')');
  }
}

void write_header(const char* what) {
  Line line;
  line.clear();  // a comment line, without the thread id
  line.str("# memtrack trace log: pid ").i64(core::sys::current_pid()).str(", ").str(what);
}

}  // namespace

void trace_alloc(const char* call, size_t size, const void* result) {
  Line line;
  line.str(call).chr('(').u64(size).str(") = ").ptr(result);
}

void trace_alloc2(const char* call, size_t a, size_t b, const void* result) {
  Line line;
  line.str(call).chr('(').u64(a).str(", ").u64(b).str(") = ").ptr(result);
}

void trace_realloc(const void* old, size_t size, const void* result) {
  Line line;
  line.str("realloc(").ptr(old).str(", ").u64(size).str(") = ").ptr(result);
}

void trace_posix_memalign(size_t alignment, size_t size, const void* result, int error) {
  Line line;
  line.str("posix_memalign(").u64(alignment).str(", ").u64(size).str(") = ").ptr(result);
  if (error != 0) line.str(" (error ").i64(error).chr(')');
}

void trace_new(const char* call, size_t size, size_t alignment, bool nothrow, const void* result) {
  Line line;
  line.str(call).chr('(').u64(size);
  if (alignment != 0) line.str(", align ").u64(alignment);
  if (nothrow) line.str(", nothrow");
  line.str(") = ").ptr(result);
}

void trace_free(const char* call, const void* ptr) {
  Line line;
  line.str(call).chr('(').ptr(ptr).chr(')');
}

void trace_fopen(const char* call, const char* path, const char* mode, const void* result, int fd,
                 int error) {
  Line line;
  line.str(call).chr('(').quoted(path).str(", ").quoted(mode).chr(')');
  stream_result(line, result, fd, error);
}

void trace_fdopen(int fd, const char* mode, const void* result, int error) {
  Line line;
  line.str("fdopen(").i64(fd).str(", ").quoted(mode).chr(')');
  stream_result(line, result, fd, error);
}

void trace_freopen(const char* path, const char* mode, const void* stream, const void* result,
                   int fd, int error) {
  Line line;
  line.str("freopen(").quoted(path).str(", ").quoted(mode).str(", ").ptr(stream).chr(')');
  stream_result(line, result, fd, error);
}

void trace_fclose(const void* stream, int fd, int result) {
  Line line;
  line.str("fclose(").ptr(stream).str(") = ").i64(result).str(" (fd ").i64(fd).chr(')');
}

void init_trace_log() {
  if (g_flags.trace_log[0] == '\0') return;
  RuntimeScope scope;
  int saved_errno = errno;
  // Relative names are taken from the directory the program started in, which it may leave.
  core::TextBuffer pattern(g_pattern, sizeof(g_pattern));
  if (g_flags.trace_log[0] != '/') {
    char cwd[kMaxPath];
    if (getcwd(cwd, sizeof(cwd)) != nullptr) pattern.str(cwd).chr('/');
  }
  pattern.str(g_flags.trace_log);
  g_trace_on.store(true, std::memory_order_relaxed);
  write_header(program_invocation_name != nullptr ? program_invocation_name : "?");
  trace_log_flush();  // creates the file now, so a bad name is reported at start-up
  errno = saved_errno;
}

void trace_log_flush() {
  if (!g_trace_on.load(std::memory_order_relaxed)) return;
  RuntimeScope scope;
  int saved_errno = errno;
  {
    core::SpinLockGuard guard(g_lock);
    flush_locked();
  }
  errno = saved_errno;
}

// Also reached from _exit in a signal handler that interrupted this thread inside the
// runtime, perhaps while it held the buffer lock: then the lines are given up rather than
// waiting for ourselves.
void trace_log_flush_final() {
  if (!g_trace_on.load(std::memory_order_relaxed)) return;
  bool interrupted_runtime = in_runtime();
  RuntimeScope scope;
  int saved_errno = errno;
  bool locked = true;
  if (interrupted_runtime) {
    locked = g_lock.try_lock();
  } else {
    g_lock.lock();
  }
  if (locked) {
    flush_locked();
    g_unbuffered = true;
    g_lock.unlock();
  }
  errno = saved_errno;
}

void trace_log_fork_prepare() {
  if (!g_trace_on.load(std::memory_order_relaxed)) return;
  RuntimeScope scope;
  int saved_errno = errno;
  g_lock.lock();  // held across fork(): the child gets a buffer nobody is writing into
  flush_locked();
  errno = saved_errno;
}

void trace_log_fork_parent() {
  if (!g_trace_on.load(std::memory_order_relaxed)) return;
  g_lock.unlock();
}

void trace_log_fork_child() {
  if (!g_trace_on.load(std::memory_order_relaxed)) return;
  g_lock.reset_after_fork();
  t_thread.tid = 0;  // this thread's id in the child is the child's pid
  core::FixedText<64> what;
  what.str("forked from pid ").i64(getppid());
  write_header(what.data());
}

}  // namespace memtrack::rt
