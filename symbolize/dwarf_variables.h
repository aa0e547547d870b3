// Where a variable is defined: for a data address in one module, the DW_TAG_variable whose
// location is that address (DW_OP_addr), with its declaration's file and line. Names the
// roots of the retention report ("global g_sessions (server.cpp:12)"). Reads untrusted DWARF
// through libdw; never throws on bad input (only std::bad_alloc).
#pragma once

#include <elfutils/libdwfl.h>

#include <unordered_map>

#include "symbolize/frame.h"

namespace memtrack::symbolize {

// One per Dwfl_Module that has DWARF. Not thread safe.
//
// Data addresses are in no compile unit's address ranges, so the units are read in order
// until the address is found: the variables of each unit read are indexed on the way
// (namespace scope, and the static locals of functions and their blocks; types and
// declarations are not entered), so a later lookup resumes where the last stopped, and
// every unit is read at most once.
class DwarfVariables {
 public:
  explicit DwarfVariables(Dwfl_Module* module) : module_(module) {}

  // The variable at `address` (a module-relative address, as Dwfl addresses are here);
  // file "" when no variable's location is that address.
  VariableLocation find(Dwarf_Addr address);

 private:
  void index_die(Dwarf_Die* die, int depth);

  Dwfl_Module* module_;
  Dwarf_Addr bias_ = 0;
  Dwarf_Die* next_cu_ = nullptr;  // dwfl_module_nextcu's cursor; null before the first
  bool finished_ = false;
  std::unordered_map<Dwarf_Addr, VariableLocation> found_;
};

}  // namespace memtrack::symbolize
