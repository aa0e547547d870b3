// Tests for --gen-suppressions entries: each block and leak: line, parsed again, matches its
// own group or site and no other of the report.
#include "report/gen_suppressions.h"

#include <random>
#include <string>

#include <gtest/gtest.h>

#include "report/suppressions.h"
#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

using testing::debug_frame;
using testing::kLibc;
using testing::symbol_frame;

constexpr const char* kStdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";

Frame libc_start() {
  return symbol_frame(0x7f0000001000, kLibc, 0x271ca, "__libc_start_call_main");
}

LeakGroup group_of(std::vector<Frame> stack, LeakKind kind = LeakKind::kDefinite) {
  LeakGroup g;
  g.kind = kind;
  g.bytes = 8;
  g.blocks = 1;
  g.stack = std::move(stack);
  return g;
}

// The shapes of the issue: a leak in main, strdup from main, vector<int> leaks in two
// functions, a thread's leak, a shared library's leak.
ProcessReport several_leaks() {
  ProcessReport p;
  p.leaks.push_back(group_of({debug_frame(0x10, "main", "prog.c", 10, 3), libc_start()}));
  p.leaks.push_back(group_of({symbol_frame(0x7f0000002000, kLibc, 0x9a000, "strdup"),
                              debug_frame(0x20, "main", "prog.c", 11, 3), libc_start()}));
  for (const char* function : {"fill_a()", "fill_b()"}) {
    p.leaks.push_back(group_of({
        debug_frame(0x30, "std::__new_allocator<int>::allocate(unsigned long, void const*)",
                    "/usr/include/c++/12/bits/new_allocator.h", 137, 48, true),
        debug_frame(0x30, "std::vector<int, std::allocator<int> >::_M_realloc_insert",
                    "/usr/include/c++/12/bits/vector.tcc", 440, 33),
        debug_frame(0x40, function, "prog.cc", 20, 5),
        debug_frame(0x50, "main", "prog.cc", 30, 3),
        libc_start(),
    }));
  }
  p.leaks.push_back(group_of({debug_frame(0x60, "worker", "prog.c", 40, 5),
                              symbol_frame(0x7f0000003000, kLibc, 0x94ac3, "start_thread"),
                              symbol_frame(0x7f0000004000, kLibc, 0x126850, "clone3")}));
  p.leaks.push_back(
      group_of({symbol_frame(0x7f0000005000, "/opt/lib/libplugin.so", 0x1130, "plugin_alloc"),
                debug_frame(0x70, "main", "prog.c", 12, 3), libc_start()}));
  return p;
}

// Every entry, parsed, matches exactly its own group.
void expect_exact(const ProcessReport& p, const ProcessSuggestions& s) {
  ASSERT_EQ(s.leaks.size(), p.leaks.size());
  for (size_t i = 0; i < p.leaks.size(); ++i) {
    SCOPED_TRACE(s.leaks[i].block);
    Suppressions block = Suppressions::parse(s.leaks[i].block, "generated");
    for (size_t j = 0; j < p.leaks.size(); ++j) {
      EXPECT_EQ(block.matches(p.leaks[j]), i == j) << "group " << j;
    }
    if (s.leaks[i].lsan.empty()) continue;
    Suppressions line = Suppressions::parse(s.leaks[i].lsan, "generated");
    for (size_t j = 0; j < p.leaks.size(); ++j) {
      EXPECT_EQ(line.matches(p.leaks[j]), i == j) << s.leaks[i].lsan << " vs group " << j;
    }
  }
}

TEST(GenSuppressions, EachEntryMatchesExactlyItsGroup) {
  ProcessReport p = several_leaks();
  ProcessSuggestions s = suggest_suppressions(p);
  expect_exact(p, s);
  EXPECT_EQ(s.leaks[0].block,
            "{\n"
            "   memtrack:leak:main\n"
            "   Memcheck:Leak\n"
            "   match-leak-kinds: definite\n"
            "   fun:main\n"
            "}");
  EXPECT_EQ(s.leaks[1].block,
            "{\n"
            "   memtrack:leak:strdup\n"
            "   Memcheck:Leak\n"
            "   match-leak-kinds: definite\n"
            "   fun:strdup\n"
            "   fun:main\n"
            "}");
  EXPECT_EQ(s.leaks[4].block,
            "{\n"
            "   memtrack:leak:worker\n"
            "   Memcheck:Leak\n"
            "   match-leak-kinds: definite\n"
            "   fun:worker\n"
            "   fun:start_thread\n"
            "   fun:clone3\n"
            "}");
}

