#include "report/html_page.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "report/svg_chart.h"

namespace tilebank::report {

namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0}th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:left}
th{background:#f4f4f4;cursor:pointer;user-select:none}td{max-width:460px;overflow-wrap:anywhere}td.num{text-align:right;font-variant-numeric:tabular-nums}
th.sorted-asc::after{content:" \25B2"}th.sorted-desc::after{content:" \25BC"}
.charts{display:flex;flex-wrap:wrap;gap:12px}.chart{background:#fff;border:1px solid #e4e4e4}
.chart-title{font-size:12px;font-weight:600}.tick{font-size:10px;fill:#555}.label{font-size:11px;fill:#333}
.grid{stroke:#eee}.axis{stroke:#888}.reference{stroke:#d62728;stroke-dasharray:4 3}.failed{stroke:#d62728;stroke-width:2}
.facts td:first-child{color:#666}.note{color:#666}
)";

// Sorts a table by the clicked column (numbers as numbers); no library.
constexpr const char* kScript = R"(
document.querySelectorAll('table.sortable th').forEach(function(th, column) {
  th.addEventListener('click', function() {
    var table = th.closest('table'), body = table.tBodies[0];
    var ascending = !th.classList.contains('sorted-asc');
    table.querySelectorAll('th').forEach(function(h) { h.classList.remove('sorted-asc', 'sorted-desc'); });
    th.classList.add(ascending ? 'sorted-asc' : 'sorted-desc');
    var numeric = th.dataset.numeric === '1';
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function(a, b) {
      var x = a.cells[column].dataset.value || a.cells[column].textContent, y = b.cells[column].dataset.value || b.cells[column].textContent;
      var order = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
      return ascending ? order : -order;
    });
    rows.forEach(function(r) { body.appendChild(r); });
  });
});
)";

}  // namespace

void HtmlPage::Heading(const std::string& text, int level) {
  const std::string tag = "h" + std::to_string(level);
  body_ += "<" + tag + ">" + Escape(text) + "</" + tag + ">\n";
}

void HtmlPage::Paragraph(const std::string& text) { body_ += "<p>" + Escape(text) + "</p>\n"; }

void HtmlPage::Raw(const std::string& html) { body_ += html + "\n"; }

void HtmlPage::Table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& numeric) {
  auto is_numeric = [&](size_t c) { return c < numeric.size() && numeric[c]; };
  std::string html = "<table class=\"sortable\"><thead><tr>";
  for (size_t c = 0; c < header.size(); ++c) html += std::string("<th data-numeric=\"") + (is_numeric(c) ? "1" : "0") + "\">" + Escape(header[c]) + "</th>";
  html += "</tr></thead><tbody>";
  for (const auto& row : rows) {
    html += "<tr>";
    for (size_t c = 0; c < row.size(); ++c) html += std::string(is_numeric(c) ? "<td class=\"num\">" : "<td>") + Escape(row[c]) + "</td>";
    html += "</tr>";
  }
  body_ += html + "</tbody></table>\n";
}

void HtmlPage::Facts(const std::vector<std::pair<std::string, std::string>>& facts) {
  std::string html = "<table class=\"facts\">";
  for (const auto& [k, v] : facts) html += "<tr><td>" + Escape(k) + "</td><td>" + Escape(v) + "</td></tr>";
  body_ += html + "</table>\n";
}

std::string HtmlPage::Render() const {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + Escape(title_) + "</title><style>" + kStyle +
         "</style></head><body>\n<h1>" + Escape(title_) + "</h1>\n" + body_ + "<script>" + kScript + "</script></body></html>\n";
}

Status HtmlPage::Write(const std::string& path) const {
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::InvalidInput("cannot write the report " + path);
    out << Render();
    if (!out.flush()) {
      std::error_code ec;
      std::filesystem::remove(temp, ec);
      return Status::IoError("writing the report " + path + " failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    return Status::IoError("cannot rename into " + path);
  }
  return Status::Ok();
}

}  // namespace tilebank::report
