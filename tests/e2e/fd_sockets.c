// Pipes and sockets left open, each with a description from the kernel: the ends of pipe and
// pipe2, a TCP listener on 127.0.0.1, the connection it accepted (accept) and the client of
// a second one (whose accept4 end is closed), one end of a socketpair, a UDP socket and a
// listening unix socket. What is closed is not reported.
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-RESOURCE: pipe pipe:*, pipe(O_WRONLY) | make_pipes@pipe main
// EXPECT-RESOURCE: pipe pipe:*, pipe2(O_RDONLY|O_NONBLOCK|O_CLOEXEC) | make_pipes@pipe2 main
// EXPECT-RESOURCE: pipe pipe:*, pipe2(O_WRONLY|O_NONBLOCK|O_CLOEXEC) | make_pipes@pipe2 main
// EXPECT-RESOURCE: socket TCP 127.0.0.1:* (listening), socket(O_RDWR|O_CLOEXEC) | listen_tcp@listener main
// EXPECT-RESOURCE: socket TCP 127.0.0.1:* -> 127.0.0.1:*, accept(O_RDWR) | serve@accept main
// EXPECT-RESOURCE: socket TCP 127.0.0.1:* -> 127.0.0.1:*, socket(O_RDWR) | connect_tcp@client main
// EXPECT-RESOURCE: socket unix stream (unnamed), socketpair(O_RDWR) | main@pair
// EXPECT-RESOURCE: socket UDP 127.0.0.1:*, socket(O_RDWR|O_NONBLOCK) | main@udp
// EXPECT-RESOURCE: socket unix stream %t/server.sock (listening), socket(O_RDWR) | main@unix
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "e2e_util.h"

__attribute__((noinline)) void make_pipes(void) {
  int p[2];
  CHECK(pipe(p) == 0);  // @pipe
  CHECK(close(p[0]) == 0);
  int q[2];
  CHECK(pipe2(q, O_NONBLOCK | O_CLOEXEC) == 0);  // @pipe2
}

static struct sockaddr_in loopback(int port) {
  struct sockaddr_in address;
  memset(&address, 0, sizeof(address));
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons((unsigned short)port);
  return address;
}

// A listener on 127.0.0.1 and a free port; *port receives it.
__attribute__((noinline)) int listen_tcp(int* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);  // @listener
  CHECK(fd >= 0);
  struct sockaddr_in address = loopback(0);
  CHECK(bind(fd, (struct sockaddr*)&address, sizeof(address)) == 0);
  CHECK(listen(fd, 4) == 0);
  socklen_t length = sizeof(address);
  CHECK(getsockname(fd, (struct sockaddr*)&address, &length) == 0);
  *port = ntohs(address.sin_port);
  return fd;
}

__attribute__((noinline)) int connect_tcp(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);  // @client
  CHECK(fd >= 0);
  struct sockaddr_in address = loopback(port);
  CHECK(connect(fd, (struct sockaddr*)&address, sizeof(address)) == 0);
  return fd;
}

__attribute__((noinline)) int serve(int listener) {
  int fd = accept(listener, NULL, NULL);  // @accept
  CHECK(fd >= 0);
  return fd;
}

int main(void) {
  make_pipes();

  int port = 0;
  int listener = listen_tcp(&port);
  int first = connect_tcp(port);
  ESCAPE(serve(listener));
  CHECK(close(first) == 0);
  ESCAPE(connect_tcp(port));
  int second = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
  CHECK(second >= 0 && close(second) == 0);

  int pair[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);  // @pair
  CHECK(close(pair[1]) == 0);

  int udp = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);  // @udp
  CHECK(udp >= 0);
  struct sockaddr_in any_port = loopback(0);
  CHECK(bind(udp, (struct sockaddr*)&any_port, sizeof(any_port)) == 0);

  int server = socket(AF_UNIX, SOCK_STREAM, 0);  // @unix
  CHECK(server >= 0);
  struct sockaddr_un name;
  memset(&name, 0, sizeof(name));
  name.sun_family = AF_UNIX;
  unlink("server.sock");  // left by the plain run
  CHECK(getcwd(name.sun_path, sizeof(name.sun_path) - 12) != NULL);
  strcat(name.sun_path, "/server.sock");
  CHECK(bind(server, (struct sockaddr*)&name, sizeof(name)) == 0);
  CHECK(listen(server, 1) == 0);
  return 0;
}
