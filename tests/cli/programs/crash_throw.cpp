// An uncaught C++ exception: std::terminate, then abort (SIGABRT), after leaking 66 bytes
// with new[] in leak_site().
#include <stdexcept>

#include "cli_util.h"

__attribute__((noinline)) static char* leak_site() {
  char* p = new char[66];
  ESCAPE(p);
  return p;
}

__attribute__((noinline)) static void fail_hard(int code) {
  throw std::runtime_error("unhandled " + std::to_string(code));
}

int main(int argc, char**) {
  ESCAPE(leak_site());
  fail_hard(argc);
  return 0;
}
