// Descriptors of the kernel's special files left open: eventfd, timerfd, signalfd, epoll,
// inotify and memfd, each with its creation flags. close_range closes a range (nothing of it
// is reported) unless it only marks it close-on-exec; closefrom closes the rest.
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-RESOURCE: eventfd anon_inode:?eventfd?, eventfd(O_RDWR|O_NONBLOCK) | main@eventfd
// EXPECT-RESOURCE: timerfd anon_inode:?timerfd?, timerfd_create(O_RDWR|O_CLOEXEC) | main@timerfd
// EXPECT-RESOURCE: signalfd anon_inode:?signalfd?, signalfd(O_RDWR) | main@signalfd
// EXPECT-RESOURCE: epoll anon_inode:?eventpoll?, epoll_create1(O_RDWR|O_CLOEXEC) | main@epoll
// EXPECT-RESOURCE: inotify anon_inode:inotify, inotify_init1(O_RDONLY|O_NONBLOCK) | main@inotify
// EXPECT-RESOURCE: memfd /memfd:cache (deleted), memfd_create(O_RDWR|O_CLOEXEC) | main@memfd
// EXPECT-RESOURCE: file kept.txt, open(O_RDONLY|O_CREAT) | open_file main@kept
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "e2e_util.h"

__attribute__((noinline)) int open_file(const char* name) {
  int fd = open(name, O_RDONLY | O_CREAT, 0644);
  CHECK(fd >= 0);
  return fd;
}

int main(void) {
  CHECK(eventfd(0, EFD_NONBLOCK) >= 0);                      // @eventfd
  CHECK(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC) >= 0);  // @timerfd
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGUSR1);
  int sfd = signalfd(-1, &mask, 0);  // @signalfd
  CHECK(sfd >= 0);
  sigaddset(&mask, SIGUSR2);
  CHECK(signalfd(sfd, &mask, 0) == sfd);           // changes the mask: no new descriptor
  CHECK(epoll_create1(EPOLL_CLOEXEC) >= 0);        // @epoll
  CHECK(inotify_init1(IN_NONBLOCK) >= 0);          // @inotify
  CHECK(memfd_create("cache", MFD_CLOEXEC) >= 0);  // @memfd

  // Three in a row, closed by one close_range.
  int first = open_file("one.txt");
  CHECK(open_file("two.txt") == first + 1);
  CHECK(open_file("three.txt") == first + 2);
  CHECK(close_range((unsigned)first, (unsigned)first + 2, 0) == 0);
  // Only marked close-on-exec: still open.
  int kept = open_file("kept.txt");  // @kept
  CHECK(close_range((unsigned)kept, (unsigned)kept, CLOSE_RANGE_CLOEXEC) == 0);
  // Everything above the highest so far.
  int last = open_file("last.txt");
  CHECK(open_file("after.txt") == last + 1);
  closefrom(last);
  return 0;
}
