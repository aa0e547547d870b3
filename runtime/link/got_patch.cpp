// The GOT rewriting of an attached runtime (got_patch.h). Calls libc (dl_iterate_phdr,
// mprotect) but never malloc: the table of patched entries is a static array.
#include "runtime/link/got_patch.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "core/sys_linux.h"

namespace memtrack::rt {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#elif defined(__arm__)
constexpr uint32_t kJumpSlot = R_ARM_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_ARM_GLOB_DAT;
#else
#error "no GOT relocation types for this architecture"
#endif

#if __SIZEOF_POINTER__ == 8
uint32_t reloc_type(uint64_t info) {
  return static_cast<uint32_t>(ELF64_R_TYPE(info));
}
uint32_t reloc_symbol(uint64_t info) {
  return static_cast<uint32_t>(ELF64_R_SYM(info));
}
#else
uint32_t reloc_type(uint32_t info) {
  return ELF32_R_TYPE(info);
}
uint32_t reloc_symbol(uint32_t info) {
  return ELF32_R_SYM(info);
}
#endif

struct Patch {
  uintptr_t* slot;
  uintptr_t original;
  uintptr_t hook;
};

// Enough for every allocation entry point in a few thousand modules.
constexpr size_t kMaxPatches = 16384;
Patch g_patches[kMaxPatches];
size_t g_patch_count = 0;
bool g_table_full = false;

Patch* find_patch(uintptr_t* slot) {
  for (size_t i = 0; i < g_patch_count; ++i) {
    if (g_patches[i].slot == slot) return &g_patches[i];
  }
  return nullptr;
}

// What one module's dynamic section says about its relocations.
struct DynamicInfo {
  const ElfW(Sym) * symbols = nullptr;
  const char* strings = nullptr;
  size_t strings_size = 0;
  uintptr_t jump_relocs = 0;
  size_t jump_relocs_size = 0;
  bool jump_relocs_rela = true;
  uintptr_t rela = 0;
  size_t rela_size = 0;
  uintptr_t rel = 0;
  size_t rel_size = 0;
};

// glibc stores most dynamic-section addresses relocated, but not everywhere (the vDSO):
// an address below the module's load address is still relative to it.
uintptr_t absolute(uintptr_t base, ElfW(Addr) value) {
  return value < base ? base + value : value;
}

bool read_dynamic(const dl_phdr_info* info, DynamicInfo* out) {
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    }
  }
  if (dynamic == nullptr) return false;
  uintptr_t base = info->dlpi_addr;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        out->symbols = reinterpret_cast<const ElfW(Sym)*>(absolute(base, d->d_un.d_ptr));
        break;
      case DT_STRTAB:
        out->strings = reinterpret_cast<const char*>(absolute(base, d->d_un.d_ptr));
        break;
      case DT_STRSZ:
        out->strings_size = d->d_un.d_val;
        break;
      case DT_JMPREL:
        out->jump_relocs = absolute(base, d->d_un.d_ptr);
        break;
      case DT_PLTRELSZ:
        out->jump_relocs_size = d->d_un.d_val;
        break;
      case DT_PLTREL:
        out->jump_relocs_rela = d->d_un.d_val == DT_RELA;
        break;
      case DT_RELA:
        out->rela = absolute(base, d->d_un.d_ptr);
        break;
      case DT_RELASZ:
        out->rela_size = d->d_un.d_val;
        break;
      case DT_REL:
        out->rel = absolute(base, d->d_un.d_ptr);
        break;
      case DT_RELSZ:
        out->rel_size = d->d_un.d_val;
        break;
      default:
        break;
    }
  }
  return out->symbols != nullptr && out->strings != nullptr;
}

// Calls fn(slot, target) for each GOT entry of the module that refers to a target's symbol.
template <typename Reloc, typename Fn>
void for_each_reloc(const dl_phdr_info* info, const DynamicInfo& dyn, uintptr_t table, size_t size,
                    const GotTarget* targets, size_t count, Fn&& fn) {
  const auto* relocs = reinterpret_cast<const Reloc*>(table);
  for (size_t i = 0; i < size / sizeof(Reloc); ++i) {
    uint32_t type = reloc_type(relocs[i].r_info);
    if (type != kJumpSlot && type != kGlobDat) continue;
    uint32_t symbol = reloc_symbol(relocs[i].r_info);
    if (symbol == 0) continue;
    size_t name_offset = dyn.symbols[symbol].st_name;
    if (dyn.strings_size != 0 && name_offset >= dyn.strings_size) continue;
    const char* name = dyn.strings + name_offset;
    for (size_t t = 0; t < count; ++t) {
      if (strcmp(name, targets[t].symbol) == 0) {
        fn(reinterpret_cast<uintptr_t*>(info->dlpi_addr + relocs[i].r_offset), targets[t]);
        break;
      }
    }
  }
}

