// Prints docs/flags.md from the flag table in flags.inc, so the docs cannot drift.
#include <cstdio>

#include "core/flags.h"

int main() {
  size_t count = 0;
  const memtrack::core::FlagInfo* table = memtrack::core::flag_table(&count);
  std::printf("# Runtime options\n\n");
  std::printf(
      "Generated from `core/flags.inc` by `memtrack_flags_doc`; do not edit by hand.\n\n"
      "Set them in the environment as `MEMTRACK_OPTIONS=\"name=value:name=value\"`, the way\n"
      "sanitizers read `LSAN_OPTIONS`. Entries are separated by `:` or whitespace; a value may\n"
      "be quoted with `'` or `\"`. Unknown names and bad values give one warning each on\n"
      "stderr and keep the default. `MEMTRACK_OPTIONS=help=1` prints this list.\n\n");
  std::printf("| option | type | default | meaning |\n|---|---|---|---|\n");
  for (size_t i = 0; i < count; ++i) {
    const auto& f = table[i];
    const char* type = f.type == memtrack::core::FlagType::kBool  ? "bool"
                       : f.type == memtrack::core::FlagType::kInt ? "int"
                                                                  : "string";
    std::printf("| `%s` | %s | `%s` | %s |\n", f.name, type, f.default_text, f.description);
  }
  return 0;
}
