// Tests of the HTML report's page and model (report/html_renderer.h, source_snippets.h). What
// the page does in a browser is tested with headless Chromium (tests/html).
#include "report/html_renderer.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "report/json_renderer.h"
#include "report/page_data.h"
#include "report/source_snippets.h"
#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

using testing::debug_frame;
using testing::group;

std::string page(const Report& report, const HtmlOptions& options = {}) {
  std::ostringstream out;
  render_html(report, out, "9.8.7", options);
  return out.str();
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string base64_decoded(const std::string& text) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char* at = c == '\0' ? nullptr : strchr(alphabet, c);
    if (at == nullptr) continue;  // '=' and anything else
    bits = bits << 6 | static_cast<uint32_t>(at - alphabet);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xff);
    }
  }
  return out;
}

std::string gunzipped(const std::string& bytes) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string out(bytes.size() * 20 + 1024, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

// The text of the page's data element, up to the first "</script".
std::string data_element(const std::string& html) {
  const std::string open =
      "<script type=\"application/octet-stream\" id=\"memtrack-data\" "
      "data-encoding=\"gzip base64\">";
  size_t start = html.find(open);
  EXPECT_NE(start, std::string::npos);
  start += open.size();
  return html.substr(start, html.find("</script", start) - start);
}

Report hostile_report() {
  Report report = testing::sample_report();
  ProcessReport& p = report.processes.front();
  p.command = {"./prog", "</title><script>alert(1)</script>"};
  p.leaks.front().stack.front().function = "operator<< <std::vector<int> >(a&&b) </script><!--";
  return report;
}

TEST(HtmlRenderer, DataCannotCloseItsScriptElement) {
  Report report = hostile_report();
  std::string html = page(report);
  std::string data = data_element(html);
  EXPECT_EQ(
      data.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
      std::string::npos);
  // Whole: nothing ended the element early.
  nlohmann::json model = nlohmann::json::parse(gunzipped(base64_decoded(data)));
  EXPECT_EQ(model["report"]["processes"][0]["leaks"][0]["stack"][0]["function"],
            "operator<< <std::vector<int> >(a&&b) </script><!--");
  EXPECT_EQ(model["report"]["processes"][0]["command"][1], "</title><script>alert(1)</script>");
}

TEST(HtmlRenderer, TitleIsEscaped) {
  std::string html = page(hostile_report());
  size_t start = html.find("<title>");
  ASSERT_NE(start, std::string::npos);
  EXPECT_EQ(html.substr(start, html.find("</title>") + 8 - start),
            "<title>memtrack report: ./prog &apos;&lt;/title&gt;&lt;script&gt;alert(1)&lt;/"
            "script&gt;&apos;</title>");
  EXPECT_EQ(occurrences(html, "</title>"), 1u);
}

TEST(HtmlRenderer, SelfContainedAndForbidsNetwork) {
  std::string html = page(testing::sample_report());
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(
      html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "),
      std::string::npos);
  EXPECT_EQ(html.find("{{"), std::string::npos) << "a template marker was left";
  // d3, d3-flame-graph, uPlot, seven of memtrack's scripts (profile.js and retention.js among
  // them), and the data.
  EXPECT_EQ(occurrences(html, "<script>"), 10u);
  EXPECT_EQ(occurrences(html, "</script>"), 11u);
  EXPECT_NE(html.find("<meta name=\"generator\" content=\"memtrack 9.8.7\">"), std::string::npos);
}

TEST(HtmlRenderer, ModelIsTheJsonReportWithLiveReportsAndSources) {
  Report report = testing::sample_report();
  HtmlOptions options;
  options.live.push_back({{"type", "live"}, {"pid", 1234}, {"sequence", 1}});
  options.source_snippets = false;
  nlohmann::ordered_json model = html_model(report, "9.8.7", options);
  EXPECT_EQ(model["report"], to_json(report, "9.8.7"));
  ASSERT_EQ(model["live"].size(), 1u);
  EXPECT_EQ(model["live"][0]["sequence"], 1);
  EXPECT_EQ(model["sources"], nlohmann::ordered_json::object());
}

TEST(HtmlRenderer, PageDataIsGzippedJsonInBase64) {
  nlohmann::ordered_json value = {{"f", std::string("a\xff<b")}};
  EXPECT_EQ(gunzipped(base64_decoded(page_data(value))), "{\"f\":\"a\xef\xbf\xbd<b\"}");
}

TEST(HtmlRenderer, Base64) {
  EXPECT_EQ(base64_encoded(""), "");
  EXPECT_EQ(base64_encoded("f"), "Zg==");
  EXPECT_EQ(base64_encoded("fo"), "Zm8=");
  EXPECT_EQ(base64_encoded("foo"), "Zm9v");
  EXPECT_EQ(base64_encoded("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encoded(std::string_view("\xff\xfe\x00", 3)), "//4A");
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  EXPECT_EQ(base64_decoded(base64_encoded(all)), all);
}

class SourceSnippets : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/memtrack_snippets_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/prog.c";
    std::ofstream out(path_);
    for (int n = 1; n <= 12; ++n) out << "line " << n << (n == 6 ? " <here> & more" : "") << "\n";
  }
  void TearDown() override {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_, path_;
};

TEST_F(SourceSnippets, ContextAroundProgramFramesOnly) {
  Report report;
  ProcessReport p;
  p.pid = 1;
  Frame libc = debug_frame(0x7000, "malloc_wrapper", path_, 11, 1);
  libc.module = testing::kLibc;
  p.leaks.push_back(group(
      LeakKind::kDefinite, 10, 1,
      {libc, debug_frame(0x5001, "make", path_, 6, 3), debug_frame(0x5002, "main", path_, 2, 3),
       debug_frame(0x5003, "below_main", path_, 12, 1),
       debug_frame(0x5004, "gone", dir_ + "/missing.c", 4, 1)}));
  // Listed kinds only: a still-reachable group's frame gets no lines.
  p.leaks.push_back(
      group(LeakKind::kReachable, 10, 1, {debug_frame(0x5005, "kept", path_, 10, 1)}));
  report.processes.push_back(p);
  nlohmann::ordered_json sources = source_snippets(report);
  ASSERT_EQ(sources.size(), 1u) << sources.dump();
  const nlohmann::ordered_json& lines = sources[path_];
  std::vector<std::string> numbers;
  for (const auto& [number, text] : lines.items()) numbers.push_back(number);
  // 3..9 around line 6, then 1 (2's context within the file, 3..5 already there).
  EXPECT_EQ(numbers, (std::vector<std::string>{"3", "4", "5", "6", "7", "8", "9", "1", "2"}));
  EXPECT_EQ(lines["6"], "line 6 <here> & more");
  EXPECT_EQ(lines["1"], "line 1");
}

TEST_F(SourceSnippets, StopsAtTheLineBudget) {
  Report report;
  ProcessReport p;
  p.leaks.push_back(group(LeakKind::kDefinite, 10, 1, {debug_frame(0x5001, "make", path_, 6, 3)}));
  report.processes.push_back(p);
  SnippetOptions options;
  options.max_lines = 2;
  nlohmann::ordered_json sources = source_snippets(report, options);
  EXPECT_EQ(sources[path_].size(), 2u);
}

}  // namespace
}  // namespace memtrack::report
