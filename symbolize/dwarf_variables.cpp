// Variables' declarations by address (dwarf_variables.h).
#include "symbolize/dwarf_variables.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

namespace memtrack::symbolize {
namespace {

// Deeper nesting than this is not followed: a corrupt file must not recurse without end.
constexpr int kMaxDepth = 64;

// The DIEs whose children may hold variables with a static address.
bool may_hold_variables(int tag) {
  switch (tag) {
    case DW_TAG_compile_unit:
    case DW_TAG_partial_unit:
    case DW_TAG_namespace:
    case DW_TAG_subprogram:
    case DW_TAG_lexical_block:
    case DW_TAG_inlined_subroutine:
      return true;
    default:
      return false;
  }
}

}  // namespace

void DwarfVariables::index_die(Dwarf_Die* parent, int depth) {
  Dwarf_Die child;
  if (depth > kMaxDepth || dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_variable) {
      Dwarf_Attribute attr;
      Dwarf_Op* ops = nullptr;
      size_t count = 0;
      // A variable with a fixed address: one DW_OP_addr, nothing else (a TLS variable's is
      // an offset followed by DW_OP_form_tls_address, a local's a frame offset).
      if (dwarf_attr(&child, DW_AT_location, &attr) != nullptr &&
          dwarf_getlocation(&attr, &ops, &count) == 0 && count == 1 && ops[0].atom == DW_OP_addr) {
        const char* file = dwarf_decl_file(&child);  // follows DW_AT_specification
        int line = 0;
        if (file != nullptr && dwarf_decl_line(&child, &line) == 0) {
          found_.try_emplace(ops[0].number + bias_, VariableLocation{file, line});
        }
      }
    } else if (may_hold_variables(tag)) {
      index_die(&child, depth + 1);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

VariableLocation DwarfVariables::find(Dwarf_Addr address) {
  auto it = found_.find(address);
  if (it != found_.end()) return it->second;
  while (!finished_) {
    Dwarf_Addr bias = 0;
    Dwarf_Die* cu = dwfl_module_nextcu(module_, next_cu_, &bias);
    if (cu == nullptr) {
      finished_ = true;
      break;
    }
    next_cu_ = cu;
    bias_ = bias;
    index_die(cu, 0);
    it = found_.find(address);
    if (it != found_.end()) return it->second;
  }
  return {};
}

}  // namespace memtrack::symbolize
