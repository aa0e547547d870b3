// Sorted function symbols of one module (see symbol_table.h for why not dwfl_module_addrinfo).
#include "symbolize/symbol_table.h"

#include <gelf.h>

#include <algorithm>

namespace memtrack::symbolize {
namespace {

constexpr Dwarf_Addr kNoEnd = ~Dwarf_Addr{0};

// Preference among aliases of one address, lowest first: the names the program can call
// (global or weak) before local ones (glibc's __GI_ aliases), then the fewest leading
// underscores (strdup before __strdup, the name valgrind prints and suppressions use), then
// global before weak.
int alias_rank(unsigned char info, const char* name) {
  int bind = GELF_ST_BIND(info);
  int local = bind == STB_GLOBAL || bind == STB_WEAK ? 0 : 1;
  int underscores = 0;
  while (name[underscores] == '_' && underscores < 8) ++underscores;
  return local * 100 + underscores * 2 + (bind == STB_WEAK ? 1 : 0);
}

// Where the section holding a sizeless symbol ends, as a module-relative address.
Dwarf_Addr section_end(Elf* elf, GElf_Word shndx, Dwarf_Addr bias) {
  GElf_Shdr shdr_mem;
  GElf_Shdr* shdr = elf != nullptr ? gelf_getshdr(elf_getscn(elf, shndx), &shdr_mem) : nullptr;
  if (shdr == nullptr || shdr->sh_addr + shdr->sh_size < shdr->sh_addr) return kNoEnd;
  return shdr->sh_addr + shdr->sh_size + bias;
}

template <typename Symbol>
auto last_starting_at_or_before(const std::vector<Symbol>& symbols, Dwarf_Addr pc) {
  return std::upper_bound(symbols.begin(), symbols.end(), pc,
                          [](Dwarf_Addr addr, const Symbol& s) { return addr < s.start; });
}

}  // namespace

SymbolTable::SymbolTable(Dwfl_Module* module) {
  int count = dwfl_module_getsymtab(module);
  for (int i = 1; i < count; ++i) {  // 0 is the null symbol
    GElf_Sym sym;
    GElf_Addr addr = 0;
    GElf_Word shndx = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* name = dwfl_module_getsym_info(module, i, &sym, &addr, &shndx, &elf, &bias);
    int type = GELF_ST_TYPE(sym.st_info);
    if (name == nullptr || name[0] == '\0' || shndx == SHN_UNDEF) continue;
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
    int rank = alias_rank(sym.st_info, name);
    if (sym.st_size == 0) {
      sizeless_.push_back({addr, section_end(elf, shndx, bias), name, rank});
    } else {
      // Saturate rather than wrap on a hostile size.
      Dwarf_Addr end = addr + sym.st_size < addr ? kNoEnd : addr + sym.st_size;
      sized_.push_back({addr, end, name, rank});
    }
  }
  sort_and_merge_aliases(&sized_);
  sort_and_merge_aliases(&sizeless_);
}

void SymbolTable::sort_and_merge_aliases(std::vector<Symbol>* symbols) {
  std::stable_sort(symbols->begin(), symbols->end(), [](const Symbol& a, const Symbol& b) {
    return a.start != b.start ? a.start < b.start : a.rank < b.rank;
  });
  // One entry per address: the preferred alias, covering the largest size any alias has.
  std::vector<Symbol> merged;
  for (const Symbol& symbol : *symbols) {
    if (!merged.empty() && merged.back().start == symbol.start) {
      merged.back().end = std::max(merged.back().end, symbol.end);
    } else {
      merged.push_back(symbol);
    }
  }
  *symbols = std::move(merged);
}

const char* SymbolTable::name_at(Dwarf_Addr pc) const {
  // The containing symbol with the highest start; a few steps back allow for a function that
  // lies inside a larger one (hand-written assembly).
  constexpr int kLookBack = 4;
  auto it = last_starting_at_or_before(sized_, pc);
  for (int i = 0; i < kLookBack && it != sized_.begin(); ++i) {
    --it;
    if (pc < it->end) return it->name;
  }
  // A sizeless symbol reaches to the next symbol of either kind.
  auto label = last_starting_at_or_before(sizeless_, pc);
  if (label == sizeless_.begin()) return nullptr;
  --label;
  if (pc >= label->end) return nullptr;
  auto next_sized = last_starting_at_or_before(sized_, label->start);
  if (next_sized != sized_.end() && next_sized->start <= pc) return nullptr;
  return label->name;
}

}  // namespace memtrack::symbolize
