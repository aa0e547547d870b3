// Unit tests of how open descriptors are described at exit: files, directories, pipes,
// sockets of every family the report names, anonymous inodes, and the collected list.
// Test-only code: opens real descriptors.
#include "runtime/fd/fd_report.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

namespace memtrack::rt {
namespace {

using Kind = core::result::ResourceKind;

struct Described {
  bool open = false;
  Kind kind = Kind::kOther;
  std::string text;
};

Described describe(int fd) {
  Described d;
  core::FixedText<4200> text;
  d.open = describe_fd(fd, &d.kind, text);
  d.text = text.data();
  return d;
}

// A TCP or UDP socket bound to 127.0.0.1 on a free port; returns the port.
int bind_loopback(int fd) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  return ntohs(address.sin_port);
}

TEST(DescribeFd, FilesAndDirectories) {
  char path[] = "/tmp/memtrack-fd-report-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  Described file = describe(fd);
  EXPECT_TRUE(file.open);
  EXPECT_EQ(file.kind, Kind::kFile);
  EXPECT_EQ(file.text, path);
  unlink(path);
  EXPECT_EQ(describe(fd).text, std::string(path) + " (deleted)");
  close(fd);
  EXPECT_FALSE(describe(fd).open);

  int dir = open("/tmp", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  Described d = describe(dir);
  EXPECT_EQ(d.kind, Kind::kDirectory);
  EXPECT_EQ(d.text, "/tmp");
  close(dir);
  int null = open("/dev/null", O_WRONLY);
  EXPECT_EQ(describe(null).kind, Kind::kFile);  // devices are files too
  close(null);
}

TEST(DescribeFd, PipesAndAnonymousInodes) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  Described read_end = describe(fds[0]);
  EXPECT_EQ(read_end.kind, Kind::kPipe);
  EXPECT_EQ(read_end.text.rfind("pipe:[", 0), 0u) << read_end.text;
  EXPECT_EQ(describe(fds[1]).text, read_end.text);  // one pipe, two ends
  close(fds[0]);
  close(fds[1]);
  int event = eventfd(0, 0);
  ASSERT_GE(event, 0);
  Described e = describe(event);
  EXPECT_EQ(e.kind, Kind::kEventfd);
  EXPECT_EQ(e.text, "anon_inode:[eventfd]");
  close(event);
}

TEST(DescribeFd, TcpListenerConnectionAndAccepted) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  int port = bind_loopback(listener);
  ASSERT_EQ(listen(listener, 1), 0);
  std::string server = "127.0.0.1:" + std::to_string(port);
  Described l = describe(listener);
  EXPECT_EQ(l.kind, Kind::kSocket);
  EXPECT_EQ(l.text, "TCP " + server + " (listening)");

  int client = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(static_cast<uint16_t>(port));
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
  int accepted = accept(listener, nullptr, nullptr);
  ASSERT_GE(accepted, 0);
  sockaddr_in from{};
  socklen_t length = sizeof(from);
  ASSERT_EQ(getsockname(client, reinterpret_cast<sockaddr*>(&from), &length), 0);
  std::string peer = "127.0.0.1:" + std::to_string(ntohs(from.sin_port));
  EXPECT_EQ(describe(client).text, "TCP " + peer + " -> " + server);
  EXPECT_EQ(describe(accepted).text, "TCP " + server + " -> " + peer);
  close(accepted);
  close(client);
  close(listener);
}

TEST(DescribeFd, UdpAndIpv6) {
  int udp = socket(AF_INET, SOCK_DGRAM, 0);
  int port = bind_loopback(udp);
  EXPECT_EQ(describe(udp).text, "UDP 127.0.0.1:" + std::to_string(port));
  close(udp);
  int unbound = socket(AF_INET, SOCK_DGRAM, 0);
  EXPECT_EQ(describe(unbound).text, "UDP 0.0.0.0:0");
  close(unbound);
  int v6 = socket(AF_INET6, SOCK_STREAM, 0);
  if (v6 >= 0) {  // no IPv6 in some containers
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_addr = in6addr_loopback;
    if (bind(v6, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
      socklen_t length = sizeof(address);
      getsockname(v6, reinterpret_cast<sockaddr*>(&address), &length);
      EXPECT_EQ(describe(v6).text, "TCP [::1]:" + std::to_string(ntohs(address.sin6_port)));
    }
    close(v6);
  }
}

TEST(DescribeFd, UnixSockets) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  EXPECT_EQ(describe(pair[0]).text, "unix stream (unnamed)");
  close(pair[0]);
  close(pair[1]);

  std::string path = "/tmp/memtrack-fd-report-" + std::to_string(getpid()) + ".sock";
  unlink(path.c_str());
  int server = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(bind(server, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(server, 1), 0);
  EXPECT_EQ(describe(server).text, "unix stream " + path + " (listening)");
  int client = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  EXPECT_EQ(describe(client).text, "unix stream -> " + path);
  close(client);
  close(server);
  unlink(path.c_str());

  int abstract = socket(AF_UNIX, SOCK_DGRAM, 0);
  sockaddr_un name{};
  name.sun_family = AF_UNIX;
  const char kName[] = "memtrack-test";
  std::memcpy(name.sun_path + 1, kName, sizeof(kName) - 1);
  socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + sizeof(kName));
  ASSERT_EQ(bind(abstract, reinterpret_cast<sockaddr*>(&name), length), 0);
  EXPECT_EQ(describe(abstract).text, "unix dgram @memtrack-test");
  close(abstract);
}

TEST(OpenFdReport, CollectsOpenOnesBySite) {
  FdTable table;
  int a = open("/dev/null", O_RDONLY);
  int b = open("/dev/null", O_WRONLY);
  int c = dup(a);
  int gone = dup(a);
  ASSERT_GE(gone, 0);
  close(gone);  // closed behind the table's back
  FdInfo site1;
  site1.stack_id = 1;
  FdInfo site2;
  site2.stack_id = 2;
  site2.flags = 1;
  table.record(c, site2);
  table.record(b, site1);
  table.record(a, site2);
  table.record(gone, site1);
  table.record(FdTable::kCapacity, site1);  // untracked
  table.record(2, site1);                   // stderr: an entry for the leak scan only
  OpenFdReport report;
  ASSERT_TRUE(report.try_collect(table));
  ASSERT_EQ(report.fds().size(), 3u);
  EXPECT_EQ(report.fds()[0].fd, b);
  EXPECT_EQ(report.fds()[1].fd, a);
  EXPECT_EQ(report.fds()[2].fd, c);
  EXPECT_EQ(report.fds()[1].info.flags, 1u);
  EXPECT_EQ(report.site_count(), 2u);
  EXPECT_EQ(report.untracked(), 1u);
  for (const OpenFd& fd : report.fds()) {
    EXPECT_STREQ(report.description(fd), "/dev/null");
    EXPECT_EQ(fd.text_size, 9u);
    EXPECT_EQ(fd.kind, Kind::kFile);
  }
  close(a);
  close(b);
  close(c);
  table.test_only_reset();
}

}  // namespace
}  // namespace memtrack::rt
