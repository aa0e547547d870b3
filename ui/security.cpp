// The request checks of memtrack ui (security.h).
#include "ui/security.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace memtrack::ui {

std::string new_token() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(std::string("cannot read random bytes: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

bool equal_in_constant_time(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  // volatile: the compiler may not stop at the first difference.
  volatile unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = static_cast<unsigned char>(
        diff | (static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i])));
  }
  return diff == 0;
}

std::optional<std::string> cookie_value(std::string_view header, std::string_view name) {
  size_t at = 0;
  while (at < header.size()) {
    size_t end = header.find(';', at);
    if (end == std::string_view::npos) end = header.size();
    std::string_view pair = header.substr(at, end - at);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
      return std::string(pair.substr(eq + 1));
    }
    at = end + 1;
  }
  return std::nullopt;
}

bool host_allowed(std::string_view host, const Allowed& allowed) {
  std::string port = ":" + std::to_string(allowed.port);
  if (host.size() <= port.size() || host.substr(host.size() - port.size()) != port) return false;
  std::string_view name = host.substr(0, host.size() - port.size());
  if (name == "localhost" || name == "127.0.0.1" || name == "[::1]") return true;
  if (allowed.listen.empty() || allowed.listen == "0.0.0.0" || allowed.listen == "::") {
    return false;
  }
  // An IPv6 address appears in brackets in a Host header.
  bool v6 = allowed.listen.find(':') != std::string::npos;
  return name == (v6 ? "[" + allowed.listen + "]" : allowed.listen);
}

bool origin_allowed(std::string_view origin, const Allowed& allowed) {
  constexpr std::string_view kScheme = "http://";
  if (origin.substr(0, kScheme.size()) != kScheme) return false;
  return host_allowed(origin.substr(kScheme.size()), allowed);
}

}  // namespace memtrack::ui
