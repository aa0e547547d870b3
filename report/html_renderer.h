// The HTML report: one self-contained page (scripts, styles and data inline; it makes no
// network request, which its Content-Security-Policy also forbids) with the summary, the leak
// table, a flame graph of leaked bytes, allocator misuse errors, descriptors left open and,
// after live mode, a chart per site. The page's views (web/src/views.js) read the model of
// html_model(): the JSON report of json_renderer.h as it is, plus the live reports and source
// lines, so any other page can feed them the same data. docs/html-report.md describes it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/model.h"

namespace memtrack::report {

struct HtmlOptions {
  LeakKinds show_kinds = kDefaultShownKinds;  // as --show-leak-kinds for the JSON report
  // live_to_json() of each live report of the run (memtrack run --expire), in order.
  std::vector<nlohmann::ordered_json> live;
  bool source_snippets = true;  // embed the source lines around program frames
};

// {"report": to_json(report), "live": [...], "sources": source_snippets(report)}.
nlohmann::ordered_json html_model(const Report& report, const std::string& version,
                                  const HtmlOptions& options = {});

// The model as the page carries it (page_data.h): its JSON (invalid UTF-8 as U+FFFD),
// gzip-compressed, in base64.
std::string page_data(const nlohmann::ordered_json& model);

// Text for HTML element content and attribute values: & < > " ' as character references,
// control characters and invalid UTF-8 as '?' (xml_escaped, which HTML5 reads alike).
std::string html_escaped(const std::string& text);

// The page around any model the views read: the leak report's (html_model) or a heap
// profile's (profile/profile_html.h, which has "profile" where this has "report").
void render_html_page(const std::string& title, const nlohmann::ordered_json& model,
                      std::ostream& out, const std::string& version);

// The whole page.
void render_html(const Report& report, std::ostream& out, const std::string& version,
                 const HtmlOptions& options = {});

}  // namespace memtrack::report
