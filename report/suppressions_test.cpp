// Tests for suppressions: file syntax and errors, pattern semantics, matching groups, and the
// frames that count (printed ones), valgrind-style blocks.
#include "report/suppressions.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <fmt/format.h>
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
  // The first meaningful line decides the format: this file is LeakSanitizer's.
  EXPECT_EQ(parse_error("leak:x\n{\n"),
            "supp.txt:2: '{' is not a suppression; expected leak:PATTERN");
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

// ---- Which frames count ----

Frame libc_start() {
  return symbol_frame(0x7f0000001000, testing::kLibc, 0x271ca, "__libc_start_call_main");
}

TEST(SuppressionsMatch, OnlyPrintedFramesCount) {
  // What every program's stack ends with: frames below main are never printed.
  LeakGroup in_main = group_of({
      debug_frame(0x1, "main", "prog.c", 3, 1),
      libc_start(),
      symbol_frame(0x7f0000002000, testing::kLibc, 0x27285, "__libc_start_main_impl"),
      symbol_frame(0x3, "/work/build/leaky", 0x3, "_start"),
  });
  for (const char* text :
       {"leak:libc.so.6", "leak:start", "leak:__libc_start_main", "leak:_start", "leak:^_start$"}) {
    EXPECT_FALSE(Suppressions::parse(text, "t").matches(in_main)) << text;
    EXPECT_FALSE(Suppressions::parse(text, "t").matches_descriptors(in_main.stack)) << text;
  }
  EXPECT_TRUE(Suppressions::parse("leak:^main$", "t").matches(in_main));
  // strdup's frame is printed: the libc module matches there.
  LeakGroup via_strdup = group_of({
      symbol_frame(0x7f0000003000, testing::kLibc, 0x9a000, "strdup"),
      debug_frame(0x1, "main", "prog.c", 3, 1),
      libc_start(),
  });
  EXPECT_TRUE(Suppressions::parse("leak:libc.so.6", "t").matches(via_strdup));
  // A thread's stack has no main: all of it is printed.
  LeakGroup in_thread = group_of({
      debug_frame(0x1, "worker", "prog.c", 3, 1),
      symbol_frame(0x7f0000004000, testing::kLibc, 0x94ac3, "start_thread"),
  });
  EXPECT_TRUE(Suppressions::parse("leak:start_thread", "t").matches(in_thread));
}

// ---- valgrind-style blocks ----

TEST(GlobMatches, StarAndQuestionMark) {
  EXPECT_TRUE(glob_matches("foo", "foo"));
  EXPECT_FALSE(glob_matches("foo", "xfoo"));  // whole text
  EXPECT_TRUE(glob_matches("f?o", "fxo"));
  EXPECT_FALSE(glob_matches("f?o", "fo"));
  EXPECT_TRUE(glob_matches("*::push_back(*)", "std::vector<int>::push_back(int&&)"));
  EXPECT_TRUE(glob_matches("operator*(A)", "operator*(A)"));
  EXPECT_TRUE(glob_matches("*", ""));
  EXPECT_FALSE(glob_matches("?", ""));
}

std::string block(std::string_view frames, std::string_view kind = "Memcheck:Leak",
                  std::string_view extra = "") {
  return fmt::format("{{\n   name\n   {}\n{}{}}}\n", kind, extra, frames);
}

LeakGroup three_deep() {
  return group_of({
      debug_frame(0x1, "make_widget", "src/widget.c", 10, 5),
      debug_frame(0x2, "init", "src/app.c", 20, 5),
      debug_frame(0x3, "main", "src/app.c", 30, 5),
      libc_start(),
  });
}

bool block_matches(std::string_view frames, const LeakGroup& g) {
  return Suppressions::parse(block(frames), "t").matches(g);
}

