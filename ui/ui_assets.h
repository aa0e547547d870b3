// The ui's own browser files, embedded at build time by web/embed_assets.cmake (as the HTML
// report's are, report/html_assets.h, whose libraries and views the ui page also uses).
#pragma once

#include <string_view>

namespace memtrack::report::assets {

extern const std::string_view kUiJs;        // web/src/ui.js: the process table and panels
extern const std::string_view kUiCss;       // web/src/ui.css
extern const std::string_view kUiTemplate;  // web/src/ui.html

}  // namespace memtrack::report::assets
