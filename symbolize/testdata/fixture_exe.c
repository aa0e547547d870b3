// Symbolizer test fixture: a non-PIE executable (ET_EXEC, load bias 0). Prints the address
// of fixture_exe_function and the bounds of its image for symbolizer_test.cpp.
#include <stdio.h>

extern char __executable_start[];
extern char _end[];

__attribute__((noinline)) int fixture_exe_function(int n) {
  return n * 3;  // LINE_EXE_FN (line 9): the entry's last line-table row is the body's
}

int main(void) {
  printf("%p %p %p\n", (void*)&fixture_exe_function, (void*)__executable_start, (void*)_end);
  return fixture_exe_function(0);
}
