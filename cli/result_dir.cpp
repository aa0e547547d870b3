// Private result directories.
#include "cli/result_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "report/model.h"

namespace memtrack::cli {

ResultDir::ResultDir(const std::string& keep) {
  if (keep.empty()) {
    const char* tmp = getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/memtrack.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {  // mkdtemp creates it with mode 0700
      throw Error("cannot create a temporary directory " + pattern + ": " + strerror(errno));
    }
    path_ = pattern;
    temporary_ = true;
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(keep, ec);
  if (ec || !std::filesystem::is_directory(keep)) {
    throw Error("cannot create the --keep-results directory " + keep + ": " +
                (ec ? ec.message() : "not a directory"));
  }
  chmod(keep.c_str(), 0700);
  path_ = std::filesystem::absolute(keep).lexically_normal().string();
  for (const std::string& f : list()) existing_.insert(f);
}

ResultDir::~ResultDir() {
  if (!temporary_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> ResultDir::list() const {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("memtrack.", 0) == 0 && entry.path().extension() == ".mtr") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> ResultDir::new_result_files() const {
  std::vector<std::string> files;
  for (const std::string& f : list()) {
    if (!existing_.contains(f)) files.push_back(f);
  }
  return files;
}

}  // namespace memtrack::cli
