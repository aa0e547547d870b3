// How the link-time archive (libmemtrack_static.a, docs/static-link.md) finds the real
// functions and enters the process. The program is linked with `-Wl,--wrap=NAME` for every
// hook: its references to NAME (and those of every libc.a and libstdc++.a member the link
// pulls in) go to the hook, renamed __wrap_NAME in the archive, and __real_NAME is the
// library's own definition. Calls libc (getauxval) but never malloc.
#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <atomic>

#include "core/sys_linux.h"
#include "runtime/diag.h"
#include "runtime/link/link_mode.h"
#include "runtime/link/real_functions.h"

// The library definitions, as the linker's --wrap names them. Declared with one neutral type:
// only their addresses are taken, and the hooks call them through the typed tables of
// real_functions.h. Strong references pull the definitions out of libc.a (a weak one would
// not), so each hooked function is in the program whether or not the program calls it (with
// the unwinder and the runtime itself, a static "hello world" gains 310 KB of code).
#define MEMTRACK_DECLARE_LINKED(group, symbol) MEMTRACK_DECLARE_##group(symbol)
#define MEMTRACK_DECLARE_PRELOAD_ONLY(group, symbol)
#define MEMTRACK_DECLARE_EAGER(symbol) extern "C" void __real_##symbol();
#define MEMTRACK_DECLARE_LAZY(symbol) extern "C" void __real_##symbol();
#define MEMTRACK_DECLARE_CXX(symbol) extern "C" __attribute__((weak)) void __real_##symbol();
#define MEMTRACK_REAL(group, link, member, symbol, ...) MEMTRACK_DECLARE_##link(group, symbol)
#define MEMTRACK_HOOK(symbol)
#include "runtime/link/interposed.inc"
#undef MEMTRACK_REAL
#undef MEMTRACK_HOOK
#undef MEMTRACK_DECLARE_LINKED
#undef MEMTRACK_DECLARE_PRELOAD_ONLY
#undef MEMTRACK_DECLARE_EAGER
#undef MEMTRACK_DECLARE_LAZY
#undef MEMTRACK_DECLARE_CXX

// libstdc++'s new_handler getter and bad_alloc thrower are not wrapped; weak, so that a C
// program links without libstdc++. The C++ member of the archive (cxx_anchors.cpp) holds
// strong references, so a C++ program that uses operator new has them.
extern "C" __attribute__((weak)) void memtrack_cxx_get_new_handler() __asm__(
    "_ZSt15get_new_handlerv");
extern "C" __attribute__((weak)) void memtrack_cxx_throw_bad_alloc() __asm__(
    "_ZSt17__throw_bad_allocv");

// What `memtrack run` looks for in a static executable to know it carries the runtime
// (cli/preflight.cpp): a section of its own, which survives `strip`.
__attribute__((used, retain, section(".memtrack_runtime"))) const char memtrack_link_time_marker[] =
    "memtrack link-time runtime " MEMTRACK_VERSION;

#if !defined(__arm__)
// libgcc's lookup of the unwind entry of a code address (unwind-dw2-fde.h; not in <unwind.h>).
struct dwarf_eh_bases {
  void* tbase;
  void* dbase;
  void* func;
};
extern "C" const void* _Unwind_Find_FDE(void* pc, struct dwarf_eh_bases* bases);
#endif

// Defined by the final link around the runtime's code (make_static_archive.py). Hidden: the
// addresses are PC-relative, not taken from the GOT.
extern "C" __attribute__((visibility("hidden"))) const char __start_memtrack_text[];
extern "C" __attribute__((visibility("hidden"))) const char __stop_memtrack_text[];
extern "C" __attribute__((visibility("hidden"))) const char __start_memtrack_bss[];
extern "C" __attribute__((visibility("hidden"))) const char __stop_memtrack_bss[];

