// Stress: four threads churn malloc/free (and each leaks exactly 10 blocks of 100 bytes)
// while the main thread forks 20 children that exec /bin/true. fork() must never deadlock on
// memtrack's locks (held by a churning thread at the moment of the fork), children must run
// normally, and the parent's numbers must stay exact. Every exec'd /bin/true reports too
// (LD_PRELOAD is inherited), with no leaks.
// EXPECT-REPORTS: 21
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-PROCESS-LEAKED: main 4000 bytes in 40 blocks
// EXPECT-PROCESS-GROUPS: main 1
// EXPECT-PROCESS-GROUP: main 4000 bytes in 40 blocks | leak_ten@alloc churn@call
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_util.h"

enum { kThreads = 4, kPairs = 30000, kChildren = 20, kSlots = 64 };

// calloc: a malloc'd block may hold glibc's stale free-list links, which can point into
// another leaked block and make it "indirectly lost" (memcheck would say the same).
__attribute__((noinline)) void leak_ten(void) {
  for (int i = 0; i < 10; ++i) ESCAPE(calloc(1, 100));  // @alloc
}

__attribute__((noinline)) static void* churn(void* arg) {
  void* slots[kSlots] = {0};
  unsigned x = (unsigned)(long)arg;
  for (int i = 0; i < kPairs; ++i) {
    x = x * 1103515245u + 12345u;
    unsigned slot = (x >> 8) % kSlots;
    free(slots[slot]);
    slots[slot] = malloc(8 + (x >> 24) % 200);
  }
  for (int i = 0; i < kSlots; ++i) free(slots[i]);
  leak_ten();  // @call
  ESCAPE(0);
  return NULL;
}

int main(void) {
  pthread_t threads[kThreads];
  for (long t = 0; t < kThreads; ++t)
    CHECK(pthread_create(&threads[t], NULL, churn, (void*)t) == 0);
  for (int c = 0; c < kChildren; ++c) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      execl("/bin/true", "true", (char*)NULL);
      _exit(127);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int t = 0; t < kThreads; ++t) CHECK(pthread_join(threads[t], NULL) == 0);
  printf("%d children ran\n", kChildren);
  return 0;
}
