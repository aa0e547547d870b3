// The HTML report (see html_renderer.h): the page template of web/src/report.html with the
// embedded libraries, views, styles and the report model filled in.
#include "report/html_renderer.h"

#include <map>
#include <string_view>

#include "report/html_assets.h"
#include "report/json_renderer.h"
#include "report/page_data.h"
#include "report/source_snippets.h"
#include "report/text_format.h"
#include "report/xml_text.h"

namespace memtrack::report {
namespace {

// The page's title: the first process's command line.
std::string page_title(const Report& report) {
  if (report.processes.empty()) return "memtrack report";
  return "memtrack report: " + format_command(report.processes.front().command, 120);
}

void append_element(std::string& out, std::string_view tag, std::string_view content) {
  out += "<";
  out += tag;
  out += ">";
  out += content;
  out += "</";
  out += tag;
  out += ">\n";
}

// The template with each "{{NAME}}" replaced by its value, in one pass: text inside a value
// is never taken for a marker. An unknown marker stays as it is.
std::string fill(std::string_view page, const std::map<std::string, std::string>& values) {
  std::string out;
  size_t at = 0;
  while (true) {
    size_t open = page.find("{{", at);
    size_t close = open == std::string_view::npos ? open : page.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    auto value = values.find(std::string(page.substr(open + 2, close - open - 2)));
    out += page.substr(at, open - at);
    if (value == values.end()) {
      out += page.substr(open, close + 2 - open);
    } else {
      out += value->second;
    }
    at = close + 2;
  }
  out += page.substr(at);
  return out;
}

}  // namespace

nlohmann::ordered_json html_model(const Report& report, const std::string& version,
                                  const HtmlOptions& options) {
  JsonOptions json_options;
  json_options.show_kinds = options.show_kinds;
  nlohmann::ordered_json model;
  model["report"] = to_json(report, version, json_options);
  model["live"] = nlohmann::ordered_json::array();
  for (const nlohmann::ordered_json& live : options.live) model["live"].push_back(live);
  SnippetOptions snippet_options;
  snippet_options.show_kinds = options.show_kinds;
  model["sources"] = options.source_snippets ? source_snippets(report, snippet_options)
                                             : nlohmann::ordered_json::object();
  return model;
}

std::string page_data(const nlohmann::ordered_json& model) {
  return base64_encoded(
      gzip_compressed(model.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

std::string html_escaped(const std::string& text) {
  // XML 1.0 text is HTML5 text too (&apos; included); it also replaces the control
  // characters and invalid UTF-8 a program name may carry.
  return xml_escaped(text);
}

namespace {

// The page around its data (page_data's text).
void write_page(const std::string& title, const std::string& data, std::ostream& out,
                const std::string& version) {
  std::string styles;
  for (std::string_view css : {assets::kUplotCss, assets::kFlameGraphCss, assets::kReportCss}) {
    append_element(styles, "style", css);
  }
  std::string scripts;
  for (std::string_view js :
       {assets::kD3Js, assets::kFlameGraphJs, assets::kUplotJs, assets::kViewsJs,
        assets::kLeakTableJs, assets::kRetentionJs, assets::kChartsJs, assets::kProfileJs,
        assets::kPageJs, assets::kReportJs}) {
    append_element(scripts, "script", js);
  }
  out << fill(assets::kReportTemplate, {{"TITLE", html_escaped(title)},
                                        {"VERSION", html_escaped(version)},
                                        {"STYLES", styles},
                                        {"DATA", data},
                                        {"SCRIPTS", scripts}});
}

}  // namespace

void render_html_page(const std::string& title, const nlohmann::ordered_json& model,
                      std::ostream& out, const std::string& version) {
  write_page(title, page_data(model), out, version);
}

// html_model()'s text written straight away: the report's part through write_report_json, as
// the JSON report is, never as a document of its own (seconds and gigabytes for a report of
// hundreds of processes).
void render_html(const Report& report, std::ostream& out, const std::string& version,
                 const HtmlOptions& options) {
  JsonOptions json_options;
  json_options.show_kinds = options.show_kinds;
  GzipWriter model;
  model.write("{\"report\":");
  write_report_json(
      report, [&](std::string_view piece) { model.write(piece); }, version, json_options, -1);
  nlohmann::ordered_json live = nlohmann::ordered_json::array();
  for (const nlohmann::ordered_json& one : options.live) live.push_back(one);
  model.write(",\"live\":" + live.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  SnippetOptions snippet_options;
  snippet_options.show_kinds = options.show_kinds;
  nlohmann::ordered_json sources = options.source_snippets
                                       ? source_snippets(report, snippet_options)
                                       : nlohmann::ordered_json::object();
  model.write(",\"sources\":" +
              sources.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "}");
  write_page(page_title(report), base64_encoded(model.finish()), out, version);
}

}  // namespace memtrack::report
