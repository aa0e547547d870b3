// uid -> user name for the USER column, cached: getpwuid_r may read /etc/passwd or ask NSS
// (LDAP, sssd) on every call, far too slow for thousands of processes a second. Not thread
// safe (one per sampler).
#pragma once

#include <sys/types.h>

#include <string>
#include <unordered_map>

namespace memtrack::top {

class UserNames {
 public:
  virtual ~UserNames() = default;

  // The name of `uid`, or the number as text when it has none. Looked up once per uid.
  const std::string& name(uid_t uid);

 protected:
  // One getpwuid_r lookup; "" when the uid has no name. Virtual for tests.
  virtual std::string look_up(uid_t uid);

 private:
  std::unordered_map<uid_t, std::string> cache_;
};

}  // namespace memtrack::top
