// Access to the files of a /proc tree (the real one, or a fixture tree in tests). Every
// read reports why it failed, because a vanished process, a permission denied and a broken
// file are handled differently. Ordinary C++; not thread safe (one per sampler).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memtrack::top {

enum class ReadStatus {
  kOk,
  kMissing,  // ENOENT, ESRCH: the process or thread is gone (normal under churn)
  kDenied,   // EACCES, EPERM
  kError,    // anything else (EIO, ...)
};

class ProcFiles {
 public:
  // Opens `root` (normally "/proc"). Throws memtrack::Error naming it when it is not a
  // readable directory.
  explicit ProcFiles(const std::string& root);
  virtual ~ProcFiles();
  ProcFiles(const ProcFiles&) = delete;
  ProcFiles& operator=(const ProcFiles&) = delete;

  const std::string& root() const { return root_; }

  // Reads the whole file root/relative ("1234/stat") into *out, replacing its contents.
  // On failure *out is empty. Virtual so tests can inject errors (EACCES as root).
  virtual ReadStatus read(const std::string& relative, std::string* /*out*/ out);

  // The numeric entries of the directory root/relative ("" for root itself, "1234/task"),
  // in the order the directory lists them. kMissing when the directory is gone.
  virtual ReadStatus list_numeric(const std::string& relative,
                                  std::vector<uint32_t>* /*out*/ entries);

 private:
  std::string root_;
  int root_fd_ = -1;
};

// "12", "4294967295" -> the number; anything else (empty, signs, letters, overflow) -> false.
bool try_parse_u32(std::string_view text, uint32_t* /*out*/ value);

}  // namespace memtrack::top
