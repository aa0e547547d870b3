// Mappings that change or cannot be read while the exit leak scan runs. A thread that
// blocks every signal (so the scan cannot stop it) maps, protects and unmaps pages in a
// loop until the process ends; a shared file mapping is truncated, so its pages raise
// SIGBUS when read; guard pages alternate with pages that hold pointers. The report must still
// come: 512 bytes from leak_site() definitely lost, 64 bytes still reachable (`kept`), and
// 32 blocks of 24 bytes reachable only from the pages between the guard pages.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli_util.h"

static void* kept;

static void* churn(void* arg) {
  (void)arg;
  for (;;) {
    char* page = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) continue;
    page[0] = 1;
    mprotect(page, 1 << 15, PROT_NONE);
    munmap(page, 1 << 16);
  }
  return NULL;
}

__attribute__((noinline)) static void* leak_site(void) {
  void* p = malloc(512);
  ESCAPE(p);
  return p;
}

static void truncated_file_mapping(void) {
  char name[] = "/tmp/mapping_race.XXXXXX";
  int fd = mkstemp(name);
  if (fd < 0 || ftruncate(fd, 1 << 16) != 0) exit(3);
  char* map = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) exit(3);
  map[0] = 1;
  if (ftruncate(fd, 0) != 0) exit(3);  // reading `map` now raises SIGBUS
  unlink(name);
  close(fd);
}

// 32 readable pages, each followed by a PROT_NONE guard page, each holding the only pointer
// to a 24-byte block: all 32 blocks stay reachable.
static void guard_pages(void) {
  long page = sysconf(_SC_PAGESIZE);
  char* map = mmap(NULL, 64 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) exit(3);
  for (int i = 0; i < 32; ++i) {
    *(void**)(map + 2 * i * page + 8 * i) = malloc(24);
    mprotect(map + (2 * i + 1) * page, page, PROT_NONE);
  }
}

int main(void) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, NULL);  // the thread inherits it
  pthread_t thread;
  pthread_create(&thread, NULL, churn, NULL);
  sigemptyset(&all);
  pthread_sigmask(SIG_SETMASK, &all, NULL);
  truncated_file_mapping();
  guard_pages();
  kept = malloc(64);
  ESCAPE(leak_site());
  usleep(20000);  // let the thread churn
  return 0;
}
