// Makes 2 x argv[1] heap events for the heap profile's tests (test_profile.py): that many
// malloc/free pairs from 8 call sites, with a ring of 64 blocks live at any time. With
// argv[2] = "kill" it then dies by SIGKILL, before freeing the ring.
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void* volatile g_sink;

#define SITE(n)                                          \
  __attribute__((noinline)) void* site##n(size_t size) { \
    void* p = malloc(size);                              \
    g_sink = p;                                          \
    return p;                                            \
  }
SITE(0)
SITE(1)
SITE(2)
SITE(3)
SITE(4)
SITE(5)
SITE(6)
SITE(7)

int main(int argc, char** argv) {
  long pairs = argc > 1 ? atol(argv[1]) : 1000;
  void* (*sites[8])(size_t) = {site0, site1, site2, site3, site4, site5, site6, site7};
  void* ring[64] = {0};
  for (long i = 0; i < pairs; ++i) {
    free(ring[i % 64]);
    ring[i % 64] = sites[i % 8]((size_t)(16 + i % 512));
  }
  if (argc > 2 && strcmp(argv[2], "kill") == 0) kill(getpid(), SIGKILL);
  for (int i = 0; i < 64; ++i) free(ring[i]);
  return 0;
}
