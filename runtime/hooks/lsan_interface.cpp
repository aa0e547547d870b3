// LeakSanitizer's interface (sanitizer/lsan_interface.h), so a program written for LSan runs
// unchanged under memtrack with the same meaning (runtime.md, "LeakSanitizer's interface").
// __lsan_default_options, __lsan_default_suppressions and __lsan_is_turned_off are the
// program's to define; the runtime calls them (hooks/init.cpp, output/). Never mallocs.
#include <cstddef>
#include <cstdint>

#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/hooks/exit_hooks.h"
#include "runtime/hooks/export.h"
#include "runtime/hooks/lsan_interface.h"
#include "runtime/leakcheck/root_regions.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"

namespace rt = memtrack::rt;

MEMTRACK_EXPORT_C void __lsan_ignore_object(const void* p) {
  rt::ignore_object(p, "__lsan_ignore_object");
}

// Per thread and nestable, as in LSan: blocks this thread allocates while the depth is above
// zero are recorded as ignored (record/record.cpp).
MEMTRACK_EXPORT_C void __lsan_disable() {
  ++rt::t_thread.lsan_disabled;
}

MEMTRACK_EXPORT_C void __lsan_enable() {
  if (rt::t_thread.lsan_disabled == 0) {
    // LSan aborts here; memtrack never ends a program for its own bookkeeping.
    rt::diag("warning: __lsan_enable without a matching __lsan_disable on this thread; ignored");
    return;
  }
  --rt::t_thread.lsan_disabled;
}

namespace memtrack::rt {

void register_root_region_from(const char* api, uintptr_t begin, size_t size) {
  if (size == 0 || register_root_region(begin, size)) return;
  core::FixedText<160> line;
  line.str("warning: ").str(api).str(": more than ").u64(kMaxRootRegions);
  line.str(" regions; this one is not scanned");
  diag(line.data());
}

void unregister_root_region_from(const char* api, uintptr_t begin, size_t size) {
  if (size == 0 || unregister_root_region(begin, size)) return;
  core::FixedText<200> line;
  line.str("warning: ")
      .str(api)
      .str(": no region was registered with this pointer and size; ignored");
  diag(line.data());
}

}  // namespace memtrack::rt

MEMTRACK_EXPORT_C void __lsan_register_root_region(const void* p, size_t size) {
  rt::register_root_region_from("__lsan_register_root_region", reinterpret_cast<uintptr_t>(p),
                                size);
}

MEMTRACK_EXPORT_C void __lsan_unregister_root_region(const void* p, size_t size) {
  rt::unregister_root_region_from("__lsan_unregister_root_region", reinterpret_cast<uintptr_t>(p),
                                  size);
}

// The exit report, now; the program goes on, and its exit reports nothing more.
MEMTRACK_EXPORT_C void __lsan_do_leak_check() {
  rt::report_final_now("__lsan_do_leak_check");
}

MEMTRACK_EXPORT_C int __lsan_do_recoverable_leak_check() {
  return rt::report_check_now("on demand (__lsan_do_recoverable_leak_check)") > 0 ? 1 : 0;
}
