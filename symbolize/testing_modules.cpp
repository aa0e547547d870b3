// Test-only: RawModule for an object loaded in this process, from dl_iterate_phdr.
#include "symbolize/testing_modules.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace memtrack::symbolize {
namespace {

struct Search {
  const std::function<bool(const std::string&)>* match;
  std::optional<LoadedModule> found;
};

// Appends the GNU build-id from a PT_NOTE segment (notes are 4-aligned on x86-64 and arm64).
void read_build_id(const char* notes, size_t size, std::vector<uint8_t>* out) {
  auto align4 = [](size_t n) { return (n + 3) & ~size_t{3}; };
  size_t pos = 0;
  while (pos + sizeof(ElfW(Nhdr)) <= size) {
    const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(notes + pos);
    size_t name_at = pos + sizeof(ElfW(Nhdr));
    size_t desc_at = name_at + align4(note->n_namesz);
    if (desc_at + note->n_descsz > size) return;
    if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
        std::string_view(notes + name_at, 4) == std::string_view("GNU", 4)) {
      out->assign(notes + desc_at, notes + desc_at + note->n_descsz);
      return;
    }
    pos = desc_at + align4(note->n_descsz);
  }
}

int visit(dl_phdr_info* info, size_t, void* arg) {
  auto* search = static_cast<Search*>(arg);
  const char* name =
      info->dlpi_name != nullptr && info->dlpi_name[0] != '\0' ? info->dlpi_name : "/proc/self/exe";
  std::error_code error;
  std::string path = std::filesystem::canonical(name, error).string();
  if (error || !(*search->match)(path)) return 0;

  LoadedModule loaded;
  loaded.module.path = path;
  loaded.module.load_bias = info->dlpi_addr;
  uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t low = UINT64_MAX, high = 0;
  for (size_t i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uint64_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      low = std::min(low, start & ~(page - 1));
      high = std::max(high, start + ph.p_memsz);
      if (ph.p_flags & PF_X) {
        loaded.text_start = start;
        loaded.text_end = start + ph.p_memsz;
      }
    } else if (ph.p_type == PT_NOTE && loaded.module.build_id.empty()) {
      read_build_id(reinterpret_cast<const char*>(start), ph.p_memsz, &loaded.module.build_id);
    }
  }
  loaded.module.start = low;
  loaded.module.end = high;
  search->found = std::move(loaded);
  return 1;
}

}  // namespace

std::optional<LoadedModule> test_only_find_loaded(
    const std::function<bool(const std::string& path)>& match) {
  Search search{&match, std::nullopt};
  dl_iterate_phdr(visit, &search);
  return search.found;
}

std::optional<LoadedModule> test_only_find_loaded_at(const std::string& path) {
  std::error_code error;
  std::string wanted = std::filesystem::canonical(path, error).string();
  if (error) return std::nullopt;
  return test_only_find_loaded([&](const std::string& p) { return p == wanted; });
}

}  // namespace memtrack::symbolize
