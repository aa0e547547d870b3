// Real-program workload for bench/compare.py: the translation unit that `g++ -O2 -c` compiles
// (the driver, cc1plus and as run as three processes). Ordinary application code over the
// standard library headers most programs include; never linked or run.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace inventory {

struct Item {
  std::string name;
  std::string category;
  int64_t price_cents = 0;
  int quantity = 0;
  std::vector<std::string> tags;
};

class Catalog {
 public:
  void add(Item item) {
    by_category_[item.category].push_back(items_.size());
    items_.push_back(std::move(item));
  }

  std::optional<Item> find(const std::string& name) const {
    auto it = std::find_if(items_.begin(), items_.end(),
                           [&](const Item& item) { return item.name == name; });
    if (it == items_.end()) return std::nullopt;
    return *it;
  }

  int64_t value_of(const std::string& category) const {
    auto it = by_category_.find(category);
    if (it == by_category_.end()) return 0;
    return std::accumulate(it->second.begin(), it->second.end(), int64_t{0},
                           [&](int64_t sum, std::size_t i) {
                             return sum + items_[i].price_cents * items_[i].quantity;
                           });
  }

  std::map<std::string, int> quantities() const {
    std::map<std::string, int> out;
    for (const Item& item : items_) out[item.category] += item.quantity;
    return out;
  }

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, std::vector<std::size_t>> by_category_;
};

std::string format_price(int64_t cents) {
  std::ostringstream out;
  out << cents / 100 << '.' << (cents % 100 < 10 ? "0" : "") << cents % 100;
  return out.str();
}

}  // namespace inventory

namespace text {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
  return parts;
}

std::map<std::string, std::size_t> word_counts(const std::vector<std::string>& lines) {
  std::map<std::string, std::size_t> counts;
  for (const std::string& line : lines) {
    for (const std::string& word : split(line, ' ')) {
      if (!word.empty()) ++counts[word];
    }
  }
  return counts;
}

}  // namespace text

int run_all() {
  inventory::Catalog catalog;
  for (int i = 0; i < 100; ++i) {
    catalog.add({"item" + std::to_string(i),
                 "cat" + std::to_string(i % 7),
                 100 + i * 37,
                 i % 13,
                 {"t" + std::to_string(i % 5), "u" + std::to_string(i % 3)}});
  }
  std::cout << inventory::format_price(catalog.value_of("cat3")) << '\n';
  for (const auto& [category, quantity] : catalog.quantities()) {
    std::cout << category << ' ' << quantity << '\n';
  }
  auto counts = text::word_counts({"a b c a", "b c d", "a a a"});
  std::cout << counts.size() << '\n';
  return static_cast<int>(catalog.find("item7").has_value());
}