TEST(SuppressionsBlock, FramesMatchFromFrameZeroInOrder) {
  LeakGroup g = three_deep();
  EXPECT_TRUE(block_matches("fun:make_widget\n", g));  // a prefix is enough
  EXPECT_TRUE(block_matches("fun:make_widget\nfun:init\nfun:main\n", g));
  EXPECT_FALSE(block_matches("fun:init\n", g));  // not at frame 0
  EXPECT_FALSE(block_matches("fun:init\nfun:make_widget\n", g));
  EXPECT_FALSE(block_matches("fun:make_widget\nfun:init\nfun:main\nfun:*\n", g));  // below main
  EXPECT_TRUE(block_matches("fun:make_*\nfun:i?it\n", g));
  EXPECT_TRUE(block_matches("...\nfun:init\n", g));
  EXPECT_TRUE(block_matches("...\nfun:main\n", g));
  EXPECT_FALSE(block_matches("...\nfun:__libc_start_call_main\n", g));
  EXPECT_TRUE(block_matches("fun:make_widget\n...\nfun:main\n", g));
  EXPECT_TRUE(block_matches("fun:make_widget\n...\n...\nfun:init\n...\n", g));
  EXPECT_TRUE(block_matches("obj:/work/build/leaky\nobj:*/leaky\n", g));
  EXPECT_FALSE(block_matches("obj:leaky\n", g));  // obj: is the full path
  EXPECT_TRUE(block_matches("src:widget.c\n", g));
  EXPECT_TRUE(block_matches("src:src/widget.c:10\nsrc:app.c:20\n", g));
  EXPECT_FALSE(block_matches("src:widget.c:11\n", g));
}

TEST(SuppressionsBlock, WholeMangledNamesAreDemangled) {
  LeakGroup g = group_of({debug_frame(0x1, "Parser::parse(char const*)", "p.cc", 3, 1),
                          debug_frame(0x2, "main", "p.cc", 9, 1)});
  EXPECT_TRUE(block_matches("fun:_ZN6Parser5parseEPKc\nfun:main\n", g));
  EXPECT_TRUE(block_matches("fun:Parser::parse(*)\n", g));
  EXPECT_FALSE(block_matches("fun:_ZN6Parser*\n", g));  // a glob stays mangled
}

TEST(SuppressionsBlock, LeakKinds) {
  LeakGroup g = three_deep();
  auto matches = [&](std::string_view kinds, LeakKind kind) {
    g.kind = kind;
    return Suppressions::parse(block("fun:make_widget\n", "Memcheck:Leak", kinds), "t").matches(g);
  };
  EXPECT_TRUE(matches("", LeakKind::kReachable));
  EXPECT_TRUE(matches("match-leak-kinds: definite,possible\n", LeakKind::kPossible));
  EXPECT_FALSE(matches("match-leak-kinds: definite,possible\n", LeakKind::kIndirect));
  EXPECT_TRUE(matches("match-leak-kinds: all\n", LeakKind::kReachable));
  EXPECT_FALSE(matches("match-leak-kinds: none\n", LeakKind::kDefinite));
  EXPECT_TRUE(matches("match-leak-kinds: reachable\n", LeakKind::kUnclassified));
}

TEST(SuppressionsBlock, DescriptorsAndOtherKinds) {
  LeakGroup g = three_deep();
  for (const char* kind : {"memtrack:FdLeak", "CoreError:FdNotClosed"}) {
    Suppressions s = Suppressions::parse(block("fun:make_widget\n", kind), "t");
    EXPECT_TRUE(s.matches_descriptors(g.stack)) << kind;
    EXPECT_FALSE(s.matches(g)) << kind;
  }
  Suppressions leak = Suppressions::parse(block("fun:make_widget\n"), "t");
  EXPECT_FALSE(leak.matches_descriptors(g.stack));
  // Other tools' and error kinds' blocks are skipped whole (Param has an extra line).
  Suppressions other =
      Suppressions::parse(block("fun:make_widget\n", "Memcheck:Free") +
                              block("fun:x\n", "Memcheck:Param", "write(buf)\n") +
                              block("fun:make_widget\n", "Helgrind:Race") + block("fun:nothing\n"),
                          "t");
  EXPECT_EQ(other.ignored_blocks(), 3u);
  EXPECT_EQ(other.blocks().size(), 1u);
  EXPECT_FALSE(other.matches(g));
}

TEST(SuppressionsBlock, ValgrindAllocatorFrameIsDropped) {
  // valgrind's own --gen-suppressions output starts in the allocator.
  LeakGroup via_strdup = group_of({
      symbol_frame(0x7f0000003000, testing::kLibc, 0x9a000, "strdup"),
      debug_frame(0x1, "main", "prog.c", 3, 1),
  });
  EXPECT_TRUE(block_matches("fun:malloc\nfun:strdup\nfun:main\n", via_strdup));
  EXPECT_TRUE(block_matches(
      "obj:/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so\nfun:strdup\n", via_strdup));
  EXPECT_TRUE(block_matches("fun:_Znwm\nfun:make_widget\n", three_deep()));
  EXPECT_TRUE(block_matches("fun:_Znam\nfun:make_widget\n", three_deep()));
  EXPECT_TRUE(block_matches("fun:operator new(unsigned long)\nfun:make_widget\n", three_deep()));
}

