// Reading files below a /proc root with openat(2) relative to one directory descriptor.
#include "proc/proc_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace memtrack::top {
namespace {

ReadStatus status_of_errno(int error) {
  switch (error) {
    case ENOENT:
    case ESRCH:  // /proc/PID/... of a process that exited after we opened its directory
      return ReadStatus::kMissing;
    case EACCES:
    case EPERM:
      return ReadStatus::kDenied;
    default:
      return ReadStatus::kError;
  }
}

}  // namespace

ProcFiles::ProcFiles(const std::string& root) : root_(root) {
  root_fd_ = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd_ < 0) {
    throw Error("cannot open the proc directory " + root + ": " + std::strerror(errno));
  }
}

ProcFiles::~ProcFiles() {
  close(root_fd_);
}

ReadStatus ProcFiles::read(const std::string& relative, std::string* out) {
  out->clear();
  int fd = openat(root_fd_, relative.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return status_of_errno(errno);
  // /proc files report size 0, so read until EOF; most fit the first 4 KiB.
  size_t used = 0;
  out->resize(4096);
  ReadStatus status = ReadStatus::kOk;
  for (;;) {
    if (used == out->size()) out->resize(out->size() * 2);
    ssize_t n = ::read(fd, out->data() + used, out->size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      status = status_of_errno(errno);
      used = 0;
      break;
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  close(fd);
  out->resize(used);
  return status;
}

ReadStatus ProcFiles::list_numeric(const std::string& relative, std::vector<uint32_t>* entries) {
  entries->clear();
  int fd = openat(root_fd_, relative.empty() ? "." : relative.c_str(),
                  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return status_of_errno(errno);
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    int error = errno;
    close(fd);
    return status_of_errno(error);
  }
  errno = 0;
  while (dirent* entry = readdir(dir)) {
    uint32_t number = 0;
    if (try_parse_u32(entry->d_name, &number)) entries->push_back(number);
  }
  ReadStatus status = errno == 0 ? ReadStatus::kOk : status_of_errno(errno);
  closedir(dir);
  return status;
}

bool try_parse_u32(std::string_view text, uint32_t* value) {
  if (text.empty() || text.size() > 10) return false;
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n > UINT32_MAX) return false;
  *value = static_cast<uint32_t>(n);
  return true;
}

}  // namespace memtrack::top
