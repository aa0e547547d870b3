// dlopens the library argv[1], calls its dlleak_alloc() (a 77-byte leak), dlcloses it and
// exits 0. Exits 2 with a message if the library or the function cannot be found.
#include <dlfcn.h>
#include <stdio.h>

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
  return dlclose(lib) == 0 ? 0 : 2;
}
