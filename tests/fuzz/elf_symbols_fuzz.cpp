// libFuzzer target for the runtime's ELF symbol reader (the in-process report's function
// names): a module file may be truncated or replaced on disk while the program runs, so any
// bytes must give a symbol list or none, never a crash. The reader's source is compiled into
// this file (its file loader is internal to it); the build passes its path as
// MEMTRACK_ELF_SYMBOLS_SOURCE. The input is the whole file, as the reader maps it.
#include <cstdlib>
#include <cstring>

#include MEMTRACK_ELF_SYMBOLS_SOURCE

// The runtime links libsupc++'s demangler statically; try_demangle, its only user, is not
// called here.
extern "C" int __gcclibcxx_demangle_callback(const char*, void (*)(const char*, size_t, void*),
                                             void*) {
  return -1;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using memtrack::rt::FunctionSymbol;
  // The reader sees files through mmap, page aligned; keep the input's exact size so any
  // read past the end is an AddressSanitizer report.
  void* file = nullptr;
  if (size == 0 || posix_memalign(&file, 4096, size) != 0) return 0;
  memcpy(file, data, size);
  memtrack::rt::ModuleSymbols mod;
  mod.file = static_cast<const char*>(file);
  mod.file_size = size;
  memtrack::core::MmapArray<FunctionSymbol> functions;
  memtrack::rt::load_functions(mod, functions);
  if (mod.functions != nullptr) {
    size_t checked = 0;
    for (const FunctionSymbol& fn : functions) {
      if (++checked > 256) break;
      const char* name = mod.strings + fn.name;
      if (memtrack::core::string_length(name) >= mod.strings_size - fn.name) abort();
      const FunctionSymbol* found = memtrack::rt::find_function(mod, fn.start);
      if (found == nullptr) abort();  // a listed function must be found at its start
    }
  }
  // The lookup by name (the program's option functions) reads the same table in place: a
  // listed function must be found by its name too, and a name absent from any table never.
  const char* names[2] = {"__lsan_default_options", "no such function\x01"};
  if (functions.size() > 0) names[0] = mod.strings + functions[0].name;
  uintptr_t values[2] = {1, 1};
  memtrack::rt::find_functions_named(mod, names, values, 2);
  if (functions.size() > 0 && values[0] == 0 && functions[0].start != 0) abort();
  if (values[1] != 0) abort();
  free(file);
  return 0;
}
