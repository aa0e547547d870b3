// Unit tests of memtrack ui's request checks.
#include "ui/security.h"

#include <gtest/gtest.h>

namespace memtrack::ui {
namespace {

TEST(Token, IsSixtyFourHexDigitsAndFresh) {
  std::string a = new_token();
  std::string b = new_token();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

TEST(ConstantTimeEqual, ComparesWholeStrings) {
  EXPECT_TRUE(equal_in_constant_time("abc", "abc"));
  EXPECT_FALSE(equal_in_constant_time("abc", "abd"));
  EXPECT_FALSE(equal_in_constant_time("abc", "ab"));
  EXPECT_FALSE(equal_in_constant_time("", "a"));
  EXPECT_TRUE(equal_in_constant_time("", ""));
}

TEST(Cookie, FindsTheNamedValue) {
  EXPECT_EQ(cookie_value("a=1; memtrack_token=xyz; b=2", "memtrack_token"), "xyz");
  EXPECT_EQ(cookie_value("memtrack_token=xyz", "memtrack_token"), "xyz");
  EXPECT_EQ(cookie_value("xmemtrack_token=1", "memtrack_token"), std::nullopt);
  EXPECT_EQ(cookie_value("", "memtrack_token"), std::nullopt);
}

TEST(Host, LoopbackNamesWithTheRightPort) {
  Allowed allowed{8123, ""};
  EXPECT_TRUE(host_allowed("localhost:8123", allowed));
  EXPECT_TRUE(host_allowed("127.0.0.1:8123", allowed));
  EXPECT_TRUE(host_allowed("[::1]:8123", allowed));
  EXPECT_FALSE(host_allowed("localhost:8124", allowed));
  EXPECT_FALSE(host_allowed("localhost", allowed));
  EXPECT_FALSE(host_allowed("evil.example:8123", allowed));
  EXPECT_FALSE(host_allowed("127.0.0.1.evil.example:8123", allowed));
  EXPECT_FALSE(host_allowed(":8123", allowed));
}

TEST(Host, TheListenAddressWhenSpecific) {
  EXPECT_TRUE(host_allowed("192.168.1.5:80", Allowed{80, "192.168.1.5"}));
  EXPECT_TRUE(host_allowed("[fd00::5]:80", Allowed{80, "fd00::5"}));
  EXPECT_FALSE(host_allowed("0.0.0.0:80", Allowed{80, "0.0.0.0"}));
  EXPECT_FALSE(host_allowed("192.168.1.6:80", Allowed{80, "192.168.1.5"}));
}

TEST(Origin, OnlyTheServersOwn) {
  Allowed allowed{8123, ""};
  EXPECT_TRUE(origin_allowed("http://127.0.0.1:8123", allowed));
  EXPECT_TRUE(origin_allowed("http://localhost:8123", allowed));
  EXPECT_FALSE(origin_allowed("https://127.0.0.1:8123", allowed));
  EXPECT_FALSE(origin_allowed("http://evil.example", allowed));
  EXPECT_FALSE(origin_allowed("null", allowed));
  EXPECT_FALSE(origin_allowed("http://127.0.0.1:8124", allowed));
}

}  // namespace
}  // namespace memtrack::ui