TEST(GenSuppressions, LsanLineNeverNamesMainOrTheRuntime) {
  ProcessSuggestions s = suggest_suppressions(several_leaks());
  EXPECT_EQ(s.leaks[0].lsan, "");  // only main
  EXPECT_EQ(s.leaks[1].lsan, "");  // strdup in libc, then main
  EXPECT_EQ(s.leaks[2].lsan, "leak:^fill_a()$");
  EXPECT_EQ(s.leaks[3].lsan, "leak:^fill_b()$");
  EXPECT_EQ(s.leaks[4].lsan, "leak:^worker$");
  EXPECT_EQ(s.leaks[5].lsan, "leak:^plugin_alloc$");
}

TEST(GenSuppressions, SameFunctionsDifferentLinesUseSourceLines) {
  ProcessReport p;
  p.leaks.push_back(
      group_of({debug_frame(0x10, "make", "m.c", 5, 3), debug_frame(0x20, "main", "m.c", 20, 3)}));
  p.leaks.push_back(
      group_of({debug_frame(0x11, "make", "m.c", 6, 3), debug_frame(0x20, "main", "m.c", 20, 3)}));
  ProcessSuggestions s = suggest_suppressions(p);
  expect_exact(p, s);
  EXPECT_EQ(s.leaks[0].block,
            "{\n   memtrack:leak:make\n   Memcheck:Leak\n   match-leak-kinds: definite\n"
            "   src:m.c:5\n   src:m.c:20\n}");
  EXPECT_EQ(s.leaks[0].lsan, "");
}

TEST(GenSuppressions, KindsTellGroupsOfOneStackApart) {
  ProcessReport p;
  std::vector<Frame> stack = {debug_frame(0x10, "make", "m.c", 5, 3)};
  p.leaks.push_back(group_of(stack, LeakKind::kDefinite));
  p.leaks.push_back(group_of(stack, LeakKind::kIndirect));
  ProcessSuggestions s = suggest_suppressions(p);
  expect_exact(p, s);
  EXPECT_NE(s.leaks[1].block.find("match-leak-kinds: indirect\n"), std::string::npos);
}

TEST(GenSuppressions, IdenticalStacksSaySo) {
  ProcessReport p;
  std::vector<Frame> stack = {symbol_frame(0x10, "/bin/app", 0x10, "make")};
  p.leaks.push_back(group_of(stack));
  p.leaks.push_back(group_of(stack));
  ProcessSuggestions s = suggest_suppressions(p);
  EXPECT_TRUE(s.leaks[0].block.starts_with("# also matches 1 other group with the same stack\n{"))
      << s.leaks[0].block;
  EXPECT_TRUE(Suppressions::parse(s.leaks[0].block, "g").matches(p.leaks[0]));
}

TEST(GenSuppressions, DescriptorSites) {
  ProcessReport p = several_leaks();
  ResourceSite site;
  site.stack = {debug_frame(0x80, "open_log", "prog.c", 50, 7),
                debug_frame(0x90, "main", "prog.c", 13, 3), libc_start()};
  p.resource_sites.push_back(site);
  ProcessSuggestions s = suggest_suppressions(p);
  ASSERT_EQ(s.resource_sites.size(), 1u);
  EXPECT_EQ(s.resource_sites[0].block,
            "{\n   memtrack:fd:open_log\n   memtrack:FdLeak\n   fun:open_log\n   fun:main\n}");
  EXPECT_EQ(s.resource_sites[0].lsan, "leak:^open_log$");
  Suppressions block = Suppressions::parse(s.resource_sites[0].block, "g");
  EXPECT_TRUE(block.matches_descriptors(site.stack));
  for (const LeakGroup& g : p.leaks) EXPECT_FALSE(block.matches(g));
  // A leak: line applies to descriptors too, so a group's line must not match the site.
  for (const SuggestedSuppression& e : s.leaks) {
    if (!e.lsan.empty()) {
      EXPECT_FALSE(Suppressions::parse(e.lsan, "g").matches_descriptors(site.stack));
    }
  }
}

