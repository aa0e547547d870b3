// Column layout of the memtrack top table (see table_format.h).
#include "top/table_format.h"

#include <fmt/format.h>

#include <cmath>

namespace memtrack::top {
namespace {

// Fields: PID(7) USER(8) RSS PSS USS SWAP GROWTH /MIN (8 each) G(1) COMMAND, one space apart.
constexpr size_t kMemoryStart = 17;   // the RSS field
constexpr size_t kCommandStart = 73;  // after G
constexpr size_t kUserWidth = 8;

// Cuts `line` to `width` bytes without splitting a UTF-8 sequence.
void cut(std::string* line, size_t width) {
  if (width == 0 || line->size() <= width) return;
  size_t end = width;
  while (end > 0 && (static_cast<unsigned char>((*line)[end]) & 0xC0) == 0x80) --end;
  line->resize(end);
}

std::string user_field(const std::string& user) {
  // ps's convention: a name too long for the column ends in '+'.
  return user.size() <= kUserWidth ? user : user.substr(0, kUserWidth - 1) + "+";
}

std::string scaled(double kb) {
  double magnitude = std::fabs(kb);
  if (magnitude < 100000) return fmt::format("{}K", static_cast<int64_t>(std::llround(kb)));
  if (magnitude < 100000.0 * 1024) return fmt::format("{:.1f}M", kb / 1024);
  return fmt::format("{:.1f}G", kb / (1024.0 * 1024));
}

std::string with_sign(double kb) {
  if (std::llround(kb) == 0) return "0";
  return (kb > 0 ? "+" : "") + scaled(kb);
}

}  // namespace

std::string format_kb(std::optional<uint64_t> kb) {
  return kb ? scaled(static_cast<double>(*kb)) : "-";
}

std::string format_signed_kb(int64_t kb) {
  return with_sign(static_cast<double>(kb));
}

std::string format_rate(std::optional<double> kb_per_min) {
  return kb_per_min ? with_sign(*kb_per_min) : "-";
}

std::string format_cpu_time(uint64_t ticks, uint64_t ticks_per_second) {
  if (ticks_per_second == 0) ticks_per_second = 100;
  uint64_t hundredths = ticks * 100 / ticks_per_second;
  return fmt::format("{}:{:02}.{:02}", hundredths / 6000, hundredths / 100 % 60, hundredths % 100);
}

std::string format_header(size_t width) {
  std::string line = fmt::format("{:>7} {:<8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} G COMMAND", "PID",
                                 "USER", "RSS", "PSS", "USS", "SWAP", "GROWTH", "/MIN");
  cut(&line, width);
  return line;
}

std::string format_row(const ViewRow& row, size_t width, uint64_t ticks_per_second) {
  const ProcessRow& p = *row.process;
  std::string line;
  if (row.thread != nullptr) {
    const ThreadInfo& t = *row.thread;
    std::string about = fmt::format("tgid {:<7}  {}  cpu {:>8}", t.tgid, t.state,
                                    format_cpu_time(t.cpu_ticks, ticks_per_second));
    line = fmt::format("{:>7} {:<8} {:<{}}{}{}", t.tid, "", about, kCommandStart - kMemoryStart,
                       row.tree_prefix, t.name);
  } else {
    const ProcessInfo& i = p.info;
    line = fmt::format("{:>7} {:<8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {} {}{}", i.pid,
                       user_field(p.user), format_kb(i.rss_kb), format_kb(i.pss_kb),
                       format_kb(i.uss_kb), format_kb(i.swap_kb), format_signed_kb(p.growth_kb),
                       format_rate(p.kb_per_min), p.growing ? '^' : ' ', row.tree_prefix,
                       display_command(i));
  }
  cut(&line, width);
  return line;
}

std::pair<size_t, size_t> header_span(SortColumn column) {
  switch (column) {
    case SortColumn::kPid:
      return {0, 7};
    case SortColumn::kUser:
      return {8, kUserWidth};
    case SortColumn::kCommand:
      return {kCommandStart, 7};
    default:  // the memory columns, 8 wide, in enum order from RSS
      size_t index = static_cast<size_t>(column) - static_cast<size_t>(SortColumn::kRss);
      return {kMemoryStart + index * 9, 8};
  }
}

std::string format_table(const std::vector<ViewRow>& rows, size_t width,
                         uint64_t ticks_per_second) {
  std::string out = format_header(width) + "\n";
  for (const ViewRow& row : rows) {
    out += format_row(row, width, ticks_per_second);
    out += '\n';
  }
  return out;
}

}  // namespace memtrack::top
