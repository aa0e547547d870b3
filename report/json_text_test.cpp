// JsonText writes what nlohmann::json's dump() writes for the same values: layout at every
// indentation and starting depth, escapes, and U+FFFD for invalid UTF-8.
#include "report/json_text.h"

#include <gtest/gtest.h>

#include <string>

namespace memtrack::report {
namespace {

using nlohmann::ordered_json;

std::string dumped(const ordered_json& v, int indent) {
  return v.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The same document twice: written with JsonText, and built as an nlohmann document.
struct Both {
  std::string text;
  ordered_json doc;
};

Both sample(int indent) {
  Both both;
  JsonText j(both.text, indent);
  const std::string odd = std::string("tab\tquote\"back\\slash\x01 caf\xc3\xa9 bad\xff\xfe end");
  j.begin_object();
  j.member("name", "plain");
  j.member("odd", odd);
  j.member("count", uint64_t{18446744073709551615u});
  j.member("negative", int64_t{-42});
  j.member("yes", true);
  j.key("nothing").null();
  j.key("empty_object").begin_object();
  j.end_object();
  j.key("empty_array").begin_array();
  j.end_array();
  j.key("list").begin_array();
  j.number(1);
  j.string("two");
  j.begin_object();
  j.member("deep", "x");
  j.key("deeper").begin_array();
  j.begin_array();
  j.end_array();
  j.end_array();
  j.end_object();
  j.end_array();
  j.key("built").value(ordered_json{{"a", {1, 2}}, {"b", ordered_json::object()}});
  j.end_object();
  both.doc = {{"name", "plain"},
              {"odd", odd},
              {"count", uint64_t{18446744073709551615u}},
              {"negative", -42},
              {"yes", true},
              {"nothing", nullptr},
              {"empty_object", ordered_json::object()},
              {"empty_array", ordered_json::array()},
              {"list", {1, "two", {{"deep", "x"}, {"deeper", {ordered_json::array()}}}}},
              {"built", {{"a", {1, 2}}, {"b", ordered_json::object()}}}};
  return both;
}

TEST(JsonText, PrettyAsNlohmannDumps) {
  Both both = sample(2);
  EXPECT_EQ(both.text, dumped(both.doc, 2));
  Both four = sample(4);
  EXPECT_EQ(four.text, dumped(four.doc, 4));
}

TEST(JsonText, OneLineAsNlohmannDumps) {
  Both both = sample(-1);
  EXPECT_EQ(both.text, dumped(both.doc, -1));
}

TEST(JsonText, EveryAsciiCharacterEscapedAsNlohmannDoes) {
  std::string all;
  for (int c = 0; c < 0x80; ++c) all += static_cast<char>(c);
  for (int indent : {-1, 2}) {
    std::string text;
    JsonText j(text, indent);
    j.string(all);
    EXPECT_EQ(text, dumped(ordered_json(all), indent));
  }
}

TEST(JsonText, InvalidUtf8BecomesReplacementCharacters) {
  std::string text;
  JsonText j(text, -1);
  j.string("a\xc3(b\xed\xa0\x80");
  EXPECT_EQ(text, dumped(ordered_json(std::string("a\xc3(b\xed\xa0\x80")), -1));
  EXPECT_NE(text.find("\xef\xbf\xbd"), std::string::npos) << text;
}

// A value written at a depth inside a document written by other means: as the same value
// nested that deep.
TEST(JsonText, StartingDepth) {
  std::string text = "[\n  ";
  JsonText j(text, 2, 1);
  j.begin_object();
  j.member("k", "v");
  j.key("list").begin_array();
  j.number(3);
  j.end_array();
  j.end_object();
  text += "\n]";
  EXPECT_EQ(text, dumped(ordered_json::array({{{"k", "v"}, {"list", {3}}}}), 2));
}

}  // namespace
}  // namespace memtrack::report
