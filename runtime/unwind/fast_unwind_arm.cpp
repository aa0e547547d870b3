// The fast unwinder on 32-bit ARM. Runtime-safe: no malloc, no lock.
#include "runtime/unwind/fast_unwind.h"

namespace memtrack::rt {

#if defined(__arm__)
int fast_unwind(uintptr_t*, int, uint64_t*) {
  return -1;
}
void set_main_wrapper_frame(uintptr_t) {}
void forget_unwind_rules() {}
#endif

}  // namespace memtrack::rt
