// ELF symbol-table lookup for the in-process report (see elf_symbols.h). Calls libc (open,
// fstat, mmap, _dl_find_object) but never malloc; every offset read from a file is bounds-checked,
// since a module file may be truncated or replaced on disk while the program runs.
#include "runtime/unwind/elf_symbols.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mmap_array.h"
#include "core/text_buffer.h"
#include "runtime/runtime.h"

// libsupc++'s demangler (the one behind __cxa_demangle), in its form that hands the name to
// a callback piece by piece and keeps its work on the stack instead of in malloc'ed memory.
// Linked statically from libsupc++.a and kept local to libmemtrack.so (runtime/CMakeLists.txt).
// Returns 0 on success.
extern "C" int __gcclibcxx_demangle_callback(const char* mangled,
                                             void (*callback)(const char*, size_t, void*),
                                             void* opaque);

namespace memtrack::rt {
namespace {

// The ELF class of the running machine's files: the only one the runtime reads.
constexpr unsigned char kElfClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
#if defined(__arm__)
constexpr bool kIsArm32 = true;
#else
constexpr bool kIsArm32 = false;
#endif

struct FunctionSymbol {
  uint64_t start;  // where its code starts (a Thumb function's address without bit 0)
  uint64_t size;
  uint32_t name;  // offset into the string table
  bool thumb;     // 32-bit ARM: a call must go to start + 1
};

struct ModuleSymbols {
  const link_map* map = nullptr;
  const char* file = nullptr;  // the mapping of the whole ELF file
  size_t file_size = 0;
  const char* strings = nullptr;
  size_t strings_size = 0;
  bool functions_tried = false;  // load_functions ran: only the report needs them sorted
  core::MmapArray<FunctionSymbol>* functions = nullptr;
  bool objects_tried = false;  // likewise for the variables (retention reports only)
  core::MmapArray<FunctionSymbol>* objects = nullptr;
};

constexpr int kMaxModules = 256;
ModuleSymbols g_modules[kMaxModules];
core::MmapArray<FunctionSymbol> g_function_arrays[kMaxModules];
core::MmapArray<FunctionSymbol> g_object_arrays[kMaxModules];
int g_module_count = 0;

bool in_bounds(size_t offset, size_t size, size_t total) {
  return offset <= total && size <= total - offset;
}

bool terminated_within(const char* s, size_t limit) {
  for (size_t i = 0; i < limit; ++i) {
    if (s[i] == '\0') return true;
  }
  return false;
}

const ElfW(Shdr) * section(const char* file, size_t file_size, const ElfW(Ehdr) * ehdr, size_t i) {
  size_t offset = ehdr->e_shoff + i * sizeof(ElfW(Shdr));
  if (i >= ehdr->e_shnum || !in_bounds(offset, sizeof(ElfW(Shdr)), file_size)) return nullptr;
  return reinterpret_cast<const ElfW(Shdr)*>(file + offset);
}

// Picks .symtab if present (it has static functions), else .dynsym.
const ElfW(Shdr) * find_symbol_table(const char* file, size_t file_size, const ElfW(Ehdr) * ehdr) {
  const ElfW(Shdr)* dynsym = nullptr;
  for (size_t i = 0; i < ehdr->e_shnum; ++i) {
    const ElfW(Shdr)* sh = section(file, file_size, ehdr, i);
    if (sh == nullptr) return nullptr;
    if (sh->sh_type == SHT_SYMTAB) return sh;
    if (sh->sh_type == SHT_DYNSYM) dynsym = sh;
  }
  return dynsym;
}

struct SymbolTable {
  const ElfW(Sym) * symbols;
  size_t count;
  const char* strings;
  size_t strings_size;
};

// The module file's symbol table (.symtab, else .dynsym) and its strings, read in place.
bool find_symbols(const ModuleSymbols& mod, SymbolTable* out) {
  if (mod.file_size < sizeof(ElfW(Ehdr))) return false;
  const auto* ehdr = reinterpret_cast<const ElfW(Ehdr)*>(mod.file);
  if (ehdr->e_ident[EI_MAG0] != ELFMAG0 || ehdr->e_ident[EI_MAG1] != ELFMAG1 ||
      ehdr->e_ident[EI_MAG2] != ELFMAG2 || ehdr->e_ident[EI_MAG3] != ELFMAG3 ||
      ehdr->e_ident[EI_CLASS] != kElfClass || ehdr->e_shentsize != sizeof(ElfW(Shdr)) ||
      ehdr->e_shoff % alignof(ElfW(Shdr)) != 0) {
    return false;  // not an ELF file this reader can read in place (the tables must be aligned)
  }
  const ElfW(Shdr)* symtab = find_symbol_table(mod.file, mod.file_size, ehdr);
  if (symtab == nullptr || !in_bounds(symtab->sh_offset, symtab->sh_size, mod.file_size) ||
      symtab->sh_offset % alignof(ElfW(Sym)) != 0) {
    return false;
  }
  const ElfW(Shdr)* strtab = section(mod.file, mod.file_size, ehdr, symtab->sh_link);
  if (strtab == nullptr || !in_bounds(strtab->sh_offset, strtab->sh_size, mod.file_size)) {
    return false;
  }
  out->symbols = reinterpret_cast<const ElfW(Sym)*>(mod.file + symtab->sh_offset);
  out->count = symtab->sh_size / sizeof(ElfW(Sym));
  out->strings = mod.file + strtab->sh_offset;
  out->strings_size = strtab->sh_size;
  return true;
}

// A defined function with a name inside the string table.
bool is_function(const ElfW(Sym) & sym, const SymbolTable& table) {
  unsigned type = ELF64_ST_TYPE(sym.st_info);  // the same bits in ELF32_ST_TYPE
  return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym.st_shndx != SHN_UNDEF &&
         sym.st_size != 0 && sym.st_name < table.strings_size;
}

// A Thumb function's address has bit 0 set (32-bit ARM); its code starts one lower.
bool is_thumb(const ElfW(Sym) & sym) {
  return kIsArm32 && (sym.st_value & 1) != 0;
}

// A defined variable with a size and a name inside the string table.
bool is_object(const ElfW(Sym) & sym, const SymbolTable& table) {
  return ELF64_ST_TYPE(sym.st_info) == STT_OBJECT && sym.st_shndx != SHN_UNDEF &&
         sym.st_size != 0 && sym.st_name < table.strings_size;
}

// The module's symbols that `wanted` accepts, sorted by start.
template <typename Wanted>
bool load_symbols(ModuleSymbols& mod, core::MmapArray<FunctionSymbol>& out, Wanted&& wanted) {
  SymbolTable table;
  if (!find_symbols(mod, &table)) return false;
  mod.strings = table.strings;
  mod.strings_size = table.strings_size;
  for (size_t i = 0; i < table.count; ++i) {
    const ElfW(Sym)& sym = table.symbols[i];
    if (!wanted(sym, table)) continue;
    if (!terminated_within(table.strings + sym.st_name, table.strings_size - sym.st_name)) {
      continue;
    }
    bool thumb = ELF64_ST_TYPE(sym.st_info) != STT_OBJECT && is_thumb(sym);
    uintptr_t start = thumb ? sym.st_value - 1 : sym.st_value;
    if (!out.try_push_back(FunctionSymbol{start, sym.st_size, sym.st_name, thumb})) break;
  }
  core::heap_sort(out.data(), out.size(), [](const FunctionSymbol& a, const FunctionSymbol& b) {
    return a.start < b.start;
  });
  return true;
}

void load_functions(ModuleSymbols& mod, core::MmapArray<FunctionSymbol>& out) {
  if (load_symbols(mod, out, is_function)) mod.functions = &out;
}

// Whether the string at `s` (at most `limit` bytes to the table's end) is `name`; reads no
// further than the first difference.
bool names_equal(const char* s, size_t limit, const char* name) {
  size_t i = 0;
  for (; i < limit && name[i] != '\0'; ++i) {
    if (s[i] != name[i]) return false;
  }
  return i < limit && s[i] == '\0';
}

// The value (file address) of each function in `names` in the module's symbol table, 0 when
// absent: one pass over the table, neither copied nor sorted.
void find_functions_named(const ModuleSymbols& mod, const char* const* names, uintptr_t* values,
                          size_t count) {
  for (size_t n = 0; n < count; ++n) values[n] = 0;
  SymbolTable table;
  if (!find_symbols(mod, &table)) return;
  for (size_t i = 0; i < table.count; ++i) {
    const ElfW(Sym)& sym = table.symbols[i];
    if (!is_function(sym, table)) continue;
    const char* candidate = table.strings + sym.st_name;
    for (size_t n = 0; n < count; ++n) {
      if (values[n] == 0 && names_equal(candidate, table.strings_size - sym.st_name, names[n])) {
        values[n] = sym.st_value;
      }
    }
  }
}

// The main program's link_map has an empty name; /proc/self/exe gives its absolute path.
const char* main_program_path() {
  static char path[4096];
  if (path[0] == '\0') {
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (n <= 0) return program_invocation_name;
    path[n] = '\0';
  }
  return path;
}

void map_module_file(ModuleSymbols& mod) {
  const char* path = mod.map->l_name;
  if (path == nullptr || path[0] == '\0') path = main_program_path();
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    void* file = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (file != MAP_FAILED) {
      mod.file = static_cast<const char*>(file);
      mod.file_size = static_cast<size_t>(st.st_size);
    }
  }
  close(fd);
}

// The module's file, mapped on first use.
ModuleSymbols* module_for(const link_map* map) {
  for (int i = 0; i < g_module_count; ++i) {
    if (g_modules[i].map == map) return &g_modules[i];
  }
  if (g_module_count == kMaxModules) return nullptr;
  ModuleSymbols& mod = g_modules[g_module_count++];
  mod.map = map;
  map_module_file(mod);
  return &mod;
}

// The module's functions sorted by address, loaded on first use (nullptr if it has none).
const core::MmapArray<FunctionSymbol>* functions_of(ModuleSymbols& mod) {
  if (!mod.functions_tried && mod.file != nullptr) {
    mod.functions_tried = true;
    load_functions(mod, g_function_arrays[&mod - g_modules]);
  }
  return mod.functions;
}

// The module's variables sorted by address, loaded on first use (nullptr if it has none).
const core::MmapArray<FunctionSymbol>* objects_of(ModuleSymbols& mod) {
  if (!mod.objects_tried && mod.file != nullptr) {
    mod.objects_tried = true;
    core::MmapArray<FunctionSymbol>& out = g_object_arrays[&mod - g_modules];
    if (load_symbols(mod, out, is_object)) mod.objects = &out;
  }
  return mod.objects;
}

// The symbol of `symbols` (sorted by start) that covers vaddr, or nullptr.
const FunctionSymbol* find_covering(const core::MmapArray<FunctionSymbol>* symbols,
                                    uint64_t vaddr) {
  if (symbols == nullptr || symbols->size() == 0) return nullptr;
  const core::MmapArray<FunctionSymbol>& fns = *symbols;
  size_t lo = core::first_after(fns.data(), fns.size(), vaddr,
                                [](const FunctionSymbol& fn) { return fn.start; });
  // Several symbols can share a start (aliases); any one that covers vaddr will do.
  for (size_t i = lo; i-- > 0 && lo - i <= 8;) {
    if (vaddr >= fns[i].start && vaddr - fns[i].start < fns[i].size) return &fns[i];
  }
  return nullptr;
}

// Needs the module's functions loaded (functions_of).
const FunctionSymbol* find_function(const ModuleSymbols& mod, uint64_t vaddr) {
  return find_covering(mod.functions, vaddr);
}

}  // namespace

