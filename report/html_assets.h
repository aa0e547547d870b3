// The browser files the HTML report inlines, embedded at build time from web/
// (web/embed_assets.cmake): d3 and d3-flame-graph for the flame graph, uPlot for the live
// charts (from web/node_modules, versions pinned by web/package-lock.json), and memtrack's own
// views, styles and page template (web/src).
#pragma once

#include <string_view>

namespace memtrack::report::assets {

extern const std::string_view kD3Js;          // d3/dist/d3.min.js
extern const std::string_view kFlameGraphJs;  // d3-flame-graph/dist/d3-flamegraph.umd.min.js
extern const std::string_view kFlameGraphCss;
extern const std::string_view kUplotJs;  // uplot/dist/uPlot.iife.min.js
extern const std::string_view kUplotCss;
// The views, whose input is the report model (html_renderer.h): helpers, stacks, summary,
// errors and descriptors; the leak table; the flame graph and live charts; the whole page.
extern const std::string_view kViewsJs;
extern const std::string_view kLeakTableJs;
extern const std::string_view kRetentionJs;  // the retained-size tree (web/src/retention.js)
extern const std::string_view kChartsJs;
extern const std::string_view kProfileJs;  // the heap profile's views (web/src/profile.js)
extern const std::string_view kPageJs;
extern const std::string_view kReportJs;  // web/src/report.js: boots the views on the page
extern const std::string_view kReportCss;
extern const std::string_view kReportTemplate;  // web/src/report.html

}  // namespace memtrack::report::assets