TEST(SuppressionsBlock, FormatChosenPerFileAndComments) {
  Suppressions s = Suppressions::parse(
      "# a comment\n\n{\n  # inside\n  first\n  Memcheck:Leak\n  fun:a\n}\n# between\n"
      "{\nsecond\nMemcheck:Leak\nmatch-leak-kinds: definite\n...\nfun:b\n}\n",
      "t");
  ASSERT_EQ(s.blocks().size(), 2u);
  EXPECT_EQ(s.blocks()[0].name, "first");
  EXPECT_EQ(s.blocks()[1].frames.size(), 2u);
  EXPECT_TRUE(s.patterns().empty());
  Suppressions both = Suppressions::parse("leak:x\n", "a");
  both.append(s);
  EXPECT_EQ(both.size(), 3u);
}

TEST(SuppressionsBlock, ErrorsNameFileAndLine) {
  EXPECT_EQ(parse_error("{\nname\nMemcheck:Leak\nfun:a\n}\nleak:x\n"),
            "supp.txt:6: 'leak:x' is not '{' (a block's start)");
  EXPECT_EQ(parse_error("{\nname\nMemcheck:Leak\nfun:a\n"),
            "supp.txt:1: block is not closed with '}'");
  EXPECT_EQ(parse_error("{\n}\n"), "supp.txt:2: block has no name");
  EXPECT_EQ(parse_error("{\nname\nLeak\nfun:a\n}\n"),
            "supp.txt:3: 'Leak' is not TOOL:KIND (e.g. Memcheck:Leak)");
  EXPECT_EQ(parse_error("{\nname\nMemcheck:Leak\nfoo:a\n}\n"),
            "supp.txt:4: 'foo:a' is not a frame line; expected fun:, obj:, src:, ... or '}'");
  EXPECT_EQ(parse_error("{\nname\nMemcheck:Leak\nfun:\n}\n"),
            "supp.txt:4: 'fun:' is not a frame line; expected fun:, obj:, src:, ... or '}'");
  EXPECT_EQ(parse_error("{\nname\nMemcheck:Leak\n}\n"),
            "supp.txt:4: block 'name' has no frame lines");
  EXPECT_EQ(parse_error("{\nname\nMemcheck:Leak\nmatch-leak-kinds: lost\nfun:a\n}\n"),
            "supp.txt:4: match-leak-kinds expects all, none or a comma-separated list of "
            "definite, indirect, possible, reachable, not 'lost'");
}

TEST(SuppressionsMatch, NamesTheEntryThatMatchedAndWhereItIsWritten) {
  Suppressions all = Suppressions::parse("# lsan\nleak:nothing\n\nleak:vendor_*\n", "a.supp");
  all.append(Suppressions::parse(
      "{\n  first-block\n  Memcheck:Leak\n  fun:mine\n}\n"
      "# the same frames again\n{\n  second-block\n  Memcheck:Leak\n  fun:mine\n}\n",
      "b.supp"));
  ASSERT_EQ(all.size(), 4u);
  LeakGroup vendor;
  vendor.stack = {Frame{}, Frame{}};
  vendor.stack[0].function = "vendor_alloc";
  vendor.stack[1].function = "main";
  LeakGroup mine;
  mine.stack = {Frame{}, Frame{}};
  mine.stack[0].function = "mine";
  mine.stack[1].function = "main";
  LeakGroup other;
  other.stack = {Frame{}};
  other.stack[0].function = "other";
  EXPECT_EQ(all.match(vendor), std::optional<size_t>(1));
  EXPECT_EQ(all.match(mine), std::optional<size_t>(2));  // the first block that matches
  EXPECT_EQ(all.match(other), std::nullopt);
  EXPECT_EQ(all.entry_name(1), "leak:vendor_*");
  EXPECT_EQ(all.entry_origin(1), "a.supp:4");
  EXPECT_EQ(all.entry_name(2), "first-block");
  EXPECT_EQ(all.entry_origin(2), "b.supp:1");
  EXPECT_EQ(all.entry_name(3), "second-block");
  EXPECT_EQ(all.entry_origin(3), "b.supp:7");
  EXPECT_EQ(all.match_descriptors(vendor.stack), std::optional<size_t>(1));
  EXPECT_EQ(all.match_descriptors(mine.stack), std::nullopt);  // leak blocks: leaks only
}

}  // namespace
}  // namespace memtrack::report
