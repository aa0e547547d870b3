// The ui page (page.h).
#include "ui/page.h"

#include <string_view>

#include "report/html_assets.h"
#include "report/html_renderer.h"
#include "ui/ui_assets.h"

namespace memtrack::ui {
namespace {

void replace_marker(std::string& page, std::string_view marker, const std::string& value) {
  size_t at = page.find(marker);
  if (at != std::string::npos) page.replace(at, marker.size(), value);
}

}  // namespace

std::string ui_page(const std::string& version) {
  namespace assets = report::assets;
  std::string styles;
  for (std::string_view css :
       {assets::kUplotCss, assets::kFlameGraphCss, assets::kReportCss, assets::kUiCss}) {
    styles += "<style>";
    styles += css;
    styles += "</style>\n";
  }
  std::string scripts;
  for (std::string_view js :
       {assets::kD3Js, assets::kFlameGraphJs, assets::kUplotJs, assets::kViewsJs,
        assets::kLeakTableJs, assets::kRetentionJs, assets::kChartsJs, assets::kProfileJs,
        assets::kPageJs, assets::kUiJs}) {
    scripts += "<script>";
    scripts += js;
    scripts += "</script>\n";
  }
  // Each marker is replaced once, in the order of the template (styles before scripts).
  std::string page(assets::kUiTemplate);
  replace_marker(page, "{{VERSION}}", report::html_escaped(version));
  replace_marker(page, "{{STYLES}}", styles);
  replace_marker(page, "{{SCRIPTS}}", scripts);
  return page;
}

}  // namespace memtrack::ui
