// Descriptors open at exit and their descriptions (see fd_report.h). Calls libc (readlink,
// fstat, fcntl, getsockopt, getsockname, getpeername, inet_ntop), none of which allocates.
#include "runtime/fd/fd_report.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>

#include "runtime/fd/fd_paths.h"

namespace memtrack::rt {
namespace {

using Kind = core::result::ResourceKind;

bool starts_with(const char* s, const char* prefix) {
  while (*prefix != '\0') {
    if (*s++ != *prefix++) return false;
  }
  return true;
}

// "TCP", "UDP", ... for an IPv4 or IPv6 socket.
const char* inet_protocol(int type, int protocol) {
  if (protocol == IPPROTO_SCTP) return "SCTP";
  if (protocol == IPPROTO_UDPLITE) return "UDP-Lite";
  switch (type) {
    case SOCK_STREAM:
      return "TCP";
    case SOCK_DGRAM:
      return protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6 ? "ICMP" : "UDP";
    case SOCK_RAW:
      return "raw IP";
    default:
      return "IP";
  }
}

const char* unix_type(int type) {
  switch (type) {
    case SOCK_STREAM:
      return "stream";
    case SOCK_DGRAM:
      return "dgram";
    case SOCK_SEQPACKET:
      return "seqpacket";
    default:
      return "socket";
  }
}

// "127.0.0.1:8080" or "[::1]:8080".
void inet_address(const sockaddr_storage& address, core::TextBuffer& text) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(address);
    inet_ntop(AF_INET, &in.sin_addr, host, sizeof(host));
    text.str(host).chr(':').u64(ntohs(in.sin_port));
  } else {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof(host));
    text.chr('[').str(host).str("]:").u64(ntohs(in6.sin6_port));
  }
}

// The path of a bound unix socket, "@name" for an abstract one; false if it is unnamed.
bool unix_path(const sockaddr_storage& address, socklen_t length, core::TextBuffer& text) {
  const auto& un = reinterpret_cast<const sockaddr_un&>(address);
  size_t offset = offsetof(sockaddr_un, sun_path);
  if (length <= offset) return false;
  size_t n = length - offset;
  if (n > sizeof(un.sun_path)) n = sizeof(un.sun_path);
  const char* path = un.sun_path;
  if (path[0] == '\0') {
    if (n == 1) return false;
    text.chr('@');
    ++path;
    --n;
  }
  for (size_t i = 0; i < n && path[i] != '\0'; ++i) {
    char c = path[i];
    text.chr(c < 0x20 || c == 0x7f ? '?' : c);
  }
  return true;
}

int socket_option(int fd, int option) {
  int value = -1;
  socklen_t length = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, option, &value, &length) != 0) return -1;
  return value;
}

// The kind and description of a descriptor whose /proc link is not a socket.
Kind describe_link(int fd, const char* link, core::TextBuffer& text) {
  text.str(link);
  if (starts_with(link, "pipe:[")) return Kind::kPipe;  // its flags say which end
  if (starts_with(link, "anon_inode:")) {
    const char* what = link + 11;
    if (starts_with(what, "[eventfd]")) return Kind::kEventfd;
    if (starts_with(what, "[timerfd]")) return Kind::kTimerfd;
    if (starts_with(what, "[signalfd]")) return Kind::kSignalfd;
    if (starts_with(what, "[eventpoll]")) return Kind::kEpoll;
    if (starts_with(what, "inotify")) return Kind::kInotify;
    return Kind::kOther;
  }
  if (starts_with(link, "/memfd:")) return Kind::kMemfd;
  if (link[0] != '/') return Kind::kOther;  // "net:[...]" and other namespace or kernel objects
  struct stat st {};
  if (fstat(fd, &st) != 0) return Kind::kFile;
  if (S_ISDIR(st.st_mode)) return Kind::kDirectory;
  if (S_ISFIFO(st.st_mode)) return Kind::kPipe;
  if (S_ISSOCK(st.st_mode)) return Kind::kSocket;
  return Kind::kFile;
}

bool ends_with(const core::TextBuffer& text, const char* suffix) {
  size_t n = 0;
  while (suffix[n] != '\0') ++n;
  if (text.size() < n) return false;
  const char* tail = text.data() + text.size() - n;
  for (size_t i = 0; i < n; ++i) {
    if (tail[i] != suffix[i]) return false;
  }
  return true;
}

