// exit() called from a catch handler while the caught exception is alive. Two blocks are
// still allocated: the exception (144 bytes from __cxa_allocate_exception: libstdc++'s
// 128-byte header, then the 16-byte std::runtime_error) and the message the runtime_error
// holds (a copy-on-write string: 24-byte header + 200 characters + NUL = 225 bytes).
// memcheck calls both possibly lost: every pointer to the exception points into it (the
// handler's `e` at the object after the header, libstdc++'s caught-exceptions list in TLS
// at the __cxa_exception inside the header, past its reference count), and
// the message, although pointed to as its "stdstring" heuristic expects, is reached only
// through that possibly lost block, which makes it possibly lost too.
// MEMCHECK: possible 369 2
// REACHABLE: compare
#include <stdexcept>
#include <string>

#include "memcheck_case.h"

NOINLINE static void fail() {
  throw std::runtime_error(std::string(200, 'e'));
}

int main() {
  try {
    fail();
  } catch (const std::exception& e) {
    ESCAPE(&e);
    exit(0);
  }
  return 1;
}
