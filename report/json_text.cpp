// The streaming JSON writer (json_text.h).
#include "report/json_text.h"

#include <array>
#include <charconv>
#include <cstdint>

namespace memtrack::report {

JsonText::JsonText(std::string& out, int indent, unsigned depth)
    : out_(out), indent_(indent), base_depth_(depth) {}

void JsonText::newline(size_t depth) {
  if (indent_ < 0) return;
  static constexpr std::string_view kSpaces = "                                ";  // 32
  out_ += '\n';
  for (size_t left = depth * static_cast<size_t>(indent_); left > 0;) {
    size_t n = left < kSpaces.size() ? left : kSpaces.size();
    out_.append(kSpaces.data(), n);
    left -= n;
  }
}

void JsonText::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (level.count++ > 0) out_ += ',';
  newline(base_depth_ + levels_.size());
}

JsonText& JsonText::key(std::string_view name) {
  Level& level = levels_.back();
  if (level.count++ > 0) out_ += ',';
  newline(base_depth_ + levels_.size());
  escaped(name);
  out_ += indent_ >= 0 ? ": " : ":";
  after_key_ = true;
  return *this;
}

void JsonText::begin_object() {
  before_value();
  out_ += '{';
  levels_.push_back(Level{true});
}

void JsonText::begin_array() {
  before_value();
  out_ += '[';
  levels_.push_back(Level{false});
}

void JsonText::end_object() {
  if (levels_.back().count > 0) newline(base_depth_ + levels_.size() - 1);
  out_ += '}';
  levels_.pop_back();
}

void JsonText::end_array() {
  if (levels_.back().count > 0) newline(base_depth_ + levels_.size() - 1);
  out_ += ']';
  levels_.pop_back();
}

void JsonText::string(std::string_view text) {
  before_value();
  escaped(text);
}

// ASCII is escaped here as nlohmann's dump() escapes it (\b \t \n \f \r \" \\, other control
// characters as \u00xx); text with other bytes is left to nlohmann's serializer, so that invalid
// UTF-8 comes out exactly as in its dump() too.
namespace {

// Per byte: 0 copied as it is, 1 escaped, 2 not ASCII.
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    classes[c] = c >= 0x80 ? 2 : (c < 0x20 || c == '"' || c == '\\') ? 1 : 0;
  }
  return classes;
}();

}  // namespace

void JsonText::escaped(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const size_t start = out_.size();
  out_ += '"';
  const char* plain_from = text.data();
  const char* end = text.data() + text.size();
  for (const char* p = text.data(); p != end; ++p) {
    uint8_t kind = kByteClass[static_cast<unsigned char>(*p)];
    if (kind == 0) continue;
    if (kind == 2) {
      // Not ASCII: nlohmann's serializer, for its exact handling of invalid UTF-8.
      out_.resize(start);
      out_ += nlohmann::ordered_json(std::string(text))
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
    }
    out_.append(plain_from, static_cast<size_t>(p - plain_from));
    plain_from = p + 1;
    auto c = static_cast<unsigned char>(*p);
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\b':
        out_ += "\\b";
        break;
      case '\t':
        out_ += "\\t";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\f':
        out_ += "\\f";
        break;
      case '\r':
        out_ += "\\r";
        break;
      default:
        out_ += "\\u00";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 15];
    }
  }
  out_.append(plain_from, static_cast<size_t>(end - plain_from));
  out_ += '"';
}

void JsonText::number(uint64_t n) {
  before_value();
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, n);
  out_.append(buffer, end);
}

void JsonText::number(int64_t n) {
  before_value();
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, n);
  out_.append(buffer, end);
}

void JsonText::boolean(bool b) {
  before_value();
  out_ += b ? "true" : "false";
}

void JsonText::null() {
  before_value();
  out_ += "null";
}

void JsonText::value(const nlohmann::ordered_json& v) {
  before_value();
  unsigned depth = base_depth_ + static_cast<unsigned>(levels_.size());
  if (indent_ < 0) {
    out_ += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  nlohmann::detail::serializer<nlohmann::ordered_json> serializer(
      nlohmann::detail::output_adapter<char>(out_), ' ', nlohmann::json::error_handler_t::replace);
  serializer.dump(v, true, false, static_cast<unsigned>(indent_),
                  depth * static_cast<unsigned>(indent_));
}

}  // namespace memtrack::report
