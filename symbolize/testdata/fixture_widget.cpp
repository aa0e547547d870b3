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
