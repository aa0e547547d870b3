// Only in the link-time archive, in its C++ member beside new_delete_hooks.cpp: strong
// references that make a static link pull in the libstdc++ functions the operator new hooks
// forward to. A C program never references the C++ member, so it links without libstdc++.
// Runtime-safe: data only.

#define MEMTRACK_REAL(name)
#define MEMTRACK_REAL_CXX(name) extern "C" void __real_##name();
#include "runtime/hooks/resolve_linked_names.inc"
#undef MEMTRACK_REAL
#undef MEMTRACK_REAL_CXX

extern "C" void memtrack_cxx_get_new_handler() __asm__("_ZSt15get_new_handlerv");
extern "C" void memtrack_cxx_throw_bad_alloc() __asm__("_ZSt17__throw_bad_allocv");

namespace {

using Function = void (*)();

__attribute__((used)) const Function kCxxAnchors[] = {
#define MEMTRACK_REAL(name)
#define MEMTRACK_REAL_CXX(name) &__real_##name,
#include "runtime/hooks/resolve_linked_names.inc"
#undef MEMTRACK_REAL
#undef MEMTRACK_REAL_CXX
    &memtrack_cxx_get_new_handler,
    &memtrack_cxx_throw_bad_alloc,
};

}  // namespace
