// dlopens the library argv[1], calls its dlleak_alloc() (a 77-byte leak), dlcloses it and
// exits 0. Exits 2 with a message if the library or the function cannot be found. With
// argv[2] = "kill" it waits 200 ms instead (a heap profile's runtime thread writes the
// module map and the idle batch meanwhile) and dies by SIGKILL, the library still loaded.
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  void* (*alloc)(void) = (void* (*)(void))dlsym(lib, "dlleak_alloc");
  if (alloc == NULL) return 2;
  void* p = alloc();
  ESCAPE(p);
  if (argc > 2 && strcmp(argv[2], "kill") == 0) {
    usleep(200000);
    kill(getpid(), SIGKILL);
  }
  return dlclose(lib) == 0 ? 0 : 2;
}
