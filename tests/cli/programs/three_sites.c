// Three leak sites, one per kind of suppression: 11 bytes from leak_by_name() (function
// name), 22 bytes from alloc_in_site() in alloc_site.c (source file) and 33 bytes from
// modleak_alloc() in libcli_modleak.so (module). Exits with the status in argv[1].
#include "cli_util.h"

void* alloc_in_site(size_t n);  // alloc_site.c
void* modleak_alloc(size_t n);  // modleak.c, in libcli_modleak.so

__attribute__((noinline)) void* leak_by_name(void) {
  void* p = malloc(11);
  ESCAPE(p);
  return p;
}

int main(int argc, char** argv) {
  void* a = leak_by_name();
  ESCAPE(a);
  void* b = alloc_in_site(22);
  ESCAPE(b);
  void* c = modleak_alloc(33);
  ESCAPE(c);
  return status_arg(argc, argv, 1);
}
