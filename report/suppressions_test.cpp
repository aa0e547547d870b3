// Tests for suppressions: file syntax and errors, pattern semantics, matching groups, and the
// suggest -> parse -> match round trip.
#include "report/suppressions.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

using testing::debug_frame;
using testing::symbol_frame;

std::string parse_error(std::string_view text) {
  try {
    Suppressions::parse(text, "supp.txt");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

LeakGroup group_of(std::vector<Frame> stack) {
  LeakGroup g;
  g.bytes = 8;
  g.blocks = 1;
  g.stack = std::move(stack);
  return g;
}

TEST(SuppressionsParse, CommentsBlankLinesAndWhitespace) {
  Suppressions s = Suppressions::parse(
      "# whole-line comment\n"
      "\n"
      "   \t\n"
      "leak:foo\n"
      "  leak:  bar baz  \r\n"
      "leak:qux # trailing comment\n"
      "leak:a#b\n"
      "   # indented comment\n"
      "leak:^anchored$",  // no final newline
      "supp.txt");
  EXPECT_EQ(s.patterns(), (std::vector<std::string>{"foo", "bar baz", "qux", "a#b", "^anchored$"}));
  EXPECT_EQ(s.size(), 5u);
}

TEST(SuppressionsParse, EmptyTextHasNoPatterns) {
  EXPECT_EQ(Suppressions::parse("", "x").size(), 0u);
  EXPECT_EQ(Suppressions::parse("\n\n# only comments\n", "x").size(), 0u);
}

TEST(SuppressionsParse, ErrorsNameFileAndLine) {
  EXPECT_EQ(parse_error("leak:ok\n\nfoo\n"),
            "supp.txt:3: 'foo' is not a suppression; expected leak:PATTERN");
  EXPECT_EQ(parse_error("# c\nrace:foo\n"),
            "supp.txt:2: unsupported suppression type 'race'; expected leak:PATTERN");
  EXPECT_EQ(parse_error("leak:\n"), "supp.txt:1: empty pattern; expected leak:PATTERN");
  EXPECT_EQ(parse_error("leak:   # only a comment\n"),
            "supp.txt:1: empty pattern; expected leak:PATTERN");
  EXPECT_EQ(parse_error("Leak:foo"),
            "supp.txt:1: unsupported suppression type 'Leak'; expected leak:PATTERN");
  EXPECT_EQ(parse_error("leak :foo"),
            "supp.txt:1: unsupported suppression type 'leak '; expected leak:PATTERN");
  EXPECT_EQ(parse_error("{\n"), "supp.txt:1: '{' is not a suppression; expected leak:PATTERN");
  EXPECT_EQ(
      parse_error(std::string(100, 'x')),
      "supp.txt:1: '" + std::string(60, 'x') + "...' is not a suppression; expected leak:PATTERN");
}

TEST(SuppressionsLoad, ReadsFileAndReportsErrorsWithItsPath) {
  std::string path = ::testing::TempDir() + "memtrack_supp_" + std::to_string(getpid());
  {
    std::ofstream out(path);
    out << "leak:one\n# two\nleak:three\nbogus\n";
  }
  try {
    Suppressions::load(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":4: 'bogus' is not a suppression; expected leak:PATTERN");
  }
  {
    std::ofstream out(path);
    out << "leak:one\n# two\nleak:three\n";
  }
  EXPECT_EQ(Suppressions::load(path).patterns(), (std::vector<std::string>{"one", "three"}));
  std::remove(path.c_str());
}

TEST(SuppressionsLoad, UnreadableFile) {
  try {
    Suppressions::load("/nonexistent/memtrack.supp");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot read suppressions file /nonexistent/memtrack.supp: No such file or "
              "directory");
  }
  try {
    Suppressions::load("/");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read suppressions file /: Is a directory");
  }
}

TEST(SuppressionsAppend, KeepsOrder) {
  Suppressions a = Suppressions::parse("leak:a\n", "a");
  a.append(Suppressions::parse("leak:b\nleak:c\n", "b"));
  EXPECT_EQ(a.patterns(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(a.size(), 3u);
}

TEST(PatternMatches, SubstringWithoutAnchors) {
  EXPECT_TRUE(pattern_matches("foo", "foo"));
  EXPECT_TRUE(pattern_matches("foo", "xfooy"));
  EXPECT_TRUE(pattern_matches("oo", "foo"));
  EXPECT_FALSE(pattern_matches("foo", "fo"));
  EXPECT_FALSE(pattern_matches("Foo", "foo"));  // case matters
}

TEST(PatternMatches, Anchors) {
  EXPECT_TRUE(pattern_matches("^foo", "foobar"));
  EXPECT_FALSE(pattern_matches("^foo", "xfoo"));
  EXPECT_TRUE(pattern_matches("bar$", "foobar"));
  EXPECT_FALSE(pattern_matches("bar$", "barx"));
  EXPECT_TRUE(pattern_matches("^foo$", "foo"));
  EXPECT_FALSE(pattern_matches("^foo$", "foo2"));
  EXPECT_FALSE(pattern_matches("^foo$", "2foo"));
  // Only a leading '^' and a trailing '$' are anchors.
  EXPECT_TRUE(pattern_matches("a^b", "xa^by"));
  EXPECT_TRUE(pattern_matches("a$b", "a$b"));
  EXPECT_TRUE(pattern_matches("^^x$$", "^x$"));
  EXPECT_FALSE(pattern_matches("^^x$$", "x"));
}

TEST(PatternMatches, Wildcards) {
  EXPECT_TRUE(pattern_matches("*", "anything"));
  EXPECT_TRUE(pattern_matches("^a*c$", "abc"));
  EXPECT_TRUE(pattern_matches("^a*c$", "ac"));
  EXPECT_FALSE(pattern_matches("^a*c$", "acb"));
  EXPECT_TRUE(pattern_matches("a*b$", "abab"));  // backtracks (LSan's greedy matcher fails)
  EXPECT_TRUE(pattern_matches("^std::*::push_back", "std::vector<int>::push_back(int)"));
  EXPECT_TRUE(pattern_matches("lib*.so", "/usr/lib/libfoo.so.1"));
  EXPECT_TRUE(pattern_matches("^**x**$", "x"));
  EXPECT_FALSE(pattern_matches("^a*b*c$", "acb"));
}

TEST(PatternMatches, EmptyTextNeverMatches) {
  EXPECT_FALSE(pattern_matches("*", ""));
  EXPECT_FALSE(pattern_matches("^$", ""));
  EXPECT_FALSE(pattern_matches("^$", "x"));
}

TEST(SuppressionsMatch, FunctionModuleBasenameAndFile) {
  LeakGroup g = group_of({
      symbol_frame(0x1000, "/usr/lib/libvendor.so.1", 0x10, "vendor_alloc"),
      debug_frame(0x2000, "caller", "src/app/main.cc", 12, 3),
  });
  auto matches = [&](std::string_view text) { return Suppressions::parse(text, "t").matches(g); };
  EXPECT_TRUE(matches("leak:vendor_alloc"));           // function, substring
  EXPECT_TRUE(matches("leak:^caller$"));               // function of a later frame
  EXPECT_TRUE(matches("leak:^/usr/lib/libvendor"));    // module path
  EXPECT_TRUE(matches("leak:^libvendor.so.1$"));       // module basename
  EXPECT_TRUE(matches("leak:^leaky$"));                // debug_frame's module basename
  EXPECT_TRUE(matches("leak:src/app/*.cc$"));          // source file
  EXPECT_TRUE(matches("leak:nothing\nleak:main.cc"));  // any pattern
  EXPECT_FALSE(matches("leak:^vendor$"));
  EXPECT_FALSE(matches("leak:^libvendor.so$"));
  EXPECT_FALSE(matches("leak:other"));
  EXPECT_FALSE(matches(""));
}

TEST(SuppressionsMatch, EmptyStackAndEmptyFieldsNeverMatch) {
  Suppressions all = Suppressions::parse("leak:*", "t");
  EXPECT_FALSE(all.matches(group_of({})));
  EXPECT_FALSE(all.matches(group_of({Frame{}})));
  EXPECT_TRUE(all.matches(group_of({symbol_frame(0x1, "", 0, "f")})));
}

TEST(SuggestSuppression, FirstFunctionOutsideTheRuntime) {
  LeakGroup g = group_of({
      symbol_frame(0x1, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 0x1,
                   "operator new(unsigned long)"),
      symbol_frame(0x2, "/lib/x86_64-linux-gnu/libc.so.6", 0x2, "strdup"),
      symbol_frame(0x3, "/lib64/ld-linux-x86-64.so.2", 0x3, "_dl_x"),
      symbol_frame(0x4, "/lib/x86_64-linux-gnu/libm.so.6", 0x4, "m"),
      symbol_frame(0x5, "/lib/x86_64-linux-gnu/libgcc_s.so.1", 0x5, "g"),
      symbol_frame(0x6, "/usr/lib/libvendor.so.1", 0x6, ""),
      debug_frame(0x7, "make_widget", "w.c", 3, 1),
      debug_frame(0x8, "main", "w.c", 9, 1),
  });
  EXPECT_EQ(suggest_suppression(g), "leak:^make_widget$");
}

TEST(SuggestSuppression, FallsBackToRuntimeFunctionThenModuleThenFile) {
  LeakGroup runtime_only = group_of({
      symbol_frame(0x1, "", 0, ""),
      symbol_frame(0x2, "/lib/x86_64-linux-gnu/libc.so.6", 0x2, "strdup"),
  });
  EXPECT_EQ(suggest_suppression(runtime_only), "leak:^strdup$");

  LeakGroup no_names = group_of({
      symbol_frame(0x1, "/lib/x86_64-linux-gnu/libc.so.6", 0x1, ""),
      symbol_frame(0x2, "/opt/app/libplugin.so", 0x2, ""),
  });
  EXPECT_EQ(suggest_suppression(no_names), "leak:^libplugin.so$");

  LeakGroup runtime_modules =
      group_of({symbol_frame(0x1, "/lib/x86_64-linux-gnu/libc.so.6", 1, "")});
  EXPECT_EQ(suggest_suppression(runtime_modules), "leak:^libc.so.6$");

  Frame file_only;
  file_only.file = "gen/x.c";
  EXPECT_EQ(suggest_suppression(group_of({Frame{}, file_only})), "leak:^gen/x.c$");

  EXPECT_EQ(suggest_suppression(group_of({})), "");
  EXPECT_EQ(suggest_suppression(group_of({Frame{}})), "");
}

TEST(SuggestSuppression, SpecialCharactersBecomeWildcards) {
  auto suggest = [](std::string function) {
    return suggest_suppression(group_of({symbol_frame(0x1, "/bin/app", 1, std::move(function))}));
  };
  EXPECT_EQ(suggest("operator*(A const&, B const&)"), "leak:^operator*(A const&, B const&)$");
  EXPECT_EQ(suggest("^block_invoke"), "leak:^*block_invoke$");
  EXPECT_EQ(suggest("Foo$Bar$"), "leak:^Foo*Bar*$");
  EXPECT_EQ(suggest("a #b"), "leak:^a *b$");  // would start a trailing comment
  EXPECT_EQ(suggest("a#b"), "leak:^a#b$");
  EXPECT_EQ(suggest("#x"), "leak:^#x$");
  EXPECT_EQ(suggest("two\nlines"), "leak:^two*lines$");
  EXPECT_EQ(suggest(" padded "), "leak:^ padded $");
}

// The property the CLI relies on: a printed entry suppresses the group it was printed for.
void expect_round_trip(const LeakGroup& g) {
  std::string entry = suggest_suppression(g);
  ASSERT_FALSE(entry.empty());
  EXPECT_TRUE(Suppressions::parse(entry, "generated").matches(g)) << entry;
}

TEST(SuggestSuppression, RoundTripForShapedGroups) {
  expect_round_trip(group_of({debug_frame(0x1, "read_config", "leaky.c", 3, 4)}));
  expect_round_trip(group_of({symbol_frame(0x1, "/lib/x86_64-linux-gnu/libc.so.6", 1, "strdup")}));
  expect_round_trip(group_of({symbol_frame(0x1, "/opt/libp.so", 1, "")}));
  expect_round_trip(group_of({symbol_frame(0x1, "libp.so", 1, "")}));  // no directory
  expect_round_trip(group_of({symbol_frame(0x1, "/odd/dir/", 1, "")}));
  expect_round_trip(group_of({symbol_frame(0x1, "/", 1, "")}));
  expect_round_trip(
      group_of({Frame{}, symbol_frame(0x1, "", 0, "std::vector<char*>::push_back(char* const&)")}));
  expect_round_trip(group_of({symbol_frame(0x1, "", 0, "*"), symbol_frame(0x2, "", 0, "$")}));
  expect_round_trip(group_of({symbol_frame(0x1, "", 0, "^")}));
  expect_round_trip(group_of({symbol_frame(0x1, "", 0, "leak:^x$ # y")}));
  expect_round_trip(group_of({symbol_frame(0x1, "", 0, " ")}));
  expect_round_trip(group_of({symbol_frame(0x1, "", 0, "\t#")}));
  Frame file_only;
  file_only.file = "#weird file$.c";
  expect_round_trip(group_of({file_only}));
}

TEST(SuggestSuppression, RoundTripForRandomNames) {
  std::mt19937 rng(12345);  // fixed seed: deterministic
  const std::string alphabet = "ab:*^$# \t\r\n\\/.()<>,&~'\"\x01\x7f\xc3\xa9";
  auto random_string = [&](size_t max_len) {
    std::string s(rng() % (max_len + 1), ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
  };
  for (int i = 0; i < 2000; ++i) {
    std::vector<Frame> stack(1 + rng() % 3);
    for (Frame& f : stack) {
      if (rng() % 2) f.function = random_string(12);
      if (rng() % 2) f.module = random_string(12);
      if (rng() % 2) f.file = random_string(12);
      if (rng() % 4 == 0) f.module = "/lib/x86_64-linux-gnu/libc.so.6";
    }
    LeakGroup g = group_of(stack);
    std::string entry = suggest_suppression(g);
    bool named = false;
    for (const Frame& f : stack)
      named = named || !f.function.empty() || !f.module.empty() || !f.file.empty();
    if (!named) {
      EXPECT_EQ(entry, "");
      continue;
    }
    ASSERT_NO_THROW(Suppressions::parse(entry, "generated")) << entry;
    EXPECT_TRUE(Suppressions::parse(entry, "generated").matches(g)) << entry;
  }
}

}  // namespace
}  // namespace memtrack::report
