// Parsers of /proc/PID/{stat,status,statm,smaps_rollup,cmdline}; formats from proc(5).
#include "proc/proc_parse.h"

#include <charconv>

namespace memtrack::top {
namespace {

template <typename T>
bool parse_number(std::string_view text, T* value) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size();
}

std::string_view trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(" \t\n");
  return text.substr(begin, end - begin + 1);
}

// Splits off the next word (separated by spaces or tabs) of *rest ("" when there is none).
std::string_view next_word(std::string_view* rest) {
  size_t begin = rest->find_first_not_of(" \t");
  if (begin == std::string_view::npos) {
    *rest = {};
    return {};
  }
  size_t end = rest->find_first_of(" \t\n", begin);
  if (end == std::string_view::npos) end = rest->size();
  std::string_view word = rest->substr(begin, end - begin);
  *rest = rest->substr(end);
  return word;
}

// "  1234 kB" -> 1234.
std::optional<uint64_t> parse_kb(std::string_view value) {
  std::string_view rest = value;
  uint64_t n = 0;
  if (!parse_number(next_word(&rest), &n)) return std::nullopt;
  std::string_view unit = next_word(&rest);
  if (unit != "kB" || !next_word(&rest).empty()) return std::nullopt;
  return n;
}

// Calls visit(key, value) for each "Key: value" line.
template <typename Visit>
void for_each_field(std::string_view text, Visit visit) {
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos) visit(line.substr(0, colon), line.substr(colon + 1));
  }
}

}  // namespace

std::optional<StatFields> try_parse_stat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  StatFields out;
  if (!parse_number(trim(text.substr(0, open)), &out.pid)) return std::nullopt;
  out.comm = std::string(text.substr(open + 1, close - open - 1));
  for (char& c : out.comm) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  std::string_view rest = text.substr(close + 1);
  // Fields 3..22; the ones not named here are skipped (some are signed).
  for (int field = 3; field <= 22; ++field) {
    std::string_view word = next_word(&rest);
    if (word.empty()) return std::nullopt;
    bool ok = true;
    switch (field) {
      case 3:
        ok = word.size() == 1;
        out.state = word[0];
        break;
      case 4:
        ok = parse_number(word, &out.ppid);
        break;
      case 9:
        ok = parse_number(word, &out.flags);
        break;
      case 14:
        ok = parse_number(word, &out.utime);
        break;
      case 15:
        ok = parse_number(word, &out.stime);
        break;
      case 20:
        ok = parse_number(word, &out.num_threads);
        break;
      case 22:
        ok = parse_number(word, &out.start_ticks);
        break;
      default:
        break;
    }
    if (!ok) return std::nullopt;
  }
  return out;
}

StatusFields parse_status(std::string_view text) {
  StatusFields out;
  for_each_field(text, [&out](std::string_view key, std::string_view value) {
    if (key == "Uid") {
      std::string_view rest = value;
      next_word(&rest);  // the real uid; ps and top show the effective one
      uint32_t euid = 0;
      if (parse_number(next_word(&rest), &euid)) out.euid = euid;
    } else if (key == "VmRSS") {
      out.vm_rss_kb = parse_kb(value);
    } else if (key == "VmSwap") {
      out.vm_swap_kb = parse_kb(value);
    }
  });
  return out;
}

std::optional<uint64_t> try_parse_statm_resident_pages(std::string_view text) {
  std::string_view rest = text;
  uint64_t size = 0;
  uint64_t resident = 0;
  if (!parse_number(next_word(&rest), &size) || !parse_number(next_word(&rest), &resident)) {
    return std::nullopt;
  }
  return resident;
}

std::optional<RollupFields> try_parse_smaps_rollup(std::string_view text) {
  std::optional<uint64_t> pss, private_clean, private_dirty, swap;
  for_each_field(text, [&](std::string_view key, std::string_view value) {
    if (key == "Pss") {
      pss = parse_kb(value);
    } else if (key == "Private_Clean") {
      private_clean = parse_kb(value);
    } else if (key == "Private_Dirty") {
      private_dirty = parse_kb(value);
    } else if (key == "Swap") {
      swap = parse_kb(value);
    }
  });
  if (!pss || !private_clean || !private_dirty) return std::nullopt;
  return RollupFields{*pss, *private_clean + *private_dirty, swap};
}

std::string parse_cmdline(std::string_view bytes) {
  while (!bytes.empty() && bytes.back() == '\0') bytes.remove_suffix(1);
  std::string out(bytes);
  for (char& c : out) {
    if (c == '\0') {
      c = ' ';
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      c = '?';
    }
  }
  return out;
}

}  // namespace memtrack::top
