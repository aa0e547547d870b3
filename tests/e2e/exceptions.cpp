// C++ exceptions thrown through several frames, caught, rethrown and caught again, behave as
// without the runtime (the runner compares stdout and exit status with a plain run). Memory
// of the exception objects is freed by the C++ runtime; the only leak is the 77-byte block
// allocated inside a catch handler.
// EXPECT-LEAKED: 77 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 77 bytes in 1 block | record_failure@alloc main@call
#include <stdexcept>
#include <string>

#include "e2e_util.h"

__attribute__((noinline)) void parse_digit(char c) {
  if (c < '0' || c > '9') throw std::invalid_argument(std::string("not a digit: ") + c);
}

__attribute__((noinline)) int parse_number(const char* text) {
  int value = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    parse_digit(*p);
    value = value * 10 + (*p - '0');
  }
  return value;
}

__attribute__((noinline)) int parse_or_rethrow(const char* text) {
  try {
    return parse_number(text);
  } catch (const std::invalid_argument&) {
    throw;  // rethrow the same exception object
  }
}

__attribute__((noinline)) void record_failure(const char* text) {
  char* note = new char[77];  // @alloc
  snprintf(note, 77, "failed: %s", text);
  ESCAPE(note);
}

int main() {
  const char* inputs[] = {"123", "4x5", "", "99", "abc"};
  int failures = 0;
  for (int round = 0; round < 100; ++round) {
    for (const char* input : inputs) {
      try {
        int value = parse_or_rethrow(input);
        if (round == 0) printf("%s -> %d\n", input, value);
      } catch (const std::exception& e) {
        if (round == 0) printf("%s -> %s\n", input, e.what());
        ++failures;
      }
    }
  }
  try {
    throw 42;
  } catch (int n) {
    printf("caught int %d\n", n);
    if (failures > 0) record_failure("int");  // @call
  }
  printf("%d failures\n", failures);
  return 0;
}
