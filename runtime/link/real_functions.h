// The tables of real functions the hooks forward to (from interposed.inc), and the one way
// they are found: resolve_next. libc types only (and <new>'s tags). Runtime-safe: no malloc of its
// own (dlsym's is served by the bootstrap arena).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <new>
#include <type_traits>

#include <malloc.h>
#include <spawn.h>

namespace memtrack::rt {

// The definition `name` had before the runtime's hook took its place: dlsym(RTLD_NEXT, name)
// inside the runtime scope (dlsym may allocate) in libmemtrack.so (resolve_dlsym.cpp); the
// linker's __real_<name> in the link-time archive (resolve_linked.cpp). nullptr if there is
// none (an older glibc, or a function the static link left out).
void* resolve_next(const char* name);
// From now on resolve_next looks in the global scope (RTLD_DEFAULT), skipping memtrack's own
// definitions: an attached runtime (hooks/attach.h) came in with dlopen after the program
// started, so the functions it stands in for are those the program's modules are bound to.
// libmemtrack.so only; called before start-up.
void resolve_in_global_scope();

// dlsym(RTLD_DEFAULT, name) inside the runtime scope: a function of a library the program may
// load later (libstdc++ in a C program that dlopens C++ code). In the link-time archive: the
// function if the static link holds it.
void* resolve_default(const char* name);

// A real function, resolved on first use: a hook may run before start-up has finished (the
// runtime's own start-up opens files), and then still needs its real function. Constant-
// initialised, so it works before any constructor. Thread safe (racing resolutions agree).
template <typename Fn>
class RealFunction {
 public:
  explicit constexpr RealFunction(const char* name) : name_(name) {}
  Fn get() {
    Fn fn = fn_.load(std::memory_order_acquire);
    if (__builtin_expect(fn == nullptr, 0)) {
      fn = reinterpret_cast<Fn>(resolve_next(name_));
      fn_.store(fn, std::memory_order_release);
    }
    return fn;
  }

 private:
  const char* name_;
  std::atomic<Fn> fn_{nullptr};
};

// The real functions that must be usable before any hook forwards (interposed.inc, group
// EAGER): plain pointers, resolved once at start-up by resolve_allocator_functions.
struct RealFunctions {
#define MEMTRACK_FIELD_EAGER(member, ...) std::type_identity_t<__VA_ARGS__> member;
#define MEMTRACK_FIELD_LAZY(member, ...)
#define MEMTRACK_FIELD_CXX(member, ...)
#define MEMTRACK_REAL(group, link, member, symbol, ...) MEMTRACK_FIELD_##group(member, __VA_ARGS__)
#define MEMTRACK_HOOK(symbol)
#include "runtime/link/interposed.inc"
#undef MEMTRACK_REAL
#undef MEMTRACK_HOOK
#undef MEMTRACK_FIELD_EAGER
#undef MEMTRACK_FIELD_LAZY
#undef MEMTRACK_FIELD_CXX
};
extern RealFunctions g_real;

// Resolves every function of g_real, malloc last: the hooks treat a resolved malloc as "the
// real functions are usable". Called once, by the initialising thread, in the runtime scope.
void resolve_allocator_functions();

// The real functions resolved on first use (interposed.inc, groups LAZY and CXX): a
// descriptor hook may run before start-up has finished, and libstdc++ may come later.
struct LazyRealFunctions {
#define MEMTRACK_FIELD_EAGER(member, symbol, ...)
#define MEMTRACK_FIELD_LAZY(member, symbol, ...) RealFunction<__VA_ARGS__> member{#symbol};
#define MEMTRACK_FIELD_CXX MEMTRACK_FIELD_LAZY
#define MEMTRACK_REAL(group, link, member, symbol, ...) \
  MEMTRACK_FIELD_##group(member, symbol, __VA_ARGS__)
#define MEMTRACK_HOOK(symbol)
#include "runtime/link/interposed.inc"
#undef MEMTRACK_REAL
#undef MEMTRACK_HOOK
#undef MEMTRACK_FIELD_EAGER
#undef MEMTRACK_FIELD_LAZY
#undef MEMTRACK_FIELD_CXX
};
extern LazyRealFunctions g_lazy_real;

// Resolves the LAZY functions of g_lazy_real now, at start-up, rather than inside some later
// call (from a signal handler, say). The CXX ones wait for their first use.
void resolve_lazy_functions();

}  // namespace memtrack::rt
