// Charts drawn as inline SVG for the HTML reports: points and lines on linear axes (trials against
// a knob, best-so-far against trials or time), horizontal bars, and rows of intervals on a time
// axis (tasks and shards over time, GDAT's segments). Every mark carries a <title> tooltip.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace tilebank::report {

// Text for HTML and SVG: & < > " escaped.
std::string Escape(const std::string& text);

// `v` with `digits` decimals, for tables and tooltips.
std::string Fixed(double v, int digits = 2);

struct Series {
  std::string label;
  std::vector<double> x, y;
  std::vector<double> spread;       // per point: a vertical bar of this height centred on y (empty: none)
  std::vector<bool> failed;         // per point: drawn as a red cross at the top of the plot (empty: none)
  std::vector<std::string> titles;  // per point: its tooltip (empty: x, y)
  std::string color = "#1f77b4";
  bool points = true, line = false, step = false;  // step: a staircase (best so far)
};

struct ChartOptions {
  std::string title, x_label, y_label;
  int width = 460, height = 240;
  std::vector<std::string> x_categories;  // not empty: x values are indices into these, shown as labels
  std::optional<double> reference;        // a dashed horizontal line (a baseline)
  std::string reference_label;
  std::optional<double> y_cap;            // points above it are drawn as triangles on the top edge
};

std::string PlotChart(const std::vector<Series>& series, const ChartOptions& options);

struct Bar {
  std::string label;
  double value = 0;
  std::string color = "#1f77b4";
  std::string title;  // tooltip (empty: label and value)
};
std::string BarChart(const std::vector<Bar>& bars, const ChartOptions& options);

struct Interval {
  double start = 0, end = 0;
  std::string color = "#1f77b4";
  std::string title;
};
struct IntervalRow {
  std::string label;
  std::vector<Interval> intervals;
};
std::string IntervalChart(const std::vector<IntervalRow>& rows, const ChartOptions& options);

// A fixed palette, cycled: colour i.
const char* PaletteColor(size_t i);

}  // namespace tilebank::report
