// libFuzzer target for suppressions files (LeakSanitizer lines and valgrind-style blocks):
// any text must either parse or be rejected with memtrack::Error, and what parses is matched
// against a fixed leak and descriptor stack. The first line of the input is also tried as a
// leak: pattern and a glob against the rest, the matchers' worst cases.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/suppressions.h"

namespace {

using memtrack::Frame;

std::vector<Frame> sample_stack() {
  std::vector<Frame> stack(3);
  stack[0].module = "/usr/lib/x86_64-linux-gnu/libfoo.so.1";
  stack[0].function = "foo::Bar::make(int)";
  stack[0].file = "/src/foo/bar.cc";
  stack[0].line = 42;
  stack[1].module = "/usr/bin/prog";
  stack[1].function = "main";
  stack[1].file = "main.c";
  stack[1].line = 7;
  stack[2].inlined = true;
  return stack;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t newline = text.find('\n');
  if (newline != std::string_view::npos && newline < 256 && size - newline < 4096) {
    std::string_view pattern = text.substr(0, newline);
    std::string_view rest = text.substr(newline + 1);
    (void)memtrack::report::pattern_matches(pattern, rest);
    (void)memtrack::report::glob_matches(pattern, rest);
  }
  try {
    memtrack::report::Suppressions suppressions =
        memtrack::report::Suppressions::parse(text, "fuzz.supp");
    memtrack::report::LeakGroup group;
    group.stack = sample_stack();
    (void)suppressions.matches(group);
    (void)suppressions.matches_descriptors(group.stack);
  } catch (const memtrack::Error&) {
  }
  return 0;
}