// _dl_find_object is lock-free and O(log modules); dladdr would scan every dynamic symbol of
// the module on each call (31,000 in cc1plus), which made large reports take many seconds.
SymbolInfo describe_address(uintptr_t pc, bool is_return_address) {
  SymbolInfo info;
  uintptr_t lookup = is_return_address && pc > 0 ? pc - 1 : pc;
  dl_find_object object{};
  if (_dl_find_object(reinterpret_cast<void*>(lookup), &object) != 0 ||
      object.dlfo_link_map == nullptr) {
    return info;
  }
  const link_map* map = object.dlfo_link_map;
  info.module =
      map->l_name == nullptr || map->l_name[0] == '\0' ? main_program_path() : map->l_name;
  info.module_offset = pc - map->l_addr;
  ModuleSymbols* mod = module_for(map);
  if (mod == nullptr || functions_of(*mod) == nullptr) return info;
  const FunctionSymbol* fn = find_function(*mod, lookup - map->l_addr);
  if (fn != nullptr) {
    info.function = mod->strings + fn->name;
    info.function_offset = pc - map->l_addr - fn->start;
  }
  return info;
}

DataSymbolInfo describe_data_address(uintptr_t address) {
  DataSymbolInfo info;
  dl_find_object object{};
  if (_dl_find_object(reinterpret_cast<void*>(address), &object) != 0 ||
      object.dlfo_link_map == nullptr) {
    return info;
  }
  const link_map* map = object.dlfo_link_map;
  info.module =
      map->l_name == nullptr || map->l_name[0] == '\0' ? main_program_path() : map->l_name;
  info.module_offset = address - map->l_addr;
  ModuleSymbols* mod = module_for(map);
  if (mod == nullptr) return info;
  const FunctionSymbol* symbol = find_covering(objects_of(*mod), address - map->l_addr);
  if (symbol != nullptr) {
    info.name = mod->strings + symbol->name;
    info.start = symbol->start + map->l_addr;
    info.size = symbol->size;
  }
  return info;
}