// A file or directory opened by a call that names it: the report shows the path as the
// program passed it (fd_paths.h) rather than the /proc link, which resolves symlinks.
bool named_by_program(const FdInfo& info, Kind kind) {
  using Call = core::result::ResourceCall;
  bool by_name = info.call == Call::kOpen || info.call == Call::kOpenat ||
                 info.call == Call::kCreat || info.call == Call::kFopen ||
                 info.call == Call::kFreopen;
  return by_name && (kind == Kind::kFile || kind == Kind::kDirectory);
}

}  // namespace

bool describe_socket(int fd, core::TextBuffer& text) {
  int domain = socket_option(fd, SO_DOMAIN);
  int type = socket_option(fd, SO_TYPE);
  int protocol = socket_option(fd, SO_PROTOCOL);
  if (domain < 0 || type < 0) return false;
  bool listening = socket_option(fd, SO_ACCEPTCONN) == 1;
  sockaddr_storage local{};
  sockaddr_storage peer{};
  socklen_t local_length = sizeof(local);
  socklen_t peer_length = sizeof(peer);
  bool has_local = getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) == 0;
  bool has_peer = getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) == 0;
  if (domain == AF_INET || domain == AF_INET6) {
    text.str(inet_protocol(type, protocol));
    if (has_local && local.ss_family == domain) {
      text.chr(' ');
      inet_address(local, text);
    }
    if (has_peer && peer.ss_family == domain) {
      text.str(" -> ");
      inet_address(peer, text);
    }
  } else if (domain == AF_UNIX) {
    text.str("unix ").str(unix_type(type));
    core::FixedText<sizeof(sockaddr_un{}.sun_path) + 8> local_path;
    core::FixedText<sizeof(sockaddr_un{}.sun_path) + 8> peer_path;
    bool local_named = has_local && unix_path(local, local_length, local_path);
    bool peer_named = has_peer && unix_path(peer, peer_length, peer_path);
    if (local_named) text.chr(' ').str(local_path.data());
    if (peer_named) text.str(" -> ").str(peer_path.data());
    if (!local_named && !peer_named) text.str(" (unnamed)");
  } else if (domain == AF_NETLINK) {
    text.str("netlink (protocol ").i64(protocol).chr(')');
  } else if (domain == AF_PACKET) {
    text.str("packet");
  } else {
    text.str("socket (address family ").i64(domain).chr(')');
  }
  if (listening) text.str(" (listening)");
  return true;
}

bool describe_fd(int fd, Kind* kind, core::TextBuffer& text) {
  core::FixedText<40> proc;
  proc.str("/proc/self/fd/").i64(fd);
  char link[4096];
  ssize_t n = readlink(proc.data(), link, sizeof(link) - 1);
  if (n < 0) return false;  // closed (by a path the hooks did not see)
  link[n] = '\0';
  if (starts_with(link, "socket:[")) {
    *kind = Kind::kSocket;
    if (!describe_socket(fd, text)) text.str(link);
    return true;
  }
  *kind = describe_link(fd, link, text);
  return true;
}

bool OpenFdReport::try_collect(FdTable& table) {
  untracked_ = table.untracked();
  bool ok = true;
  table.for_each([&](int fd, const FdInfo& info) {
    if (!ok || fd < 3) return;  // fds 0-2 have entries only as roots of the leak scan
    OpenFd item;
    item.fd = fd;
    item.info = info;
    core::FixedText<4200> link;
    if (!describe_fd(fd, &item.kind, link)) return;
    core::FixedText<kMaxRememberedPath + 16> opened;
    bool as_opened = named_by_program(info, item.kind) && try_append_fd_path(fd, opened);
    if (as_opened && ends_with(link, " (deleted)")) opened.str(" (deleted)");
    const core::TextBuffer& text = as_opened ? static_cast<const core::TextBuffer&>(opened) : link;
    item.text_offset = static_cast<uint32_t>(text_.size());
    item.text_size = static_cast<uint32_t>(text.size());
    for (size_t i = 0; i <= text.size() && ok; ++i) ok = text_.try_push_back(text.data()[i]);
    ok = ok && fds_.try_push_back(item);
  });
  core::heap_sort(fds_.data(), fds_.size(), [](const OpenFd& a, const OpenFd& b) {
    if (a.info.stack_id != b.info.stack_id) return a.info.stack_id < b.info.stack_id;
    return a.fd < b.fd;
  });
  return ok;
}

size_t OpenFdReport::site_count() const {
  size_t sites = 0;
  for (size_t i = 0; i < fds_.size(); ++i) {
    if (i == 0 || fds_[i].info.stack_id != fds_[i - 1].info.stack_id) ++sites;
  }
  return sites;
}

}  // namespace memtrack::rt
