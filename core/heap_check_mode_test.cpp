#include "core/heap_check_mode.h"

#include <gtest/gtest.h>

namespace memtrack::core {
namespace {

using Kind = HeapCheckMode::Kind;

HeapCheckMode parsed(const char* text) {
  HeapCheckMode mode;
  const char* error = nullptr;
  EXPECT_TRUE(parse_heap_check_mode(text, &mode, &error)) << text;
  return mode;
}

TEST(HeapCheckMode, TheFourSpellings) {
  EXPECT_EQ(parsed("off").kind, Kind::kOff);
  EXPECT_EQ(parsed("").kind, Kind::kOff);
  EXPECT_EQ(parsed("full").kind, Kind::kFull);
  EXPECT_EQ(parsed("sample").kind, Kind::kSample);
  EXPECT_EQ(parsed("sample").interval, kDefaultGuardInterval);
  EXPECT_EQ(parsed("sample:1").interval, 1u);
  EXPECT_EQ(parsed("sample:2147483647").interval, 2147483647u);
}

TEST(HeapCheckMode, AnythingElseIsRefusedWithWhatIsAccepted) {
  for (const char* bad : {"sample:", "sample:0", "sample:-1", "sample:2147483648", "sample:1x",
                          "Full", "on", "sample:99999999999999999999"}) {
    HeapCheckMode mode;
    const char* error = nullptr;
    EXPECT_FALSE(parse_heap_check_mode(bad, &mode, &error)) << bad;
    ASSERT_NE(error, nullptr);
    EXPECT_NE(std::string(error).find("off, full, sample or sample:N"), std::string::npos);
  }
}

}  // namespace
}  // namespace memtrack::core
