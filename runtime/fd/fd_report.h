// The descriptors still open at exit, as the reports show them: each tracked fd that is
// still open, what it refers to (from /proc/self/fd, and for sockets their addresses) and
// where it was opened. Feeds the result file's resources section and the runtime's own text
// report. Runtime-safe: mmap-backed arrays, libc calls that do not allocate.
#pragma once

#include <cstdint>

#include "core/mmap_array.h"
#include "core/result_format.h"
#include "core/text_buffer.h"
#include "runtime/fd/fd_table.h"

namespace memtrack::rt {

struct OpenFd {
  int fd = 0;
  core::result::ResourceKind kind = core::result::ResourceKind::kOther;
  FdInfo info;               // as recorded when it was opened
  uint32_t text_offset = 0;  // its description in OpenFdReport's text, NUL-terminated
  uint32_t text_size = 0;    // without the NUL
};

// Not thread safe; one per report.
class OpenFdReport {
 public:
  // Takes every descriptor of `table` that is still open (an fd closed behind the hooks'
  // back is left out) and describes it, sorted by stack id, then fd: the descriptors of one
  // site are adjacent, sites in the order they were first seen. Returns false if memory for
  // the list cannot be mapped. Call it before the report opens files of its own.
  [[nodiscard]] bool try_collect(FdTable& table);

  const core::MmapArray<OpenFd>& fds() const { return fds_; }
  const char* description(const OpenFd& fd) const { return text_.data() + fd.text_offset; }
  // Descriptors opened through the hooks that the table could not hold.
  uint64_t untracked() const { return untracked_; }
  // Number of distinct stack ids among fds().
  size_t site_count() const;

 private:
  core::MmapArray<OpenFd> fds_;
  core::MmapArray<char> text_;
  uint64_t untracked_ = 0;
};

// What `fd` refers to and a description of it for the reports: the /proc/self/fd link
// ("/tmp/x", "pipe:[1234]", "anon_inode:[eventfd]", "/memfd:cache (deleted)") or a socket's
// protocol and addresses ("TCP 127.0.0.1:40000 -> 127.0.0.1:8080", "unix stream
// /tmp/x.sock (listening)", "UDP 0.0.0.0:5353"). Returns false if fd is not open.
bool describe_fd(int fd, core::result::ResourceKind* /*out*/ kind, core::TextBuffer& text);

// Appends a socket's description (see describe_fd); false if fd is not a socket.
bool describe_socket(int fd, core::TextBuffer& text);

}  // namespace memtrack::rt
