// The heap profile's file names and module map (see profile_output.h). Calls libc (getcwd,
// access) but never malloc; the module map is encoded into mmap'd memory.
#include "runtime/output/profile_output.h"

#include <link.h>
#include <unistd.h>

#include <atomic>

#include "core/mmap_array.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/output/log_file.h"
#include "runtime/output/modules.h"
#include "runtime/output/process_info.h"
#include "runtime/record/profile.h"
#include "runtime/runtime.h"

namespace memtrack::rt {
namespace {

constexpr size_t kMaxPath = 4096;
char g_pattern[kMaxPath + core::kMaxFlagStringLength];  // absolute; set once at start-up
// dl_iterate_phdr's counts of objects loaded and unloaded when the last module map was
// collected (the first read of them is always taken for a change).
std::atomic<uint64_t> g_modules_loaded{UINT64_MAX};
std::atomic<uint64_t> g_modules_unloaded{UINT64_MAX};

struct LoadCounts {
  uint64_t loaded = 0;
  uint64_t unloaded = 0;
};

int read_load_counts(dl_phdr_info* info, size_t size, void* arg) {
  auto* counts = static_cast<LoadCounts*>(arg);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    counts->loaded = info->dlpi_adds;
    counts->unloaded = info->dlpi_subs;
  }
  return 1;  // the counts are the same in every object's entry
}

LoadCounts load_counts() {
  LoadCounts counts;
  walk_loaded_objects(read_load_counts, &counts);  // fork-safe (modules.h)
  return counts;
}

template <typename T>
void append_value(core::MmapArray<uint8_t>& out, T value, bool& ok) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  for (size_t i = 0; i < sizeof(T) && ok; ++i) ok = out.try_push_back(bytes[i]);
}

void append_bytes(core::MmapArray<uint8_t>& out, const void* data, size_t size, bool& ok) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size && ok; ++i) ok = out.try_push_back(bytes[i]);
}

// The modules section of the result file (docs/format.md, section 3), so the CLI reads both
// with the same code.
void write_modules() {
  LoadCounts counts = load_counts();  // before collecting: a library loaded meanwhile is seen
  g_modules_loaded.store(counts.loaded, std::memory_order_relaxed);
  g_modules_unloaded.store(counts.unloaded, std::memory_order_relaxed);
  core::MmapArray<ModuleRecord> modules;
  core::MmapArray<uint8_t> payload;
  if (!collect_modules(modules)) return;
  bool ok = true;
  append_value(payload, static_cast<uint32_t>(modules.size()), ok);
  for (const ModuleRecord& m : modules) {
    size_t path_size = core::string_length(m.path);
    append_value(payload, m.load_bias, ok);
    append_value(payload, m.start, ok);
    append_value(payload, m.end, ok);
    append_value(payload, m.build_id_size, ok);
    append_value(payload, m.flags, ok);
    append_value(payload, static_cast<uint32_t>(path_size), ok);
    append_bytes(payload, m.build_id, m.build_id_size, ok);
    append_bytes(payload, m.path, path_size, ok);
  }
  if (ok) profile_append_modules(payload.data(), payload.size());
}

// This process's file: the pattern expanded, with ".N" added while the name is taken.
bool start_in_unique_file() {
  core::FixedText<kMaxPath + core::kMaxFlagStringLength + 32> base;
  expand_log_path(g_pattern, base);
  for (int n = 1; n < 1000; ++n) {
    core::FixedText<kMaxPath + core::kMaxFlagStringLength + 48> path;
    path.str(base.data());
    if (n > 1) path.chr('.').i64(n);
    if (access(path.data(), F_OK) == 0) continue;
    return profile_start(path.data());
  }
  return false;
}

}  // namespace

void init_profile() {
  if (g_flags.profile[0] == '\0') return;
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  core::TextBuffer pattern(g_pattern, sizeof(g_pattern));
  if (g_flags.profile[0] != '/') {
    char cwd[kMaxPath];
    if (getcwd(cwd, sizeof(cwd)) != nullptr) pattern.str(cwd).chr('/');
  }
  pattern.str(g_flags.profile);
  // The module map names the main program by /proc/self/exe, which the runtime's other
  // constructor may not have read yet (constructors of two files run in link order): without
  // it, the main program's frames of a profile cut short (SIGKILL: no module map at exit, and
  // memtrack ui reading a running program's profile) had no file to symbolize them with.
  if (executable_path()[0] == '\0') capture_process_info();
  if (start_in_unique_file()) write_modules();
  core::sys::set_errno(saved_errno);
}

void finish_profile() {
  if (!profiling()) return;
  if (!in_runtime()) {  // collect_modules takes the loader lock: not from inside the runtime
    RuntimeScope scope;
    int saved_errno = core::sys::get_errno();
    write_modules();
    core::sys::set_errno(saved_errno);
  }
  profile_flush_final();
}

void profile_modules_if_changed() {
  if (!profiling()) return;
  LoadCounts counts = load_counts();
  if (counts.loaded == g_modules_loaded.load(std::memory_order_relaxed) &&
      counts.unloaded == g_modules_unloaded.load(std::memory_order_relaxed)) {
    return;
  }
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  write_modules();
  core::sys::set_errno(saved_errno);
}

void profile_fork_child() {
  if (g_flags.profile[0] == '\0') return;
  profile_fork_child_reset();
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  if (start_in_unique_file()) write_modules();
  core::sys::set_errno(saved_errno);
}

}  // namespace memtrack::rt
