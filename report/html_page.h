// One self-contained HTML page: its style and a few lines of inline script (tables whose headers
// sort them on a click) are written into it; it fetches nothing.
#pragma once
#include <string>
#include <vector>

#include "base/status.h"

namespace tilebank::report {

class HtmlPage {
 public:
  explicit HtmlPage(std::string title) : title_(std::move(title)) {}
  void Heading(const std::string& text, int level = 2);
  void Paragraph(const std::string& text);  // escaped
  void Raw(const std::string& html);        // already HTML (charts)
  // Rows of cells (escaped); `numeric` columns sort as numbers and align right.
  void Table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
             const std::vector<bool>& numeric = {});
  // Key-value pairs as a compact table.
  void Facts(const std::vector<std::pair<std::string, std::string>>& facts);
  std::string Render() const;
  // Written to a temporary file and renamed into place.
  Status Write(const std::string& path) const;

 private:
  std::string title_, body_;
};

}  // namespace tilebank::report
