// ELF symbol names by address for one module, sorted once so each lookup is a binary search.
// Reads untrusted symbol tables through libdwfl; never throws on bad input.
#pragma once

#include <elfutils/libdwfl.h>

#include <vector>

namespace memtrack::symbolize {

// Why not dwfl_module_addrinfo: in elfutils 0.188 it walks the whole symbol table (gelf_getsym
// and gelf_getshdr per symbol) on every call, which made symbol-table-only lookups in libc cost
// ~100 us each. Not thread safe (libdwfl underneath is not).
class SymbolTable {
 public:
  // Reads the function symbols of `module` (.symtab, else .dynsym, plus the .gnu_debugdata
  // mini debuginfo when present: whatever libdwfl merges). `module` must outlive this object,
  // which keeps pointers into its string tables.
  explicit SymbolTable(Dwfl_Module* module);

  // The raw (mangled) name of the function containing pc, a module-relative (Dwfl) address,
  // or nullptr. As in libdwfl: a symbol whose [value, value + size) contains pc (among aliases
  // the global one, then the first in the table); failing that, the closest sizeless symbol
  // before pc (crt and assembly code), up to the next symbol or the end of its section.
  const char* name_at(Dwarf_Addr pc) const;

  // No function symbols at all (a stripped executable): frames get no names.
  bool empty() const { return sized_.empty() && sizeless_.empty(); }

 private:
  struct Symbol {
    Dwarf_Addr start = 0;
    Dwarf_Addr end = 0;  // exclusive
    const char* name = nullptr;
    int rank = 0;  // preference among aliases (alias_rank), lowest first
  };
  static void sort_and_merge_aliases(std::vector<Symbol>* symbols);

  std::vector<Symbol> sized_;     // sorted by start, one per start
  std::vector<Symbol> sizeless_;  // likewise; `end` is where the section ends
};

}  // namespace memtrack::symbolize
