// std::string::reserve runs inside libstdc++.so (an extern template; this case is built as
// C++17, see CMakeLists.txt), which has no frame pointers. The operator new it calls must
// still get a stack that continues through it to the program's own functions. The object
// holding the string is leaked with new, so the string's buffer leaks too.
// EXPECT-LEAKED: 1033 bytes in 2 blocks
// EXPECT-GROUP: 1001 bytes in 1 block | reserve make_text@reserve main@call
// EXPECT-GROUP: 32 bytes in 1 block | make_text@alloc main@call
#include <string>

#include "e2e_util.h"

// 32 bytes on every target: std::string is 32 bytes on 64-bit ones, 24 on 32-bit ARM.
struct Text {
  std::string value;
#if __SIZEOF_POINTER__ == 4
  char padding[8];
#endif
};
static_assert(sizeof(Text) == 32);

__attribute__((noinline)) Text* make_text() {
  auto* text = new Text();    // @alloc
  text->value.reserve(1000);  // @reserve: allocates capacity + 1 bytes in libstdc++
  ESCAPE(text);
  return text;
}

int main() {
  Text* text = make_text();  // @call
  printf("%zu\n", text->value.capacity());
  return 0;
}
