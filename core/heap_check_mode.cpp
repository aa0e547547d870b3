#include "core/heap_check_mode.h"

#include <cstring>

namespace memtrack::core {

bool parse_heap_check_mode(const char* text, HeapCheckMode* mode, const char** error) {
  static constexpr char kAccepted[] =
      "expects off, full, sample or sample:N (N from 1 to 2147483647)";
  *error = kAccepted;
  if (strcmp(text, "off") == 0 || text[0] == '\0') {
    *mode = {};
    return true;
  }
  if (strcmp(text, "full") == 0) {
    *mode = {HeapCheckMode::Kind::kFull, 0};
    return true;
  }
  if (strcmp(text, "sample") == 0) {
    *mode = {HeapCheckMode::Kind::kSample, kDefaultGuardInterval};
    return true;
  }
  static constexpr char kPrefix[] = "sample:";
  if (strncmp(text, kPrefix, sizeof(kPrefix) - 1) != 0) return false;
  const char* digits = text + sizeof(kPrefix) - 1;
  if (*digits == '\0') return false;
  uint64_t n = 0;
  for (const char* p = digits; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
    n = n * 10 + static_cast<uint64_t>(*p - '0');
    if (n > 2147483647) return false;
  }
  if (n == 0) return false;
  *mode = {HeapCheckMode::Kind::kSample, static_cast<uint32_t>(n)};
  return true;
}

}  // namespace memtrack::core
