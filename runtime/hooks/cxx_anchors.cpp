// Only in the link-time archive, in its C++ member beside new_delete_hooks.cpp: strong
// references that make a static link pull in the libstdc++ functions the operator new hooks
// forward to. A C program never references the C++ member, so it links without libstdc++.
// Runtime-safe: data only.

#define MEMTRACK_DECLARE_EAGER(symbol)
#define MEMTRACK_DECLARE_LAZY(symbol)
#define MEMTRACK_DECLARE_CXX(symbol) extern "C" void __real_##symbol();
#define MEMTRACK_REAL(group, link, member, symbol, ...) MEMTRACK_DECLARE_##group(symbol)
#define MEMTRACK_HOOK(symbol)
#include "runtime/link/interposed.inc"
#undef MEMTRACK_REAL
#undef MEMTRACK_HOOK
#undef MEMTRACK_DECLARE_EAGER
#undef MEMTRACK_DECLARE_LAZY
#undef MEMTRACK_DECLARE_CXX

extern "C" void memtrack_cxx_get_new_handler() __asm__("_ZSt15get_new_handlerv");
extern "C" void memtrack_cxx_throw_bad_alloc() __asm__("_ZSt17__throw_bad_allocv");

namespace {

using Function = void (*)();

__attribute__((used)) const Function kCxxAnchors[] = {
#define MEMTRACK_ANCHOR_EAGER(symbol)
#define MEMTRACK_ANCHOR_LAZY(symbol)
#define MEMTRACK_ANCHOR_CXX(symbol) &__real_##symbol,
#define MEMTRACK_REAL(group, link, member, symbol, ...) MEMTRACK_ANCHOR_##group(symbol)
#define MEMTRACK_HOOK(symbol)
#include "runtime/link/interposed.inc"
#undef MEMTRACK_REAL
#undef MEMTRACK_HOOK
#undef MEMTRACK_ANCHOR_EAGER
#undef MEMTRACK_ANCHOR_LAZY
#undef MEMTRACK_ANCHOR_CXX
    &memtrack_cxx_get_new_handler,
    &memtrack_cxx_throw_bad_alloc,
};

}  // namespace
