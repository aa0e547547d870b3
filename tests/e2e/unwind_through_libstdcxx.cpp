// std::string::reserve runs inside libstdc++.so (an extern template; this case is built as
// C++17, see CMakeLists.txt), which has no frame pointers. The operator new it calls must
// still get a stack that continues through it to the program's own functions. The string
// object itself is leaked with new, so its buffer leaks too.
// EXPECT-LEAKED: 1033 bytes in 2 blocks
// EXPECT-GROUP: 1001 bytes in 1 block | reserve make_text@reserve main@call
// EXPECT-GROUP: 32 bytes in 1 block | make_text@alloc main@call
#include <string>

#include "e2e_util.h"

__attribute__((noinline)) std::string* make_text() {
  auto* text = new std::string();  // @alloc: sizeof(std::string) == 32
  text->reserve(1000);             // @reserve: allocates capacity + 1 bytes in libstdc++
  ESCAPE(text);
  return text;
}

int main() {
  std::string* text = make_text();  // @call
  printf("%zu\n", text->capacity());
  return 0;
}
