// A service for memtrack attach's tests: started plainly, it builds a list of 1,000 nodes
// (held by a global) and then serves "rounds": when DIR/go.N appears it runs round N and
// writes DIR/done.N. Each round leaks three 100-byte blocks (leak_after_attach), grows the list
// that was built before any attach by ten nodes (reachable only through old nodes: no leak), and
// frees five nodes from before. With "storm" four more threads allocate and free without
// pause.
// When DIR/exit appears it returns from main (exit status 0). Built with
// ATTACH_SERVICE_JEMALLOC and linked with -ljemalloc, it leaks through jemalloc's mallocx and
// frees the old nodes with dallocx.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <unistd.h>
#ifdef ATTACH_SERVICE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

struct node {
  struct node* next;
  char payload[56];
};

struct node* g_list;
void* volatile g_sink;

__attribute__((noinline)) static void build_list(int count) {
  for (int i = 0; i < count; ++i) {
    struct node* n = malloc(sizeof *n);
    memset(n->payload, 'x', sizeof n->payload);
    n->next = g_list;
    g_list = n;
  }
}

__attribute__((noinline)) static void leak_after_attach(void) {
  for (int i = 0; i < 3; ++i) {
#ifdef ATTACH_SERVICE_JEMALLOC
    g_sink = mallocx(100, 0);  // @mallocx-leak
#else
    g_sink = malloc(100);  // @leak
#endif
  }
  g_sink = NULL;
}

// Ten new nodes after the second node: only old nodes point to them.
__attribute__((noinline)) static void grow_old_list(void) {
  for (int i = 0; i < 10; ++i) {
    struct node* n = malloc(sizeof *n);  // @grow
    n->next = g_list->next->next;
    g_list->next->next = n;
  }
}

// Frees five nodes from the end of the list (built first: from before any attach).
static void free_old_nodes(void) {
  for (int i = 0; i < 5; ++i) {
    struct node* prev = g_list;
    while (prev->next->next != NULL) prev = prev->next;
#ifdef ATTACH_SERVICE_JEMALLOC
    dallocx(prev->next, 0);
#else
    free(prev->next);
#endif
    prev->next = NULL;
  }
}

static void* storm(void* arg) {
  (void)arg;
  void* ring[64] = {0};
  for (unsigned i = 0;; ++i) {
    free(ring[i % 64]);
    ring[i % 64] = malloc(16 + i % 512);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  build_list(1000);
  if (argc > 2 && strcmp(argv[2], "storm") == 0) {
    for (int i = 0; i < 4; ++i) {
      pthread_t thread;
      pthread_create(&thread, NULL, storm, NULL);
    }
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/ready", argv[1]);
  fclose(fopen(path, "w"));
  for (int round = 1;; ++round) {
    char stop[4096];
    snprintf(path, sizeof path, "%s/go.%d", argv[1], round);
    snprintf(stop, sizeof stop, "%s/exit", argv[1]);
    while (access(path, F_OK) != 0) {
      if (access(stop, F_OK) == 0) return 0;
      usleep(5000);
    }
    leak_after_attach();
    grow_old_list();
    free_old_nodes();
    // What glibc believes: single-threaded or not (its own copy and the executable's).
#ifdef ATTACH_SERVICE_STATIC
    void* libc = NULL;  // the static build's glibc is its own copy
#else
    void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
#endif
    const char* own = libc != NULL ? dlsym(libc, "__libc_single_threaded") : NULL;
    snprintf(path, sizeof path, "%s/done.%d", argv[1], round);
    FILE* done = fopen(path, "w");
    fprintf(done, "single_threaded %d %d\n", own != NULL ? *own : -1, __libc_single_threaded);
    fclose(done);
    if (libc != NULL) dlclose(libc);
  }
}
