// Module map capture with dl_iterate_phdr, and the dlclose hook that remembers a module
// before it may be unmapped. Calls libc (dl_iterate_phdr, dlinfo) but never malloc.
#include "runtime/output/modules.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <atomic>

#include "core/result_format.h"
#include "core/spin_lock.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/output/process_info.h"
#include "runtime/runtime.h"
#include "runtime/unwind/fast_unwind.h"

namespace memtrack::rt {
namespace {

core::SpinLock g_unloaded_lock;
core::MmapArray<ModuleRecord> g_unloaded;  // guarded by g_unloaded_lock
std::atomic<int> g_walker{0};              // the thread walking the loader's list; 0: none

// Takes the walk for the calling thread; false if it already has it (a signal handler
// interrupted its walk).
bool take_walk() {
  int me = core::sys::current_tid();
  if (g_walker.load(std::memory_order_acquire) == me) return false;
  int none = 0;
  while (!g_walker.compare_exchange_weak(none, me, std::memory_order_acquire)) {
    none = 0;
    core::sys::yield_cpu();
  }
  return true;
}

void copy_path(ModuleRecord& rec, const char* path) {
  size_t n = core::string_length(path);
  if (n >= sizeof(rec.path)) n = sizeof(rec.path) - 1;
  core::copy_bytes(rec.path, path, n);
  rec.path[n] = '\0';
}

// The GNU build-id note, read from the mapped PT_NOTE segments.
void read_build_id(const dl_phdr_info& info, ModuleRecord& rec) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto p = static_cast<uintptr_t>(info.dlpi_addr + ph.p_vaddr);
    uintptr_t end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      uintptr_t name = p + sizeof(ElfW(Nhdr));
      uintptr_t desc = name + ((note->n_namesz + 3) & ~3u);
      uintptr_t next = desc + ((note->n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          core::strings_equal(reinterpret_cast<const char*>(name), 3, "GNU") &&
          note->n_descsz <= sizeof(rec.build_id)) {
        rec.build_id_size = static_cast<uint16_t>(note->n_descsz);
        core::copy_bytes(rec.build_id, reinterpret_cast<const void*>(desc), note->n_descsz);
        return;
      }
      p = next;
    }
  }
}

void fill_record(const dl_phdr_info& info, ModuleRecord& rec) {
  rec = ModuleRecord{};
  rec.load_bias = info.dlpi_addr;
  uint64_t lo = UINT64_MAX;
  uint64_t hi = 0;
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    if (ph.p_vaddr < lo) lo = ph.p_vaddr;
    if (ph.p_vaddr + ph.p_memsz > hi) hi = ph.p_vaddr + ph.p_memsz;
  }
  rec.start = lo == UINT64_MAX ? 0 : info.dlpi_addr + lo;
  rec.end = info.dlpi_addr + hi;
  // The main program has an empty name; the vDSO has a name but no file.
  const char* name = info.dlpi_name;
  copy_path(rec, name == nullptr || name[0] == '\0' ? executable_path() : name);
  read_build_id(info, rec);
}

struct CollectState {
  core::MmapArray<ModuleRecord>* out;
  bool ok;
};

int collect_one(dl_phdr_info* info, size_t, void* arg) {
  auto* state = static_cast<CollectState*>(arg);
  ModuleRecord rec;
  fill_record(*info, rec);
  if (rec.end > rec.start && !state->out->try_push_back(rec)) state->ok = false;
  return 0;
}

struct FindState {
  uintptr_t load_bias;
  const char* name;
  ModuleRecord* rec;
  bool found;
};

int find_one(dl_phdr_info* info, size_t, void* arg) {
  auto* state = static_cast<FindState*>(arg);
  const char* name = info->dlpi_name == nullptr ? "" : info->dlpi_name;
  if (info->dlpi_addr != state->load_bias ||
      !core::strings_equal(name, core::string_length(name), state->name)) {
    return 0;
  }
  fill_record(*info, *state->rec);
  state->found = true;
  return 1;
}

bool same_module(const ModuleRecord& a, const ModuleRecord& b) {
  return a.load_bias == b.load_bias && a.start == b.start &&
         core::strings_equal(a.path, core::string_length(a.path), b.path);
}

}  // namespace

int walk_loaded_objects(int (*callback)(dl_phdr_info*, size_t, void*), void* arg) {
  bool taken = take_walk();
  int result = dl_iterate_phdr(callback, arg);
  if (taken) g_walker.store(0, std::memory_order_release);
  return result;
}

// The unloaded modules' lock too: a thread in the dlclose hook holds it while it copies a
// record, and a child forked then would wait for it forever at its first report. Neither
// holder takes the other lock inside it, so this order is free.
void loader_walk_fork_prepare() {
  take_walk();
  g_unloaded_lock.lock();
}

void loader_walk_fork_parent() {
  g_unloaded_lock.unlock();
  g_walker.store(0, std::memory_order_release);
}

void loader_walk_fork_child() {
  g_unloaded_lock.unlock();
  g_walker.store(0, std::memory_order_release);
}

void remember_before_dlclose(void* handle) {
  link_map* map = nullptr;
  if (handle == nullptr || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return;
  ModuleRecord rec;
  FindState state{map->l_addr, map->l_name == nullptr ? "" : map->l_name, &rec, false};
  walk_loaded_objects(find_one, &state);
  if (!state.found) return;
  rec.flags = core::result::kModuleUnloaded;
  core::SpinLockGuard guard(g_unloaded_lock);
  for (const ModuleRecord& known : g_unloaded) {
    if (same_module(known, rec)) return;
  }
  (void)g_unloaded.try_push_back(rec);  // if it cannot be kept, its frames show addresses
}

bool collect_modules(core::MmapArray<ModuleRecord>& out) {
  CollectState state{&out, true};
  walk_loaded_objects(collect_one, &state);
  size_t loaded = out.size();
  core::SpinLockGuard guard(g_unloaded_lock);
  for (const ModuleRecord& rec : g_unloaded) {
    bool still_loaded = false;
    for (size_t i = 0; i < loaded && !still_loaded; ++i) still_loaded = same_module(out[i], rec);
    if (!still_loaded && !out.try_push_back(rec)) state.ok = false;
  }
  return state.ok;
}

}  // namespace memtrack::rt
