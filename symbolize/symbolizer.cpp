// The symbolizer: module map -> ELF files (one Dwfl each, DWARF loaded on first use) ->
// frames, cached per address. libdw failures become notes; nothing throws out of symbolize().
#include "symbolize/symbolizer.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <unordered_map>
#include <unordered_set>

#include "symbolize/dwarf_frames.h"
#include "symbolize/dwarf_variables.h"
#include "symbolize/local_debuginfo.h"
#include "symbolize/symbol_table.h"

namespace memtrack::symbolize {
namespace {

// Every module is reported with an already open fd, so libdwfl never asks for the main file.
// (dwfl_build_id_find_elf, the usual choice, would fall back to debuginfod.)
int no_find_elf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) {
  return -1;
}

// debuginfo_path nullptr means libdwfl's default ":.debug:/usr/lib/debug".
const Dwfl_Callbacks kCallbacks = {
    .find_elf = no_find_elf,
    .find_debuginfo = find_local_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

// libdwfl's message when a file simply has no DWARF (DWFL_E_NO_DWARF); the error codes are
// not public.
constexpr const char* kNoDwarfMessage = "No DWARF information found";

// One ELF file on disk, opened once and shared by all its mappings (a library
// dlopen'ed again after dlclose, perhaps elsewhere). It is reported to its own Dwfl at bias 0,
// so Dwfl addresses are file addresses (module offsets) whatever each mapping's load bias;
// and one Dwfl per file keeps overlapping mappings (an unloaded library and whatever was
// loaded in its place) from clashing inside libdwfl.
struct ModuleFile {
  explicit ModuleFile(std::string p) : path(std::move(p)) {}
  ~ModuleFile() {
    dwarf.reset();  // all three point into the Dwfl
    variables.reset();
    symbols.reset();
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
  ModuleFile(const ModuleFile&) = delete;
  ModuleFile& operator=(const ModuleFile&) = delete;

  std::string path;
  bool opened = false;
  std::string open_note;  // why it could not be opened, "" if it was (or is the vDSO)
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;  // null if the file could not be opened as ELF
  // Built on first use (symbol_table()): reading and sorting a symbol table (libc's, from
  // its separate debug file) is most of the cost of opening, and a report without stacks
  // (a short program that leaked nothing) needs none.
  std::unique_ptr<SymbolTable> symbols;
  bool dwarf_checked = false;
  std::string dwarf_note;                     // why there are no DWARF frames, "" if there are
  std::unique_ptr<DwarfFrames> dwarf;         // null without (readable) debug info
  std::unique_ptr<DwarfVariables> variables;  // made on the first variable_location()
  // Frames by file address (is_return_address already applied), without the fields that
  // depend on the mapping (address, module, module_offset).
  std::unordered_map<uint64_t, std::vector<Frame>> frames;

  // Only for a file that was opened as ELF (module non-null).
  SymbolTable& symbol_table() {
    if (!symbols) symbols = std::make_unique<SymbolTable>(module);
    return *symbols;
  }
};

// Every Symbolizer of the process shares the files: the CLI symbolizes many processes of
// one program (each with its own module map, its own load addresses), and each would
// otherwise load the same libc and libstdc++ debug info again (tens of milliseconds each).
// Not thread safe, like Symbolizer.
std::shared_ptr<ModuleFile> shared_module_file(const std::string& path) {
  static std::unordered_map<std::string, std::shared_ptr<ModuleFile>> files;
  std::shared_ptr<ModuleFile>& file = files[path];
  if (!file) file = std::make_shared<ModuleFile>(path);
  return file;
}

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t load_bias = 0;
  std::vector<uint8_t> build_id;  // as recorded at run time
  ModuleFile* file = nullptr;
};

// The mapping in `maps` (sorted by start, not overlapping) that contains address, or null.
Mapping* find_in(std::vector<Mapping>& maps, uint64_t address) {
  auto it = std::upper_bound(maps.begin(), maps.end(), address,
                             [](uint64_t addr, const Mapping& m) { return addr < m.start; });
  if (it == maps.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

// The vDSO is in the module map by name ("linux-vdso.so.1") but has no file: no note for it.
bool is_vdso(const std::string& path) {
  return path.find('/') == std::string::npos &&
         (path.starts_with("linux-vdso") || path.starts_with("linux-gate"));
}

}  // namespace

struct Symbolizer::Impl {
  std::vector<std::shared_ptr<ModuleFile>> files;
  // Loaded and unloaded mappings apart: a dlclose'd library's range may since have been
  // reused, and an address there is attributed to what was mapped at exit.
  std::vector<Mapping> loaded;
  std::vector<Mapping> unloaded;
  std::unordered_map<uint64_t, std::vector<Frame>> cache[2];  // [is_return_address]
  std::vector<std::string> notes;
  std::unordered_set<std::string> noted;

  void note(std::string text) {
    if (noted.insert(text).second) notes.push_back(std::move(text));
  }
  Mapping* find_mapping(uint64_t address) {
    Mapping* m = find_in(loaded, address);
    return m != nullptr ? m : find_in(unloaded, address);
  }
  void open_file(ModuleFile& file);
  void check_build_id(const Mapping& mapping);
  void check_dwarf(ModuleFile& file);
  void module_frames(ModuleFile& file, Dwarf_Addr pc, std::vector<Frame>* out);
  std::vector<Frame> lookup(uint64_t address, bool is_return_address);
};

void Symbolizer::Impl::open_file(ModuleFile& file) {
  if (file.opened) {
    if (!file.open_note.empty()) note(file.open_note);
    return;
  }
  file.opened = true;
  auto fail = [&](const std::string& why) {
    if (is_vdso(file.path)) return;
    file.open_note =
        "cannot open " + file.path + ": " + why + "; its frames show module+offset only";
    note(file.open_note);
  };
  // O_NONBLOCK: a path that is now a FIFO must not hang us; fstat then rejects it.
  int fd = open(file.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return fail("not a regular file");
  }
  file.dwfl = dwfl_begin(&kCallbacks);
  if (file.dwfl == nullptr) {
    close(fd);
    return fail(dwfl_errmsg(-1));
  }
  dwfl_report_begin(file.dwfl);
  // Base 0 with add_p_vaddr: bias 0 for ET_DYN; ET_EXEC ignores the base (bias 0 anyway).
  // On success libdwfl owns fd; on failure it is still ours.
  file.module = dwfl_report_elf(file.dwfl, file.path.c_str(), file.path.c_str(), fd, 0, true);
  if (file.module == nullptr) {
    std::string why = dwfl_errmsg(-1);
    close(fd);
    fail(why);
  }
  dwfl_report_end(file.dwfl, nullptr, nullptr);
}

void Symbolizer::Impl::check_build_id(const Mapping& mapping) {
  if (mapping.build_id.empty() || mapping.file->module == nullptr) return;
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  int len = dwfl_module_build_id(mapping.file->module, &bits, &vaddr);
  if (len > 0 && static_cast<size_t>(len) == mapping.build_id.size() &&
      std::equal(mapping.build_id.begin(), mapping.build_id.end(), bits)) {
    return;
  }
  note(mapping.file->path + " changed since the run (build-id differs); frames may be wrong");
}

void Symbolizer::Impl::check_dwarf(ModuleFile& file) {
  file.dwarf_checked = true;
  Dwarf_Addr bias = 0;
  if (dwfl_module_getdwarf(file.module, &bias) != nullptr) {
    file.dwarf = std::make_unique<DwarfFrames>(file.module, &file.symbol_table());
    return;
  }
  std::string why = dwfl_errmsg(-1);
  // Without symbols either (stripped), its frames are "??" and an address.
  std::string shown = file.symbol_table().empty()
                          ? "no symbols either (stripped): its frames show addresses only"
                          : "its frames show function names only";
  if (why == kNoDwarfMessage) {
    file.dwarf_note = "no debug info for " + file.path + ": " + shown;
  } else {
    file.dwarf_note = "cannot read debug info for " + file.path + ": " + why + "; " + shown;
  }
}

void Symbolizer::Impl::module_frames(ModuleFile& file, Dwarf_Addr pc, std::vector<Frame>* out) {
  if (!file.dwarf_checked) check_dwarf(file);
  if (!file.dwarf_note.empty()) note(file.dwarf_note);
  auto [it, inserted] = file.frames.try_emplace(pc);
  if (inserted) {
    std::vector<Frame>& frames = it->second;
    if (file.dwarf == nullptr || !file.dwarf->append_frames(pc, &frames)) frames.emplace_back();
    if (frames.back().function.empty()) {
      const char* symbol = file.symbol_table().name_at(pc);
      if (symbol != nullptr) frames.back().function = demangle(symbol);
    }
  }
  out->insert(out->end(), it->second.begin(), it->second.end());
}

std::vector<Frame> Symbolizer::Impl::lookup(uint64_t address, bool is_return_address) {
  std::vector<Frame> frames;
  Mapping* mapping = find_mapping(address);
  uint64_t offset = 0;
  if (mapping != nullptr) {
    ModuleFile& file = *mapping->file;
    offset = address - mapping->load_bias;  // wraps harmlessly on a nonsensical bias
    // A return address is the instruction after the call, which may belong to the next
    // line or even the next function (a call to a noreturn function ends its function).
    // address - 1 lies inside the call instruction: its line and inline chain are the call's.
    Dwarf_Addr pc = is_return_address ? offset - 1 : offset;
    if (file.module != nullptr) module_frames(file, pc, &frames);
  }
  if (frames.empty()) frames.emplace_back();
  for (Frame& frame : frames) {
    frame.address = address;
    if (mapping != nullptr) {
      frame.module = mapping->file->path;
      frame.module_offset = offset;
    }
  }
  return frames;
}

Symbolizer::Symbolizer(const std::vector<RawModule>& modules) : impl_(std::make_unique<Impl>()) {
  std::unordered_map<std::string, ModuleFile*> by_path;
  for (const RawModule& raw : modules) {
    ModuleFile*& file = by_path[raw.path];
    if (file == nullptr) file = impl_->files.emplace_back(shared_module_file(raw.path)).get();
    Mapping mapping{raw.start, raw.end, raw.load_bias, raw.build_id, file};
    (raw.unloaded ? impl_->unloaded : impl_->loaded).push_back(std::move(mapping));
  }
  // Opening is cheap (ELF header, program headers, build-id note) and gives the notes about
  // missing and changed files up front; the symbol table and DWARF are loaded only when an
  // address needs them.
  for (const std::shared_ptr<ModuleFile>& file : impl_->files) impl_->open_file(*file);
  for (std::vector<Mapping>* maps : {&impl_->loaded, &impl_->unloaded}) {
    for (const Mapping& mapping : *maps) impl_->check_build_id(mapping);
    std::stable_sort(maps->begin(), maps->end(),
                     [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
  }
}

Symbolizer::~Symbolizer() = default;

const std::vector<Frame>& Symbolizer::symbolize(uint64_t address, bool is_return_address) {
  auto [it, inserted] = impl_->cache[is_return_address ? 1 : 0].try_emplace(address);
  if (inserted) {
    try {
      it->second = impl_->lookup(address, is_return_address);
    } catch (const std::exception& e) {
      // Out of memory in the middle of a lookup, say: an unknown frame beats a lost report.
      Frame unknown;
      unknown.address = address;
      it->second.assign(1, unknown);
      impl_->note(std::string("symbolizing failed: ") + e.what());
    }
  }
  return it->second;
}

VariableLocation Symbolizer::variable_location(uint64_t address) {
  Mapping* mapping = impl_->find_mapping(address);
  if (mapping == nullptr || mapping->file->module == nullptr) return {};
  ModuleFile& file = *mapping->file;
  if (!file.dwarf_checked) impl_->check_dwarf(file);
  if (file.dwarf == nullptr) return {};
  if (!file.variables) file.variables = std::make_unique<DwarfVariables>(file.module);
  try {
    return file.variables->find(address - mapping->load_bias);
  } catch (const std::exception& e) {
    impl_->note(std::string("finding a variable's declaration failed: ") + e.what());
    return {};
  }
}

const std::vector<std::string>& Symbolizer::notes() const {
  return impl_->notes;
}

}  // namespace memtrack::symbolize
