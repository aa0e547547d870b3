// Allocations from frames that are hard to unwind, for the fast-versus-reference unwinder
// check: dynamic stack allocation (CFA on rbp), stack realignment, callbacks through libc's
// qsort and libstdc++'s std::sort, exceptions in flight, a signal handler, setjmp/longjmp,
// a ucontext coroutine stack, threads, deep recursion past max_frames, and a library that is
// loaded, used, unloaded and loaded again (the rule cache must forget its addresses).
// Usage: unwind_torture LIBRARY
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace {

volatile void* g_sink;

NOINLINE void keep(void* p) {
  g_sink = p;
  free(p);
}

NOINLINE void dynamic_stack(int n) {
  char* buffer = static_cast<char*>(__builtin_alloca(static_cast<size_t>(n)));
  memset(buffer, 1, static_cast<size_t>(n));
  keep(malloc(static_cast<size_t>(buffer[n - 1]) + 8));
}

NOINLINE void realigned_stack() {
  alignas(128) char aligned[256];
  memset(aligned, 2, sizeof(aligned));
  g_sink = aligned;
  keep(malloc(32));
}

int compare_allocating(const void* a, const void* b) {
  keep(malloc(16));
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

NOINLINE void through_qsort() {
  int values[] = {5, 3, 9, 1, 7};
  qsort(values, 5, sizeof(int), compare_allocating);
}

NOINLINE void through_std_sort() {
  std::vector<std::string> words = {"delta", "alpha", "charlie", "bravo", "echo", "foxtrot"};
  std::sort(words.begin(), words.end(), [](const std::string& a, const std::string& b) {
    std::string copy = a + "-" + b;  // allocates inside the comparator
    return a < b && !copy.empty();
  });
  std::map<std::string, int> counts;
  for (const std::string& w : words) counts[w + w] += 1;
}

struct AllocatingError : std::runtime_error {
  AllocatingError() : std::runtime_error(std::string(64, 'x')) {}
};

NOINLINE void throw_deep(int depth) {
  if (depth == 0) throw AllocatingError();
  std::string local(48, static_cast<char>('a' + depth));
  throw_deep(depth - 1);
}

NOINLINE void exceptions() {
  for (int i = 0; i < 20; ++i) {
    try {
      throw_deep(5);
    } catch (const std::exception& e) {
      keep(strdup(e.what()));
    }
  }
}

void on_signal(int) {
  keep(malloc(24));  // not async-signal-safe in general, fine for this test
}

NOINLINE void from_signal_handler() {
  signal(SIGUSR1, on_signal);
  for (int i = 0; i < 3; ++i) raise(SIGUSR1);
  signal(SIGUSR1, SIG_DFL);
}

jmp_buf g_jump;

volatile int g_jump_depth_limit = 1000;

NOINLINE void jump_back(int depth) {
  keep(malloc(8));
  if (depth == 0) longjmp(g_jump, 1);
  if (depth < g_jump_depth_limit) jump_back(depth - 1);
}

NOINLINE void setjmp_longjmp() {
  if (setjmp(g_jump) == 0) jump_back(4);
  keep(malloc(40));  // after the jump: the stack is shallower than when it jumped
}

ucontext_t g_main_context;
ucontext_t g_coroutine_context;

void coroutine_body() {
  keep(malloc(56));
  swapcontext(&g_coroutine_context, &g_main_context);
  keep(malloc(72));
}

NOINLINE void coroutine() {
  static char stack[64 * 1024];
  getcontext(&g_coroutine_context);
  g_coroutine_context.uc_stack.ss_sp = stack;
  g_coroutine_context.uc_stack.ss_size = sizeof(stack);
  g_coroutine_context.uc_link = &g_main_context;
  makecontext(&g_coroutine_context, coroutine_body, 0);
  swapcontext(&g_main_context, &g_coroutine_context);
  keep(malloc(64));
  swapcontext(&g_main_context, &g_coroutine_context);
}

NOINLINE int recurse(int depth) {
  if (depth == 0) {
    keep(malloc(100));
    return 1;
  }
  return recurse(depth - 1) + 1;
}

void* thread_body(void*) {
  for (int i = 0; i < 100; ++i) {
    dynamic_stack(64 + i);
    recurse(i % 50);
  }
  through_std_sort();
  return nullptr;
}

NOINLINE void threads() {
  pthread_t ids[4];
  for (pthread_t& id : ids) pthread_create(&id, nullptr, thread_body, nullptr);
  for (pthread_t& id : ids) pthread_join(id, nullptr);
}

NOINLINE void library_cycle(const char* path) {
  for (int round = 0; round < 3; ++round) {
    void* handle = dlopen(path, RTLD_NOW);
    if (handle == nullptr) {
      fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
      exit(2);
    }
    auto allocate = reinterpret_cast<void* (*)(int)>(dlsym(handle, "torture_library_allocate"));
    for (int i = 0; i < 10; ++i) keep(allocate(i));
    dlclose(handle);
    // Something else may now be mapped where the library was.
    void* other = dlopen("libm.so.6", RTLD_NOW);
    keep(malloc(12));
    if (other != nullptr) dlclose(other);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
    return 2;
  }
  dynamic_stack(100);
  dynamic_stack(5000);
  realigned_stack();
  through_qsort();
  through_std_sort();
  exceptions();
  from_signal_handler();
  setjmp_longjmp();
  coroutine();
  recurse(300);
  threads();
  library_cycle(argv[1]);
  puts("done");
  return 0;
}
