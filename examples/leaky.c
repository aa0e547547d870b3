// A small program with known leaks, for `make demo`:
//   - 3 x 48-byte "sessions" from a nested call chain (one group of 144 bytes in 3 blocks),
//   - a buffer grown with realloc to 4096 bytes and never freed,
//   - 256 bytes leaked by a worker thread,
// and memory that is correctly freed (no report for it).
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct session {
  char name[40];
  struct session* next;
};

__attribute__((noinline)) static struct session* open_session(const char* name) {
  struct session* s = malloc(sizeof *s);
  strncpy(s->name, name, sizeof s->name - 1);
  s->name[sizeof s->name - 1] = '\0';
  s->next = NULL;
  return s;
}

__attribute__((noinline)) void accept_clients(int n) {
  for (int i = 0; i < n; ++i) {
    struct session* s = open_session("client");
    s->name[0] = (char)('a' + i);  // forgotten: never closed
  }
}

__attribute__((noinline)) char* read_config(void) {
  char* buf = malloc(64);
  for (size_t size = 128; size <= 4096; size *= 2) buf = realloc(buf, size);
  buf[0] = '\0';
  return buf;
}

// Keeps the compiler from proving a block unused and deleting the allocation.
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

static void* worker(void* arg) {
  char* scratch = malloc(256);
  memset(scratch, (int)(long)arg, 256);
  ESCAPE(scratch);  // the scratch buffer leaks
  return arg;
}

int main(void) {
  accept_clients(3);
  char* config = read_config();
  config[1] = 'x';

  pthread_t thread;
  pthread_create(&thread, NULL, worker, (void*)2L);
  pthread_join(thread, NULL);

  char* ok = malloc(1000);  // freed: not a leak
  free(ok);
  return 0;
}
