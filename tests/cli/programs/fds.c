// Descriptor tracking and the event log, one scenario per first argument; files are made in
// the current directory. No stdio besides the fopen/fclose under test, so reports and event
// logs hold only what the scenario does.
//   leak       a FILE from fopen and a descriptor from open left open (lines FOPEN, OPEN)
//   closed     the same, closed again
//   inherited  fd 5 was passed in by whoever started us: use it, leave it and our own open
//   trace      the allocation and stream calls whose event log test_fds.py checks line by line
//   fork       opens a file, forks; the child allocates and leaves with _exit
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"

__attribute__((noinline)) FILE* open_log(void) {
  FILE* f = fopen("log.txt", "w");  // FOPEN
  ESCAPE(f);
  return f;
}

__attribute__((noinline)) int open_data(void) {
  int fd = open("data.bin", O_RDWR | O_CREAT | O_TRUNC, 0600);  // OPEN
  ESCAPE(fd);
  return fd;
}

static int fail(const char* what) {
  ssize_t ignored = write(2, what, strlen(what));
  (void)ignored;
  return 1;
}

static int leak(void) {
  if (open_log() == NULL || open_data() < 0) return fail("cannot open\n");
  return 0;
}

static int closed(void) {
  FILE* f = open_log();
  int fd = open_data();
  if (f == NULL || fd < 0) return fail("cannot open\n");
  return fclose(f) != 0 || close(fd) != 0;
}

static int inherited(void) {
  if (fcntl(5, F_GETFD) < 0) return fail("fd 5 is not open\n");
  if (write(5, "inherited\n", 10) != 10) return fail("cannot write to fd 5\n");
  return open_data() < 0;
}

// Hides a value from the optimizer, which would turn realloc(NULL, n) into malloc(n) and drop
// free(NULL).
#define LAUNDER(p) __asm__ volatile("" : "+r"(p))

// Each call once, in this order; test_fds.py expects exactly these lines.
static int trace(void) {
  char* null = NULL;
  char* also_null = NULL;
  LAUNDER(null);
  LAUNDER(also_null);
  char* a = malloc(16);
  char* b = calloc(4, 8);
  char* c = realloc(a, 64);
  char* d = realloc(null, 8);
  void* e = NULL;
  if (posix_memalign(&e, 64, 100) != 0) return 1;
  void* f = aligned_alloc(32, 64);
  ESCAPE(b);
  ESCAPE(c);
  ESCAPE(d);
  ESCAPE(f);
  FILE* file = fopen("trace.txt", "w");
  FILE* missing = fopen("no/such/dir/x", "r");
  ESCAPE(missing);
  if (file == NULL || fclose(file) != 0) return 1;
  free(c);
  free(b);
  free(d);
  free(e);
  free(f);
  free(also_null);
  return 0;
}

static int fork_child(void) {
  int fd = open_data();
  pid_t pid = fork();
  if (pid == 0) {
    ESCAPE(malloc(24));
    _exit(0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 1;
  char* p = malloc(32);
  ESCAPE(p);
  free(p);
  return close(fd) != 0 || status != 0;
}

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "";
  if (strcmp(what, "leak") == 0) return leak();
  if (strcmp(what, "closed") == 0) return closed();
  if (strcmp(what, "inherited") == 0) return inherited();
  if (strcmp(what, "trace") == 0) return trace();
  if (strcmp(what, "fork") == 0) return fork_child();
  return fail("usage: cli_fds leak|closed|inherited|trace|fork\n");
}
