// Dies in the way argv[1] names, after leaking 77 bytes from leak_site():
//   segv      writes through a null pointer in crash_segv()
//   bus       reads a page of a file mapping cut short by ftruncate, in crash_bus()
//   fpe       divides by zero in crash_fpe()
//   ill       executes ud2 (__builtin_trap) in crash_ill()
//   abort     calls abort() from crash_abort()
//   assert    fails an assert in crash_assert()
//   pipe      writes to a pipe whose read end is closed (SIGPIPE) from crash_pipe()
//   overflow  recurses until the stack overflows, in recurse()
//   thread    a second thread runs crash_segv()
//   fork      a forked child runs crash_segv(); the parent waits and exits 0
//   own       installs its own SIGSEGV handler (prints "own handler", _exit(42)) first
#define _GNU_SOURCE
#undef NDEBUG  // the release build defines it; this assert must stay
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"

__attribute__((noinline)) static void* leak_site(void) {
  void* p = malloc(77);
  ESCAPE(p);
  return p;
}

__attribute__((noinline)) static void crash_segv(int* volatile target) {
  *target = 1;
  ESCAPE(target);
}

__attribute__((noinline)) static int crash_bus(void) {
  FILE* file = tmpfile();
  int fd = fileno(file);
  if (ftruncate(fd, 8192) != 0) return 3;
  volatile char* map = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED || ftruncate(fd, 0) != 0) return 3;
  return map[4096];
}

__attribute__((noinline)) static int crash_fpe(volatile int divisor) {
  return 100 / divisor;
}

__attribute__((noinline)) static void crash_ill(void) {
  __builtin_trap();
}

__attribute__((noinline)) static void crash_abort(void) {
  abort();
}

__attribute__((noinline)) static void crash_assert(int value) {
  assert(value == 42);
  ESCAPE(&value);
}

__attribute__((noinline)) static void crash_pipe(void) {
  int fds[2];
  if (pipe(fds) != 0) return;
  close(fds[0]);
  ssize_t n = write(fds[1], "x", 1);
  ESCAPE(&n);
}

__attribute__((noinline)) static int recurse(volatile int depth) {
  volatile char pad[256];
  pad[0] = (char)depth;
  if (depth < 0) return 0;  // never: keeps the compiler from calling it infinite
  return recurse(depth + 1) + pad[0];
}

static void* thread_main(void* arg) {
  crash_segv((int*)arg);
  return NULL;
}

static void own_handler(int sig) {
  (void)sig;
  static const char kText[] = "own handler\n";
  ssize_t n = write(1, kText, sizeof(kText) - 1);
  (void)n;
  _exit(42);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "segv";
  ESCAPE(leak_site());
  // Results are kept past the call, so main's frame stays on the stack (no tail call).
  int result = 0;
  if (strcmp(mode, "bus") == 0) result = crash_bus();
  if (strcmp(mode, "fpe") == 0) result = crash_fpe(0);
  ESCAPE(&result);
  if (strcmp(mode, "ill") == 0) crash_ill();
  if (strcmp(mode, "abort") == 0) crash_abort();
  if (strcmp(mode, "assert") == 0) crash_assert(argc);
  if (strcmp(mode, "pipe") == 0) crash_pipe();
  if (strcmp(mode, "overflow") == 0) result = recurse(0);
  ESCAPE(&result);
  if (strcmp(mode, "thread") == 0) {
    pthread_t thread;
    pthread_create(&thread, NULL, thread_main, NULL);
    pthread_join(thread, NULL);
  }
  if (strcmp(mode, "fork") == 0) {
    pid_t child = fork();
    if (child == 0) crash_segv(NULL);
    int status = 0;
    waitpid(child, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV ? 0 : 5;
  }
  if (strcmp(mode, "own") == 0) signal(SIGSEGV, own_handler);
  crash_segv(NULL);
  return 0;
}
