// The leaks that generated suppressions used to over-match: one allocated in main itself, one
// by strdup called from main, a std::vector<int> (object and buffer) leaked in two different
// functions, one in a thread (no main on its stack), one in libcli_modleak.so; and two
// descriptors left open. Sizes differ so that tests can tell the groups apart.
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <vector>

#include "cli_util.h"

extern "C" void* modleak_alloc(size_t n);  // modleak.c, in libcli_modleak.so

__attribute__((noinline)) std::vector<int>* fill_a() {
  auto* v = new std::vector<int>(100);  // 24 + 400 bytes
  ESCAPE(v);
  return v;
}

__attribute__((noinline)) std::vector<int>* fill_b() {
  auto* v = new std::vector<int>(200);  // 24 + 800 bytes
  ESCAPE(v);
  return v;
}

__attribute__((noinline)) void* worker(void*) {
  void* p = malloc(50);
  ESCAPE(p);
  return nullptr;
}

__attribute__((noinline)) FILE* open_log() {
  FILE* f = fopen("log.txt", "w");
  ESCAPE(f);
  return f;
}

__attribute__((noinline)) int open_data() {
  int fd = open("data.bin", O_RDWR | O_CREAT | O_TRUNC, 0600);
  ESCAPE(fd);
  return fd;
}

int main(int argc, char** argv) {
  void* in_main = malloc(10);
  ESCAPE(in_main);
  char* copy = strdup("twenty characters...");  // 21 bytes
  ESCAPE(copy);
  std::vector<int>* a = fill_a();
  ESCAPE(a);
  std::vector<int>* b = fill_b();
  ESCAPE(b);
  pthread_t thread;
  if (pthread_create(&thread, nullptr, worker, nullptr) != 0) return 99;
  pthread_join(thread, nullptr);
  void* c = modleak_alloc(33);
  ESCAPE(c);
  FILE* log = open_log();
  ESCAPE(log);
  int data = open_data();
  ESCAPE(data);
  // Forget every pointer, so that each block is definitely lost.
  in_main = copy = nullptr;
  a = b = nullptr;
  c = nullptr;
  ESCAPE(in_main);
  ESCAPE(copy);
  ESCAPE(a);
  ESCAPE(b);
  ESCAPE(c);
  return status_arg(argc, argv, 1);
}
