// The heap profiles of running programs, for memtrack ui (see running_profiles.h).
#include "cli/running_profiles.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cli/commands.h"
#include "cli/profile_command.h"
#include "common/error.h"
#include "profile/analysis.h"
#include "profile/packer.h"

namespace memtrack::cli {
namespace {

// A file without a name in TMPDIR (else /tmp), so that nothing is left behind however the ui
// ends (Ctrl-C); the packer and the reader reach it as /proc/self/fd/N.
int anonymous_file() {
  const char* env = std::getenv("TMPDIR");
  std::string dir = env != nullptr && *env != '\0' ? env : "/tmp";
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string name = dir + "/memtrack-ui-profile-XXXXXX";  // a file system without O_TMPFILE
  fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    throw Error("cannot create a temporary file in " + dir + " (" + std::strerror(errno) +
                "); set TMPDIR to a writable directory");
  }
  unlink(name.c_str());
  return fd;
}

}  // namespace

struct RunningProfiles::Followed {
  Followed(uint32_t pid_, const std::string& raw)
      : pid(pid_),
        fd(anonymous_file()),
        path("/proc/self/fd/" + std::to_string(fd)),
        packer(std::make_unique<profile::ProfilePacker>(raw, path)),
        analysis(running_profile_options()) {}
  ~Followed() {
    packer.reset();
    close(fd);
  }
  Followed(const Followed&) = delete;
  Followed& operator=(const Followed&) = delete;

  uint32_t pid;
  int fd;
  std::string path;
  std::unique_ptr<profile::ProfilePacker> packer;
  profile::GrowingProfileAnalysis analysis;  // of `path`, read up to the last checkpoint
};

RunningProfiles::RunningProfiles(const Config& config) : config_(config) {}

RunningProfiles::~RunningProfiles() = default;

void RunningProfiles::forget_ended() {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (lock.owns_lock()) forget_ended_locked(0, "");
}

// Forgets the files of processes that ended, and `pid`'s images before `raw` (it exec'd).
void RunningProfiles::forget_ended_locked(uint32_t pid, const std::string& raw) {
  for (auto it = followed_.begin(); it != followed_.end();) {
    bool ended = it->second->pid == pid ? it->first != raw : !process_exists(it->second->pid);
    it = ended ? followed_.erase(it) : std::next(it);
  }
}

nlohmann::ordered_json RunningProfiles::model(uint32_t pid, std::optional<uint64_t> from_us,
                                              std::optional<uint64_t> to_us) {
  std::string raw = memtrack_raw_profile(pid);
  std::lock_guard lock(mutex_);
  forget_ended_locked(pid, raw);
  std::unique_ptr<Followed>& followed = followed_[raw];
  try {
    if (!followed) followed = std::make_unique<Followed>(pid, raw);
    followed->packer->checkpoint();
    return running_profile_page_model(followed->path, followed->analysis, config_, from_us, to_us);
  } catch (const Error&) {
    followed_.erase(raw);  // a corrupt file: the next request starts afresh
    throw;
  }
}

}  // namespace memtrack::cli
