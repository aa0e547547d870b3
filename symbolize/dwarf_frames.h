// The DWARF half of the symbolizer: for a pc in one module, the function that contains it, the
// inlined calls around it and their call sites. Reads untrusted DWARF through libdw; never
// throws on bad input (only std::bad_alloc), degrading to fewer or emptier frames.
#pragma once

#include <elfutils/libdwfl.h>

#include <unordered_map>
#include <vector>

#include "symbolize/frame.h"
#include "symbolize/symbol_table.h"

namespace memtrack::symbolize {

// One per Dwfl_Module that has DWARF. Not thread safe.
//
// Why not dwarf_getscopes: once it reaches a DW_TAG_inlined_subroutine it continues with the
// scopes around the *abstract origin* (the inline function's own definition), not with the
// function the code was inlined into, so the callers of an inlined call are lost. Here the
// chain is walked in the concrete DIE tree instead:
//
//   DW_TAG_subprogram outer            -> frame 2: "outer", at B's call site (not inlined)
//     DW_TAG_lexical_block                (skipped: scopes, not calls)
//       DW_TAG_inlined_subroutine B    -> frame 1: B's origin name, at A's call site
//         DW_TAG_inlined_subroutine A  -> frame 0: A's origin name, at the line-table row
//
// To find `outer` quickly, the concrete functions of each compile unit are indexed by address
// range on the first lookup in that unit (one walk through its namespaces, classes and
// function bodies, not entering inlined calls); a lookup then descends only through the DIEs
// of the one function.
//
// Names: the demangled DW_AT_linkage_name (qualified, with parameter types); for the concrete
// function, when the DWARF has none (GCC omits it for some members of class templates), the
// demangled ELF symbol if it is a C++ one; else DW_AT_name.
class DwarfFrames {
 public:
  // Both must outlive this object.
  DwarfFrames(Dwfl_Module* module, const SymbolTable* symbols)
      : module_(module), symbols_(symbols) {}

  // Appends the frames for `pc` (a module-relative address, as Dwfl addresses are here)
  // innermost first, filling function, file, line, column and inlined; the caller fills
  // address and module. The outermost frame's function is "" when no DW_TAG_subprogram
  // covers pc (assembly, partial DWARF): the caller takes it from the symbol table. Returns
  // false, appending nothing, when no compile unit covers pc.
  bool append_frames(Dwarf_Addr pc, std::vector<Frame>* out);

 private:
  struct FunctionRange {
    Dwarf_Addr low = 0;
    Dwarf_Addr high = 0;  // exclusive
    Dwarf_Die die{};
  };
  const std::vector<FunctionRange>& functions_of(Dwarf_Die* cu);
  static const FunctionRange* innermost_function(const std::vector<FunctionRange>& functions,
                                                 Dwarf_Addr pc);

  Dwfl_Module* module_;
  const SymbolTable* symbols_;
  // Keyed by the CU DIE's position in the mapped .debug_info (unique across the main, alt and
  // split files, unlike DIE offsets). Sorted by `low`.
  std::unordered_map<const void*, std::vector<FunctionRange>> cu_functions_;
};

}  // namespace memtrack::symbolize
