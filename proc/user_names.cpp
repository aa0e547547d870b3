// getpwuid_r(3) with a cache.
#include "proc/user_names.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace memtrack::top {

const std::string& UserNames::name(uid_t uid) {
  auto it = cache_.find(uid);
  if (it != cache_.end()) return it->second;
  std::string found = look_up(uid);
  if (found.empty()) found = std::to_string(uid);
  return cache_.emplace(uid, std::move(found)).first->second;
}

std::string UserNames::look_up(uid_t uid) {
  long suggested = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(suggested > 0 ? static_cast<size_t>(suggested) : 1024);
  passwd entry{};
  passwd* result = nullptr;
  for (;;) {
    int error = getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &result);
    if (error == ERANGE && buffer.size() < (1u << 20)) {
      buffer.resize(buffer.size() * 2);
      continue;
    }
    if (error != 0 || result == nullptr || result->pw_name == nullptr) return {};
    return result->pw_name;
  }
}

}  // namespace memtrack::top
