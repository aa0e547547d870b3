// Symbolizer test fixture: C++ names (a member function and an inlined template in a
// namespace). symbolizer_test.cpp hardcodes the marked lines: keep them where they are.
#include "fixture.h"

namespace demo {

struct Widget {
  static int make(int n);
};

template <typename T>
inline __attribute__((always_inline)) T scaled(T value) {
  return static_cast<T>(fixture_g_hook(static_cast<int>(value)) * 3);  // LINE_SCALED_CALL (13:39)
}

__attribute__((noinline)) int Widget::make(int n) {
  return scaled<long>(n) + 2;  // LINE_WIDGET_CALL (17:22)
}

}  // namespace demo

extern "C" int fixture_widget_make(int n) {
  return demo::Widget::make(n) + 1;
}

// Variables the retention report names by their definition (LINE_REGISTRY, LINE_COUNTER):
// a static member defined out of its class in a namespace, and a function's static local.
namespace demo {
struct Registry {
  static long entries[4];
};
long Registry::entries[4] = {1, 2, 3, 4};  // LINE_REGISTRY (32)
}  // namespace demo

extern "C" void* fixture_registry(void) {
  return demo::Registry::entries;
}

extern "C" void* fixture_counter(void) {
  static long counter = 7;  // LINE_COUNTER (40)
  return &counter;
}
