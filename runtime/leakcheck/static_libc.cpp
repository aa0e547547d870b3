// glibc's own allocation sites in a static program (static_libc.h). Runtime-safe: no malloc,
// no libc.
#include "runtime/leakcheck/static_libc.h"

namespace memtrack::rt {

namespace {

// ld.so's files (elf/dl-*.c) linked into libc.a: in a static program their frames are the
// executable's, so the module test of is_runtime_internal misses them.
constexpr const char* kLoaderFunctions[] = {
    "_dl_allocate_tls", "_dl_allocate_tls_storage", "_dl_resize_dtv", "_dl_update_slotinfo",
    "_dl_new_object",   "_dl_non_dynamic_init",     "_dl_init_paths", "_dl_important_hwcaps",
    "_dl_get_origin",   "__libc_setup_tls",         "allocate_dtv",   "_dl_find_object_init",
};

bool same(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

}  // namespace

bool is_static_libc_internal(const char* function) {
  if (function == nullptr) return false;
  for (const char* name : kLoaderFunctions) {
    if (same(name, function)) return true;
  }
  return false;
}

}  // namespace memtrack::rt
