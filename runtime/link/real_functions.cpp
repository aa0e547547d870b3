// The real functions the hooks forward to, found by resolve_next (real_functions.h): with
// dlsym in libmemtrack.so (resolve_dlsym.cpp), from the linker's __real_ symbols in the
// link-time archive (resolve_linked.cpp). Never calls malloc itself.
#include "runtime/link/real_functions.h"

#include <string_view>

#include "runtime/runtime.h"

namespace memtrack::rt {

RealFunctions g_real;
LazyRealFunctions g_lazy_real;

namespace {

template <typename Fn>
void resolve(Fn*& slot, const char* name) {
  slot = reinterpret_cast<Fn*>(resolve_next(name));
}

}  // namespace

void resolve_allocator_functions() {
#define MEMTRACK_RESOLVE_EAGER(member, symbol) \
  if constexpr (std::string_view(#symbol) != "malloc") resolve(g_real.member, #symbol);
#define MEMTRACK_RESOLVE_LAZY(member, symbol)
#define MEMTRACK_RESOLVE_CXX(member, symbol)
#define MEMTRACK_REAL(group, link, member, symbol, ...) MEMTRACK_RESOLVE_##group(member, symbol)
#define MEMTRACK_HOOK(symbol)
#include "runtime/link/interposed.inc"
#undef MEMTRACK_REAL
#undef MEMTRACK_HOOK
#undef MEMTRACK_RESOLVE_EAGER
#undef MEMTRACK_RESOLVE_LAZY
#undef MEMTRACK_RESOLVE_CXX
  // malloc last: the hooks treat a resolved malloc as "real functions are usable".
  resolve(g_real.malloc, "malloc");
}

void resolve_lazy_functions() {
  RuntimeScope scope;
#define MEMTRACK_RESOLVE_EAGER(member)
#define MEMTRACK_RESOLVE_LAZY(member) g_lazy_real.member.get();
#define MEMTRACK_RESOLVE_CXX(member)
#define MEMTRACK_REAL(group, link, member, symbol, ...) MEMTRACK_RESOLVE_##group(member)
#define MEMTRACK_HOOK(symbol)
#include "runtime/link/interposed.inc"
#undef MEMTRACK_REAL
#undef MEMTRACK_HOOK
#undef MEMTRACK_RESOLVE_EAGER
#undef MEMTRACK_RESOLVE_LAZY
#undef MEMTRACK_RESOLVE_CXX
}

}  // namespace memtrack::rt
