// Tests for the leak-kind lists (valgrind's --show-leak-kinds syntax), the LeakKinds set and
// the --error-exitcode question, has_leaks_of_kinds.
#include "report/leak_kinds.h"

#include <gtest/gtest.h>

namespace memtrack::report {
namespace {

constexpr LeakKind kDef = LeakKind::kDefinite;
constexpr LeakKind kInd = LeakKind::kIndirect;
constexpr LeakKind kPos = LeakKind::kPossible;
constexpr LeakKind kReach = LeakKind::kReachable;
constexpr LeakKind kUncl = LeakKind::kUnclassified;

TEST(LeakKinds, SetOperations) {
  LeakKinds none;
  for (LeakKind k : {kDef, kInd, kPos, kReach, kUncl}) {
    EXPECT_FALSE(none.contains(k));
    EXPECT_TRUE(LeakKinds::all().contains(k));
    EXPECT_TRUE(none.with(k).contains(k));
    EXPECT_EQ(none.with(k), LeakKinds{k});
  }
  EXPECT_EQ(LeakKinds({kDef, kPos}).with(kDef), LeakKinds({kPos, kDef}));
  EXPECT_NE(LeakKinds({kDef}), LeakKinds({kDef, kUncl}));
  EXPECT_EQ(kDefaultShownKinds, LeakKinds({kDef, kInd, kPos, kUncl}));
  EXPECT_FALSE(kDefaultShownKinds.contains(kReach));
  EXPECT_TRUE(is_leak(kUncl));
  EXPECT_FALSE(is_leak(kReach));
}

TEST(LeakKinds, ParsesValgrindSyntax) {
  EXPECT_EQ(try_parse_leak_kinds("none"), LeakKinds{});
  EXPECT_EQ(try_parse_leak_kinds("all"), LeakKinds({kDef, kInd, kPos, kReach}));
  EXPECT_EQ(try_parse_leak_kinds("definite"), LeakKinds{kDef});
  EXPECT_EQ(try_parse_leak_kinds("reachable,definite"), LeakKinds({kDef, kReach}));
  EXPECT_EQ(try_parse_leak_kinds("definite,indirect,possible,reachable"),
            LeakKinds({kDef, kInd, kPos, kReach}));
  EXPECT_EQ(try_parse_leak_kinds("possible,possible"), LeakKinds{kPos});
}

TEST(LeakKinds, RejectsEverythingElse) {
  for (const char* bad : {"", ",", "definite,", ",definite", "definite,,possible", "Definite",
                          "definite ", " definite", "definite, possible", "all,definite",
                          "definite,none", "unclassified", "leak", "definitely", "ALL"}) {
    EXPECT_EQ(try_parse_leak_kinds(bad), std::nullopt) << "'" << bad << "'";
  }
}

LeakGroup group(LeakKind kind) {
  LeakGroup g;
  g.kind = kind;
  g.bytes = 8;
  g.blocks = 1;
  return g;
}

// The policy behind --error-exitcode and --errors-for-leak-kinds.
TEST(LeakKinds, HasLeaksOfKinds) {
  const LeakKinds valgrind_default = {kDef, kPos, kUncl};
  ProcessReport p;
  EXPECT_FALSE(has_leaks_of_kinds(p, LeakKinds::all()));
  p.suppressed = {group(kDef)};  // suppressed groups never count
  EXPECT_FALSE(has_leaks_of_kinds(p, LeakKinds::all()));
  p.leaks = {group(kReach), group(kInd)};
  EXPECT_FALSE(has_leaks_of_kinds(p, valgrind_default));
  EXPECT_TRUE(has_leaks_of_kinds(p, LeakKinds{kInd}));
  EXPECT_TRUE(has_leaks_of_kinds(p, LeakKinds{kReach}));
  EXPECT_FALSE(has_leaks_of_kinds(p, LeakKinds{}));
  p.leaks.push_back(group(kPos));
  EXPECT_TRUE(has_leaks_of_kinds(p, valgrind_default));
  p.leaks = {group(kUncl)};
  EXPECT_TRUE(has_leaks_of_kinds(p, valgrind_default));
  EXPECT_FALSE(has_leaks_of_kinds(p, LeakKinds{kDef}));
}

}  // namespace
}  // namespace memtrack::report