template <typename Fn>
void for_each_target_slot(const dl_phdr_info* info, const GotTarget* targets, size_t count,
                          Fn&& fn) {
  DynamicInfo dyn;
  if (!read_dynamic(info, &dyn)) return;
  if (dyn.jump_relocs != 0) {
    if (dyn.jump_relocs_rela) {
      for_each_reloc<ElfW(Rela)>(info, dyn, dyn.jump_relocs, dyn.jump_relocs_size, targets, count,
                                 fn);
    } else {
      for_each_reloc<ElfW(Rel)>(info, dyn, dyn.jump_relocs, dyn.jump_relocs_size, targets, count,
                                fn);
    }
  }
  if (dyn.rela != 0) {
    for_each_reloc<ElfW(Rela)>(info, dyn, dyn.rela, dyn.rela_size, targets, count, fn);
  }
  if (dyn.rel != 0) for_each_reloc<ElfW(Rel)>(info, dyn, dyn.rel, dyn.rel_size, targets, count, fn);
}

// Writes `value` into the slot, through a writable mapping for the write if the slot lies in
// the module's RELRO segment. False if the page could not be made writable.
bool write_slot(const dl_phdr_info* info, uintptr_t* slot, uintptr_t value) {
  auto address = reinterpret_cast<uintptr_t>(slot);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_GNU_RELRO) continue;
    uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (address < start || address >= start + ph.p_memsz) continue;
    const uintptr_t page = core::sys::page_size();
    void* page_start = reinterpret_cast<void*>(address & ~(page - 1));
    if (mprotect(page_start, page, PROT_READ | PROT_WRITE) != 0) return false;
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    mprotect(page_start, page, PROT_READ);
    return true;
  }
  __atomic_store_n(slot, value, __ATOMIC_RELEASE);
  return true;
}

// The dynamic linker makes its allocations through its own pointers to malloc, and the vDSO
// has none: neither is patched.
bool skipped_module(const dl_phdr_info* info, uintptr_t own_address) {
  const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (strstr(name, "/ld-linux") != nullptr || strstr(name, "linux-vdso") != nullptr ||
      strstr(name, "linux-gate") != nullptr) {
    return true;
  }
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (own_address >= start && own_address < start + ph.p_memsz) return true;
  }
  return false;
}

struct PatchWalk {
  const GotTarget* targets;
  size_t count;
  uintptr_t own_address;
};

int patch_module(dl_phdr_info* info, size_t, void* data) {
  const auto* walk = static_cast<const PatchWalk*>(data);
  if (skipped_module(info, walk->own_address)) return 0;
  for_each_target_slot(info, walk->targets, walk->count, [&](uintptr_t* slot, const GotTarget& t) {
    uintptr_t current = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (current == t.hook) return;
    Patch* patch = find_patch(slot);
    if (patch == nullptr) {
      if (g_patch_count == kMaxPatches) {
        g_table_full = true;
        return;
      }
      patch = &g_patches[g_patch_count];
      patch->slot = slot;
    }
    // A slot seen before that no longer holds the hook belongs to a module loaded since
    // at the same address: its current value is the one to restore.
    patch->original = current;
    patch->hook = t.hook;
    if (write_slot(info, slot, t.hook) && patch == &g_patches[g_patch_count]) ++g_patch_count;
  });
  return 0;
}

int restore_module(dl_phdr_info* info, size_t, void*) {
  // Every slot of the table that lies in this module's writable segments and still holds
  // the hook (a module loaded since at the same address has its own value there).
  for (size_t i = 0; i < g_patch_count; ++i) {
    auto address = reinterpret_cast<uintptr_t>(g_patches[i].slot);
    for (int p = 0; p < info->dlpi_phnum; ++p) {
      const ElfW(Phdr)& ph = info->dlpi_phdr[p];
      if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) == 0) continue;
      uintptr_t start = info->dlpi_addr + ph.p_vaddr;
      bool ours = __atomic_load_n(g_patches[i].slot, __ATOMIC_ACQUIRE) == g_patches[i].hook;
      if (ours && address >= start && address < start + ph.p_memsz) {
        write_slot(info, g_patches[i].slot, g_patches[i].original);
      }
    }
  }
  return 0;
}

}  // namespace

long patch_got_entries(const GotTarget* targets, size_t count, uintptr_t own_address) {
  PatchWalk walk{targets, count, own_address};
  dl_iterate_phdr(patch_module, &walk);
  return g_table_full ? -1 : static_cast<long>(g_patch_count);
}

void restore_got_entries() {
  dl_iterate_phdr(restore_module, nullptr);
  g_patch_count = 0;
  g_table_full = false;
}

}  // namespace memtrack::rt