namespace memtrack::rt {

namespace {

struct RealEntry {
  const char* name;
  void (*address)();
};

constexpr RealEntry kReal[] = {
#define MEMTRACK_ENTRY_LINKED(symbol) {#symbol, &__real_##symbol},
#define MEMTRACK_ENTRY_PRELOAD_ONLY(symbol)
#define MEMTRACK_REAL(group, link, member, symbol, ...) MEMTRACK_ENTRY_##link(symbol)
#define MEMTRACK_HOOK(symbol)
#include "runtime/link/interposed.inc"
#undef MEMTRACK_REAL
#undef MEMTRACK_HOOK
#undef MEMTRACK_ENTRY_LINKED
#undef MEMTRACK_ENTRY_PRELOAD_ONLY
};

constexpr RealEntry kDefault[] = {
    {"_ZSt15get_new_handlerv", &memtrack_cxx_get_new_handler},
    {"_ZSt17__throw_bad_allocv", &memtrack_cxx_throw_bad_alloc},
};

bool same_name(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

template <size_t N>
void* find(const RealEntry (&table)[N], const char* name) {
  for (const RealEntry& entry : table) {
    if (same_name(entry.name, name)) return reinterpret_cast<void*>(entry.address);
  }
  return nullptr;
}

// The program headers of the executable: a PT_INTERP means the dynamic loader runs and
// shared libraries (libc.so among them) call their own allocator, not the wrapped one.
LinkMode detect_link_mode() {
  auto phdr = reinterpret_cast<const ElfW(Phdr)*>(getauxval(AT_PHDR));
  size_t count = getauxval(AT_PHNUM);
  for (size_t i = 0; phdr != nullptr && i < count; ++i) {
    if (phdr[i].p_type == PT_INTERP) return LinkMode::kDynamicLink;
  }
  return LinkMode::kStaticLink;
}

std::atomic<bool> g_ready{false};

// The first code of ours glibc runs after its own start-up (__libc_init_first, whose
// allocations, like ld.so's in a dynamic program, are not the program's and are served by the
// bootstrap arena): the executable's preinit array runs before any constructor. From here on
// the unwinder works, given the executable's .eh_frame_hdr; without one (a link without
// --eh-frame-hdr, which gcc -static leaves out), libgcc would abort on the first stack.
// 32-bit ARM unwinds with the EHABI tables instead (.ARM.exidx), which every link indexes
// (PT_ARM_EXIDX, __exidx_start and __exidx_end): nothing to check there.
void mark_ready(int, char**, char**) {
#if !defined(__arm__)
  struct dwarf_eh_bases bases {};
  if (_Unwind_Find_FDE(reinterpret_cast<void*>(&mark_ready), &bases) == nullptr) {
    static const char kMessage[] =
        "memtrack: fatal: the program was linked without -Wl,--eh-frame-hdr, so memtrack cannot "
        "take stacks; link it with $(memtrack link-flags), which has it\n";
    memtrack::core::sys::write_all(2, kMessage, sizeof(kMessage) - 1);
    _exit(125);
  }
#endif
  g_ready.store(true, std::memory_order_release);
}

__attribute__((used, section(".preinit_array"))) void (*const kMarkReady)(int, char**,
                                                                          char**) = mark_ready;

// In a dynamically linked program the archive sees only what the linked objects call: the
// shared libraries (libc.so's strdup, libstdc++.so's containers) call libc.so's malloc
// directly. Said once, at start, since every report of the run is incomplete the same way.
__attribute__((constructor)) void warn_if_dynamic() {
  if (link_mode() != LinkMode::kDynamicLink) return;
  diag(
      "warning: libmemtrack_static.a is linked into a dynamically linked program: allocations "
      "made inside shared libraries are not seen; link with -static, or run the program under "
      "LD_PRELOAD=libmemtrack.so instead");
}

}  // namespace

bool process_ready() {
  return g_ready.load(std::memory_order_acquire);
}

bool linked_code_range(uintptr_t* begin, uintptr_t* end) {
  *begin = reinterpret_cast<uintptr_t>(__start_memtrack_text);
  *end = reinterpret_cast<uintptr_t>(__stop_memtrack_text);
  return *begin < *end;
}

bool linked_globals_range(uintptr_t* begin, uintptr_t* end) {
  *begin = reinterpret_cast<uintptr_t>(__start_memtrack_bss);
  *end = reinterpret_cast<uintptr_t>(__stop_memtrack_bss);
  return *begin < *end;
}

void* resolve_next(const char* name) {
  return find(kReal, name);
}

void* resolve_default(const char* name) {
  return find(kDefault, name);
}

// A static program's runtime is linked in from the start: nothing attaches to it.
void resolve_in_global_scope() {}

LinkMode link_mode() {
  static std::atomic<int> cached{-1};
  int mode = cached.load(std::memory_order_relaxed);
  if (mode < 0) {
    mode = static_cast<int>(detect_link_mode());
    cached.store(mode, std::memory_order_relaxed);
  }
  return static_cast<LinkMode>(mode);
}

}  // namespace memtrack::rt

// The archive's own calls of __cxa_atexit come here (make_static_archive.py): the runtime's
// globals (mapped tables) are never destroyed, so the exit report, which glibc runs after the
// destructors registered by constructors, still finds them.
extern "C" __attribute__((visibility("default"))) int memtrack_keep_runtime_globals(void (*)(void*),
                                                                                    void*, void*) {
  return 0;
}
