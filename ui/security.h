// The checks memtrack ui makes on every HTTP request before any handler runs: the access
// token (a CSPRNG secret in the URL, then a cookie), the Host header (against DNS
// rebinding) and the Origin header (against cross-site requests). Pure functions; thread safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memtrack::ui {

// 32 bytes from getrandom(2), as 64 hex digits. Throws memtrack::Error when the kernel's
// random source fails.
std::string new_token();

// a == b in time that depends on the lengths only, not on where they differ.
bool equal_in_constant_time(std::string_view a, std::string_view b);

// The value of cookie `name` in a Cookie header ("a=1; b=2"), if present.
std::optional<std::string> cookie_value(std::string_view header, std::string_view name);

// The hosts the server answers to: the loopback names, and the --listen address when it
// is a specific one (not a wildcard).
struct Allowed {
  uint16_t port = 0;
  std::string listen;  // the --listen address; "" for the loopback default
};

// True when `host` (the Host header) is localhost, 127.0.0.1, [::1] or the --listen address,
// each followed by ":port".
bool host_allowed(std::string_view host, const Allowed& allowed);

// True when `origin` (the Origin header) is "http://" followed by an allowed host.
bool origin_allowed(std::string_view origin, const Allowed& allowed);

}  // namespace memtrack::ui