TEST(GenSuppressions, NamesWithoutFunctionsUseTheModule) {
  ProcessReport p;
  p.leaks.push_back(group_of(
      {symbol_frame(0x10, "/opt/libx.so", 0x10, ""), debug_frame(0x20, "main", "m.c", 20, 3)}));
  ProcessSuggestions s = suggest_suppressions(p);
  EXPECT_EQ(s.leaks[0].block,
            "{\n   memtrack:leak:libx.so\n   Memcheck:Leak\n   match-leak-kinds: definite\n"
            "   obj:/opt/libx.so\n   fun:main\n}");
  EXPECT_EQ(s.leaks[0].lsan, "leak:^libx.so$");
  expect_exact(p, s);
}

TEST(GenSuppressions, RoundTripForRandomNames) {
  std::mt19937 rng(12345);  // fixed seed: deterministic
  const std::string alphabet = "ab:*?^$# \t\r\n\\/.()<>,&~'\"{}\x01\x7f\xc3\xa9";
  auto random_string = [&](size_t max_len) {
    std::string s(rng() % (max_len + 1), ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
  };
  for (int i = 0; i < 500; ++i) {
    ProcessReport p;
    for (int g = 0; g < 3; ++g) {
      std::vector<Frame> stack(1 + rng() % 3);
      for (Frame& f : stack) {
        if (rng() % 2) f.function = random_string(8);
        if (rng() % 2) f.module = random_string(8);
        if (rng() % 2) f.file = random_string(8);
        f.line = static_cast<int>(rng() % 3);
      }
      p.leaks.push_back(group_of(stack));
    }
    ProcessSuggestions s = suggest_suppressions(p);
    for (size_t g = 0; g < p.leaks.size(); ++g) {
      ASSERT_NO_THROW(Suppressions::parse(s.leaks[g].block, "generated")) << s.leaks[g].block;
      Suppressions block = Suppressions::parse(s.leaks[g].block, "generated");
      EXPECT_TRUE(block.matches(p.leaks[g])) << s.leaks[g].block;
      bool says_shared = s.leaks[g].block.starts_with("# also matches");
      for (size_t o = 0; o < p.leaks.size(); ++o) {
        if (o != g && !says_shared) {
          EXPECT_FALSE(block.matches(p.leaks[o])) << s.leaks[g].block;
        }
      }
      if (s.leaks[g].lsan.empty()) continue;
      Suppressions line = Suppressions::parse(s.leaks[g].lsan, "generated");
      for (size_t o = 0; o < p.leaks.size(); ++o) {
        EXPECT_EQ(line.matches(p.leaks[o]), o == g) << s.leaks[g].lsan;
      }
    }
  }
}

// A large report (cc1plus-sized: thousands of groups) must not take long: each block is
// checked against every other group, so that check has to stay cheap.
TEST(GenSuppressions, ManyGroups) {
  ProcessReport p;
  for (int i = 0; i < 4000; ++i) {
    p.leaks.push_back(
        group_of({debug_frame(0x10 + i, "site_" + std::to_string(i % 2000), "a.c", i, 1),
                  debug_frame(0x20, "caller_" + std::to_string(i % 7), "b.c", 9, 1),
                  debug_frame(0x30, "main", "m.c", 1, 1)}));
  }
  ProcessSuggestions s = suggest_suppressions(p);
  ASSERT_EQ(s.leaks.size(), p.leaks.size());
  EXPECT_TRUE(Suppressions::parse(s.leaks[7].block, "g").matches(p.leaks[7]));
  EXPECT_FALSE(Suppressions::parse(s.leaks[7].block, "g").matches(p.leaks[2007]));
}

}  // namespace
}  // namespace memtrack::report
