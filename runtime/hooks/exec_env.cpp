// The environment handed on at exec (exec_env.h). Calls libc (getenv at start-up) but never
// malloc.
#include "runtime/hooks/exec_env.h"

#include <stdlib.h>

#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/output/preload_list.h"
#include "runtime/runtime.h"

namespace memtrack::rt {
namespace {

constexpr size_t kMaxValue = 4096;
char g_self[kMaxValue];     // libmemtrack.so's entry of LD_PRELOAD, "" if not found
char g_options[kMaxValue];  // MEMTRACK_OPTIONS at start-up, "" if unset
bool g_have_options = false;

constexpr char kPreloadName[] = "LD_PRELOAD=";
constexpr char kOptionsName[] = "MEMTRACK_OPTIONS=";

bool starts_with(const char* s, const char* prefix) {
  while (*prefix != '\0') {
    if (*s++ != *prefix++) return false;
  }
  return true;
}

// libmemtrack.so's entry of an LD_PRELOAD list, copied to `out`; false if there is none (or
// it is too long).
bool find_self(const char* list, char* out, size_t size) {
  bool found = false;
  for_each_preload_entry(list, [&](const char* start, size_t length, bool is_self) {
    if (found || !is_self || length >= size) return;
    for (size_t i = 0; i < length; ++i) out[i] = start[i];
    out[length] = '\0';
    found = true;
  });
  return found;
}

bool names_self(const char* entry) {
  char ignored[kMaxValue];
  return find_self(entry + sizeof(kPreloadName) - 1, ignored, sizeof(ignored));
}

}  // namespace

void capture_exec_environment() {
  const char* preload = getenv("LD_PRELOAD");
  if (preload == nullptr || !find_self(preload, g_self, sizeof(g_self))) g_self[0] = '\0';
  const char* options = getenv("MEMTRACK_OPTIONS");
  g_have_options = options != nullptr && core::string_length(options) < sizeof(g_options);
  if (g_have_options) core::TextBuffer(g_options, sizeof(g_options)).str(options);
}

TracedEnvironment::TracedEnvironment(char* const* envp) : envp_(envp) {
  if (!g_flags.follow_exec || g_self[0] == '\0') return;
  size_t count = 0;
  const char* preload = nullptr;
  bool has_options = false;
  for (char* const* e = envp; e != nullptr && *e != nullptr; ++e, ++count) {
    if (starts_with(*e, kPreloadName)) preload = *e;
    if (starts_with(*e, kOptionsName)) has_options = true;
  }
  bool fix_preload = preload == nullptr || !names_self(preload);
  bool add_options = !has_options && g_have_options;
  if (!fix_preload && !add_options) return;
  // The pointers, then the two strings, in pages of their own.
  size_t preload_size = sizeof(kPreloadName) + core::string_length(g_self) + 1 +
                        (preload != nullptr ? core::string_length(preload) : 0);
  size_t options_size = sizeof(kOptionsName) + core::string_length(g_options);
  bytes_ = (count + 3) * sizeof(char*) + preload_size + options_size;
  pages_ = core::sys::map_pages(bytes_);
  if (pages_ == nullptr) return;  // the child goes untraced rather than failing the exec
  auto** out = static_cast<char**>(pages_);
  char* text = reinterpret_cast<char*>(out + count + 3);
  size_t n = 0;
  for (char* const* e = envp; e != nullptr && *e != nullptr; ++e) {
    if (fix_preload && *e == preload) continue;
    out[n++] = *e;
  }
  if (fix_preload) {
    core::TextBuffer entry(text, preload_size);
    entry.str(kPreloadName).str(g_self);
    const char* rest = preload != nullptr ? preload + sizeof(kPreloadName) - 1 : "";
    if (*rest != '\0') entry.chr(':').str(rest);
    out[n++] = text;
    text += preload_size;
  }
  if (add_options) {
    core::TextBuffer entry(text, options_size);
    entry.str(kOptionsName).str(g_options);
    out[n++] = text;
  }
  out[n] = nullptr;
  envp_ = out;
}

TracedEnvironment::~TracedEnvironment() {
  if (pages_ != nullptr) core::sys::unmap_pages(pages_, bytes_);
}

}  // namespace memtrack::rt
