// A program without leaks that uses printf, a thread and iostream: nothing may be definitely,
// indirectly or possibly lost, and the program itself keeps nothing. Whatever the C and C++
// runtimes keep for themselves (stdio and iostream buffers, locale data, thread bookkeeping)
// is theirs: memtrack counts it as runtime_internal, valgrind frees most of it at exit
// (__libc_freeres, __gnu_cxx::__freeres).
// REACHABLE: compare
#include <pthread.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "memcheck_case.h"

NOINLINE static void* worker(void* arg) {
  auto* words = static_cast<std::vector<std::string>*>(arg);
  for (int i = 0; i < 100; ++i) words->push_back("word number " + std::to_string(i));
  return nullptr;
}

int main() {
  std::vector<std::string> words;
  pthread_t thread;
  CHECK(pthread_create(&thread, nullptr, worker, &words) == 0);
  CHECK(pthread_join(thread, nullptr) == 0);
  auto owned = std::make_unique<char[]>(1000);
  printf("%zu words, first '%s'\n", words.size(), words.front().c_str());
  std::cout << "last '" << words.back() << "'" << std::endl;
  char* raw = static_cast<char*>(malloc(100));
  free(raw);
  return owned[0];
}
