// A JSON writer that appends text to a string as it goes, without building a document: the
// reports of hundreds of processes with hundreds of groups each are gigabytes as
// nlohmann::json documents, and seconds to build. Its output is byte for byte what
// nlohmann::json's dump(indent, ' ', false, error_handler_t::replace) gives for the same
// values (json_text_test.cpp checks): the same layout, escapes and U+FFFD for invalid UTF-8.
// Ordinary C++. Not thread safe; one per output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace memtrack::report {

class JsonText {
 public:
  // Appends to `out`. `indent`: spaces per level, or -1 for one line; `depth`: the level the
  // first value is written at (inside a document written by other means).
  JsonText(std::string& out, int indent, unsigned depth = 0);

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // An object's member: its key, then one value.
  JsonText& key(std::string_view name);

  void string(std::string_view text);
  void number(uint64_t n);
  void number(int64_t n);
  void number(int n) { number(static_cast<int64_t>(n)); }
  void number(unsigned n) { number(static_cast<uint64_t>(n)); }
  void boolean(bool b);
  void null();
  // A value built as a document (for the small parts other code hands over as such).
  void value(const nlohmann::ordered_json& v);

  // key(name) and the value, in one call.
  template <typename T>
  void member(std::string_view name, T&& v) {
    key(name);
    put(std::forward<T>(v));
  }

 private:
  void put(std::string_view s) { string(s); }
  void put(const std::string& s) { string(s); }
  void put(const char* s) { string(s); }
  void put(bool b) { boolean(b); }
  void put(uint64_t n) { number(n); }
  void put(int64_t n) { number(n); }
  void put(int n) { number(n); }
  void put(unsigned n) { number(n); }
  void put(const nlohmann::ordered_json& v) { value(v); }

  // The comma, line break and indentation before a value (not after a key).
  void before_value();
  void newline(size_t depth);
  void escaped(std::string_view text);

  struct Level {
    bool object;
    size_t count = 0;
  };
  std::string& out_;
  int indent_;
  unsigned base_depth_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

}  // namespace memtrack::report
