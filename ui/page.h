// The page memtrack ui serves: web/src/ui.html with the embedded libraries, the report views
// of the HTML report (web/src/views.js and the rest) and the ui's own script and styles
// inline, so that the server serves no file. Pure.
#pragma once

#include <string>

namespace memtrack::ui {

std::string ui_page(const std::string& version);

}  // namespace memtrack::ui
