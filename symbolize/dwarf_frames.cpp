// Walks the concrete DIE tree around a pc (see dwarf_frames.h for why not dwarf_getscopes).
// Hostile DWARF: recursion is bounded by kMaxDepth and sibling walks must move forward, so a
// loop or a cycle in the DIE tree ends the walk instead of hanging it.
#include "symbolize/dwarf_frames.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "symbolize/symbolizer.h"

namespace memtrack::symbolize {
namespace {

constexpr int kMaxDepth = 64;

struct Location {
  std::string file;
  int line = 0;
  int column = 0;
};

int clamp_to_int(Dwarf_Word value) {
  return value > static_cast<Dwarf_Word>(INT_MAX) ? INT_MAX : static_cast<int>(value);
}

// The next sibling of *die, in place. False at the end of the list, on error, and when a
// (malformed) DW_AT_sibling would send the walk backwards.
bool next_sibling(Dwarf_Die* die) {
  Dwarf_Die next;
  if (dwarf_siblingof(die, &next) != 0) return false;
  if (reinterpret_cast<uintptr_t>(next.addr) <= reinterpret_cast<uintptr_t>(die->addr)) {
    return false;
  }
  *die = next;
  return true;
}

// Relative names are joined to the compilation directory and "."/".." folded, so one source
// file reads the same whether it came from the line table or from a call site.
std::string source_path(const char* name, const char* comp_dir) {
  if (name == nullptr || name[0] == '\0') return "";
  std::filesystem::path path(name);
  if (path.is_relative() && comp_dir != nullptr && comp_dir[0] != '\0') {
    path = std::filesystem::path(comp_dir) / path;
  }
  return path.lexically_normal().string();
}

Location line_table_location(Dwfl_Module* module, Dwarf_Addr pc) {
  Location loc;
  Dwfl_Line* line = dwfl_module_getsrc(module, pc);
  if (line == nullptr) return loc;
  Dwarf_Addr line_addr = 0;
  const char* file = dwfl_lineinfo(line, &line_addr, &loc.line, &loc.column, nullptr, nullptr);
  loc.file = source_path(file, dwfl_line_comp_dir(line));
  loc.line = std::max(loc.line, 0);
  loc.column = std::max(loc.column, 0);
  return loc;
}

// Where the inlined call `inlined` was made: its DW_AT_call_file/line/column (on the concrete
// DIE itself, never integrated from the abstract origin).
Location call_site(Dwarf_Die* inlined) {
  Location loc;
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &value) == 0) {
    loc.line = clamp_to_int(value);
  }
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_column, &attr), &value) == 0) {
    loc.column = clamp_to_int(value);
  }
  Dwarf_Die cu_mem;
  Dwarf_Die* cu = dwarf_diecu(inlined, &cu_mem, nullptr, nullptr);
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (cu != nullptr && dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &value) == 0 &&
      dwarf_getsrcfiles(cu, &files, &count) == 0 && value < count) {
    const char* comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
    loc.file = source_path(dwarf_filesrc(files, value, nullptr, nullptr), comp_dir);
  }
  return loc;
}

// dwarf_attr_integrate follows DW_AT_abstract_origin (an inlined call, or an out-of-line copy
// of an inline function) and DW_AT_specification (a member defined outside its class) to the
// DIE that holds the names.
const char* raw_linkage_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (unsigned int name_attr : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    const char* linkage = dwarf_formstring(dwarf_attr_integrate(die, name_attr, &attr));
    if (linkage != nullptr) return linkage;
  }
  return nullptr;
}

std::string plain_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  const char* name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
  return name != nullptr ? name : "";
}

// Collects the concrete functions below `parent`: those at the top of a unit, in namespaces
// and classes, and those nested in other functions (lambda bodies sit inside the closure
// class inside the enclosing function; GNU C nested functions inside theirs). Inlined calls,
// parameters and variables are not entered: they hold no function definitions.
void index_functions(Dwarf_Die* parent, int depth, std::vector<Dwarf_Die>* functions) {
  Dwarf_Die child;
  if (depth > kMaxDepth || dwarf_child(parent, &child) != 0) return;
  do {
    switch (dwarf_tag(&child)) {
      case DW_TAG_subprogram:
        functions->push_back(child);
        [[fallthrough]];
      case DW_TAG_namespace:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
      case DW_TAG_union_type:
      case DW_TAG_module:
      case DW_TAG_lexical_block:
        if (dwarf_haschildren(&child) == 1) index_functions(&child, depth + 1, functions);
        break;
      default:
        break;
    }
  } while (next_sibling(&child));
}

