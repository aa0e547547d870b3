// Prints each argument (argv[1..]) on a line of its own and exits 0; no leaks. Shows which
// arguments reached the program, and whether it ran at all.
#include <stdio.h>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) puts(argv[i]);
  return 0;
}
