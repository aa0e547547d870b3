// The shared library the dlopen cases load: its global in .bss holds one block. Plain C, so
// that nothing (C++ unique symbols, for one) marks it NODELETE and dlclose really unmaps it.
#include <stdlib.h>

void* lib_block;

void lib_keep(size_t size) {
  lib_block = malloc(size);
}