// Appends the DIEs below `scope` whose ranges contain pc, outermost first. Lexical blocks are
// entered (inlined calls sit inside them) and kept out of the chain.
void descend(Dwarf_Die* scope, Dwarf_Addr pc, int depth, std::vector<Dwarf_Die>* chain) {
  Dwarf_Die child;
  if (depth > kMaxDepth || dwarf_child(scope, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    bool is_call = tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram;
    if ((is_call || tag == DW_TAG_lexical_block) && dwarf_haspc(&child, pc) == 1) {
      if (is_call) chain->push_back(child);
      descend(&child, pc, depth + 1, chain);
      return;
    }
  } while (next_sibling(&child));
}

}  // namespace

// The function range containing pc with the highest start: the innermost one when a nested
// function's code lies inside its parent's range. Ranges do not otherwise overlap, so looking
// a few entries back from the last start <= pc suffices.
const DwarfFrames::FunctionRange* DwarfFrames::innermost_function(
    const std::vector<FunctionRange>& functions, Dwarf_Addr pc) {
  constexpr int kLookBack = 8;
  auto it = std::upper_bound(functions.begin(), functions.end(), pc,
                             [](Dwarf_Addr addr, const FunctionRange& f) { return addr < f.low; });
  for (int i = 0; i < kLookBack && it != functions.begin(); ++i) {
    --it;
    if (pc < it->high) return &*it;
  }
  return nullptr;
}

const std::vector<DwarfFrames::FunctionRange>& DwarfFrames::functions_of(Dwarf_Die* cu) {
  auto [it, inserted] = cu_functions_.try_emplace(cu->addr);
  if (!inserted) return it->second;
  std::vector<Dwarf_Die> dies;
  index_functions(cu, 0, &dies);
  std::vector<FunctionRange>& ranges = it->second;
  for (Dwarf_Die& die : dies) {
    // A declaration or an abstract instance has no ranges; a function split into hot and
    // .cold parts has several.
    Dwarf_Addr base = 0, low = 0, high = 0;
    for (ptrdiff_t off = 0; (off = dwarf_ranges(&die, off, &base, &low, &high)) > 0;) {
      if (low < high) ranges.push_back({low, high, die});
    }
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const FunctionRange& a, const FunctionRange& b) { return a.low < b.low; });
  return ranges;
}

bool DwarfFrames::append_frames(Dwarf_Addr pc, std::vector<Frame>* out) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu_die = dwfl_module_addrdie(module_, pc, &bias);
  if (cu_die == nullptr) return false;
  Dwarf_Die cu = *cu_die;
  Dwarf_Addr die_pc = pc - bias;

  // Outermost first: the function, then the inlined calls nested in it.
  std::vector<Dwarf_Die> chain;
  const std::vector<FunctionRange>& functions = functions_of(&cu);
  if (const FunctionRange* function = innermost_function(functions, die_pc)) {
    Dwarf_Die die = function->die;
    chain.push_back(die);
    descend(&die, die_pc, 0, &chain);
  }

  // The innermost frame is where the line table puts pc; each frame further out is where
  // the call below it was inlined.
  Location loc = line_table_location(module_, pc);
  for (auto scope = chain.rbegin(); scope != chain.rend(); ++scope) {
    bool inlined = dwarf_tag(&*scope) == DW_TAG_inlined_subroutine;
    Frame& frame = out->emplace_back();
    const char* linkage = raw_linkage_name(&*scope);
    if (linkage != nullptr && !inlined && !std::string_view(linkage).starts_with("_Z")) {
      // A C function renamed in assembly: glibc's internal alias (__GI___strdup) of what
      // programs call (strdup). The symbol table's preferred alias is that name.
      const char* symbol = symbols_->name_at(pc);
      frame.function = symbol != nullptr ? symbol : plain_name(&*scope);
    } else if (linkage != nullptr) {
      frame.function = demangle(linkage);
    }
    if (frame.function.empty() && !inlined) {
      // A C++ symbol adds the qualification DW_AT_name lacks; a C clone's ("f.part.0") would
      // only add noise.
      const char* symbol = symbols_->name_at(pc);
      if (symbol != nullptr && std::string_view(symbol).starts_with("_Z")) {
        frame.function = demangle(symbol);
      }
    }
    if (frame.function.empty()) frame.function = plain_name(&*scope);
    frame.file = std::move(loc.file);
    frame.line = loc.line;
    frame.column = loc.column;
    frame.inlined = inlined;
    if (!inlined) return true;  // reached the concrete (possibly nested) function
    loc = call_site(&*scope);
  }
  // No function DIE covers pc, or only inlined calls without their function (corrupt): one
  // more frame, named by the caller from the symbol table.
  Frame& frame = out->emplace_back();
  frame.file = std::move(loc.file);
  frame.line = loc.line;
  frame.column = loc.column;
  return true;
}

}  // namespace memtrack::symbolize
