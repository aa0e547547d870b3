// Execs argv[1] with the remaining arguments and an empty environment (envp = {NULL}), as
// programs that sanitize their children's environment do: LD_PRELOAD and MEMTRACK_OPTIONS
// are gone unless the runtime puts them back.
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) return 1;
  char* empty[] = {NULL};
  execve(argv[1], argv + 1, empty);
  return 127;
}