namespace {

// The functions of the program the runtime asks for (at start and again at exit): its option
// functions, and the allocators it may define itself (output/blind_spots.cpp). Found in one
// pass and kept: a program with a large table (cc1plus exports 31,000 symbols) pays for
// reading it once.
constexpr const char* kProgramHooks[] = {"__lsan_default_options",
                                         "__lsan_default_suppressions",
                                         "memtrack_default_options",
                                         "malloc",
                                         "je_malloc",
                                         "tc_malloc",
                                         "mi_malloc",
                                         "rpmalloc"};
constexpr size_t kHookCount = sizeof(kProgramHooks) / sizeof(kProgramHooks[0]);
uintptr_t g_hook_addresses[kHookCount];
bool g_hooks_found = false;

// Scans the main program's symbol table for `names`, storing each one's run-time address (0
// when absent) in `addresses`. A Thumb function's bit 0 stays: callers call it.
void find_in_main_program(const char* const* names, uintptr_t* addresses, size_t count) {
  for (size_t n = 0; n < count; ++n) addresses[n] = 0;
  // The main program heads the list of link maps; walk back to it from our own entry.
  dl_find_object self{};
  if (_dl_find_object(reinterpret_cast<void*>(&find_in_main_program), &self) != 0 ||
      self.dlfo_link_map == nullptr) {
    return;
  }
  const link_map* map = self.dlfo_link_map;
  while (map->l_prev != nullptr) map = map->l_prev;
  ModuleSymbols* mod = module_for(map);
  if (mod == nullptr) return;
  find_functions_named(*mod, names, addresses, count);
  for (size_t n = 0; n < count; ++n) {
    if (addresses[n] != 0) addresses[n] += map->l_addr;
  }
}

}  // namespace

uintptr_t find_main_program_function(const char* name) {
  for (size_t n = 0; n < kHookCount; ++n) {
    if (!core::strings_equal(name, core::string_length(name), kProgramHooks[n])) continue;
    if (!g_hooks_found) {
      find_in_main_program(kProgramHooks, g_hook_addresses, kHookCount);
      g_hooks_found = true;
    }
    return g_hook_addresses[n];
  }
  uintptr_t address = 0;
  find_in_main_program(&name, &address, 1);
  return address;
}

bool try_demangle(const char* name, char* out, uint64_t size) {
  if (name == nullptr || name[0] != '_' || name[1] != 'Z' || size == 0) return false;
  core::TextBuffer text(out, size);
  auto append = [](const char* piece, size_t length, void* opaque) {
    static_cast<core::TextBuffer*>(opaque)->str(piece, length);
  };
  if (__gcclibcxx_demangle_callback(name, append, &text) == 0) return true;
  out[0] = '\0';  // a failure while printing may have left part of a name
  return false;
}

}  // namespace memtrack::rt
