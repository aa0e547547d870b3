// In-process function names for the standalone report, from the ELF symbol table (.symtab,
// else .dynsym) of each module's file, so static and hidden functions are named too.
// Runtime-safe: files are mapped read-only with mmap; no malloc. Not thread safe: used only
// while the report is written.
#pragma once

#include <cstdint>

namespace memtrack::rt {

struct SymbolInfo {
  const char* module = nullptr;    // path of the module ("" never: the main program's path)
  uintptr_t module_offset = 0;     // pc relative to the module's load bias
  const char* function = nullptr;  // mangled name, or nullptr if unknown
  uintptr_t function_offset = 0;   // pc - function start
};

// Describes the code address `pc`. Pass is_return_address for recorded stack frames (all are
// return addresses), so the lookup uses pc - 1, which lies inside the call instruction.
SymbolInfo describe_address(uintptr_t pc, bool is_return_address);

// The variable (a defined object symbol of .symtab, else .dynsym) whose bytes hold the data
// address `address`, in the module whose mapping holds it.
struct DataSymbolInfo {
  const char* module = nullptr;  // path of the module, or nullptr outside every module
  uintptr_t module_offset = 0;   // address relative to the module's load bias
  const char* name = nullptr;    // mangled name, or nullptr (no symbol covers it)
  uintptr_t start = 0;           // the symbol's run-time address
  uint64_t size = 0;
};
DataSymbolInfo describe_data_address(uintptr_t address);

// The run-time address of the function `name` in the main program's symbol table (.symtab,
// else .dynsym), or 0. Used to find memtrack_default_options() without -rdynamic. The names
// of LeakSanitizer's and memtrack's option functions are looked up together on the first
// call and kept.
uintptr_t find_main_program_function(const char* name);

// Writes the demangled form of `name` into `out` (capacity `size`, cut to fit) when `name` is
// a C++ symbol. Returns false otherwise. Never allocates: the demangler is libsupc++'s, in
// its callback form, linked into the runtime.
bool try_demangle(const char* name, char* out, uint64_t size);

}  // namespace memtrack::rt
