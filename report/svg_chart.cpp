#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tilebank::report {

std::string Escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

const char* PaletteColor(size_t i) {
  static const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
  return kColors[i % (sizeof kColors / sizeof kColors[0])];
}

namespace {

std::string Num(double v) {
  char buf[32];
  if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-2)) std::snprintf(buf, sizeof buf, "%.2g", v);
  else std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string Fmt(const char* format, double a, double b = 0, double c = 0, double d = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, format, a, b, c, d);
  return buf;
}

// A "nice" step for about `count` ticks over [lo, hi].
double TickStep(double lo, double hi, int count) {
  const double raw = (hi - lo) / std::max(count, 1);
  if (raw <= 0) return 1;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * magnitude) return m * magnitude;
  return 10 * magnitude;
}

struct Frame {
  double left = 56, right = 12, top = 26, bottom = 38;
  double width, height, x_lo, x_hi, y_lo, y_hi;
  double X(double x) const { return left + (x - x_lo) / (x_hi - x_lo) * (width - left - right); }
  double Y(double y) const { return height - bottom - (y - y_lo) / (y_hi - y_lo) * (height - top - bottom); }
};

std::string Open(const ChartOptions& o) {
  return Fmt("<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">", o.width,
             o.height, o.width, o.height) +
         "<text x=\"8\" y=\"16\" class=\"chart-title\">" + Escape(o.title) + "</text>";
}

std::string Axes(const Frame& f, const ChartOptions& o) {
  std::string s;
  const double y_step = TickStep(f.y_lo, f.y_hi, 4);
  for (double y = std::ceil(f.y_lo / y_step) * y_step; y <= f.y_hi + 1e-9 * y_step; y += y_step) {
    s += Fmt("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", f.left, f.width - f.right, f.Y(y), f.Y(y));
    s += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">", f.left - 4, f.Y(y) + 4) + Num(y) + "</text>";
  }
  if (!o.x_categories.empty()) {
    for (size_t i = 0; i < o.x_categories.size(); ++i)
      s += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">", f.X(static_cast<double>(i)), f.height - f.bottom + 14) +
           Escape(o.x_categories[i].substr(0, 10)) + "</text>";
  } else {
    const double x_step = TickStep(f.x_lo, f.x_hi, 5);
    for (double x = std::ceil(f.x_lo / x_step) * x_step; x <= f.x_hi + 1e-9 * x_step; x += x_step)
      s += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">", f.X(x), f.height - f.bottom + 14) + Num(x) + "</text>";
  }
  s += Fmt("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>", f.left, f.width - f.right, f.height - f.bottom, f.height - f.bottom);
  s += Fmt("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>", f.left, f.left, f.top, f.height - f.bottom);
  s += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"label\" text-anchor=\"middle\">", (f.left + f.width - f.right) / 2, f.height - 6) +
       Escape(o.x_label) + "</text>";
  s += Fmt("<text x=\"12\" y=\"%.1f\" class=\"label\" text-anchor=\"middle\" transform=\"rotate(-90 12 %.1f)\">", (f.top + f.height - f.bottom) / 2,
           (f.top + f.height - f.bottom) / 2) +
       Escape(o.y_label) + "</text>";
  return s;
}

}  // namespace

std::string PlotChart(const std::vector<Series>& series, const ChartOptions& o) {
  Frame f;
  f.width = o.width;
  f.height = o.height;
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const auto& s : series)
    for (size_t i = 0; i < s.x.size(); ++i) {
      x_lo = std::min(x_lo, s.x[i]);
      x_hi = std::max(x_hi, s.x[i]);
      if (i < s.failed.size() && s.failed[i]) continue;
      if (o.y_cap && s.y[i] > *o.y_cap) continue;  // drawn on the top edge
      const double half = i < s.spread.size() ? s.spread[i] / 2 : 0;
      y_lo = std::min(y_lo, s.y[i] - half);
      y_hi = std::max(y_hi, s.y[i] + half);
    }
  if (o.reference) {
    y_lo = std::min(y_lo, *o.reference);
    y_hi = std::max(y_hi, *o.reference);
  }
  if (!std::isfinite(x_lo)) x_lo = 0, x_hi = 1;
  if (!std::isfinite(y_lo)) y_lo = 0, y_hi = 1;
  if (!o.x_categories.empty()) x_lo = -0.5, x_hi = static_cast<double>(o.x_categories.size()) - 0.5;
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  y_lo = std::min(y_lo, 0.0);  // times from zero: ratios read true
  if (y_hi <= y_lo) y_hi = y_lo + 1;
  f.x_lo = x_lo, f.x_hi = x_hi + (x_hi - x_lo) * 0.02, f.y_lo = y_lo, f.y_hi = y_hi + 0.08 * (y_hi - y_lo);
  std::string svg = Open(o) + Axes(f, o);
  if (o.reference) {
    svg += Fmt("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"reference\"><title>", f.left, f.width - f.right, f.Y(*o.reference),
               f.Y(*o.reference)) +
           Escape(o.reference_label + ": " + Num(*o.reference)) + "</title></line>";
  }
  for (const auto& s : series) {
    if (s.line && s.x.size() > 1) {
      std::string path;
      for (size_t i = 0; i < s.x.size(); ++i) {
        if (s.step && i > 0) path += Fmt(" %.1f,%.1f", f.X(s.x[i]), f.Y(s.y[i - 1]));
        path += Fmt(" %.1f,%.1f", f.X(s.x[i]), f.Y(s.y[i]));
      }
      svg += "<polyline fill=\"none\" stroke=\"" + s.color + "\" stroke-width=\"1.6\" points=\"" + path + "\"><title>" + Escape(s.label) +
             "</title></polyline>";
    }
    if (!s.points) continue;
    for (size_t i = 0; i < s.x.size(); ++i) {
      const std::string title = i < s.titles.size() ? s.titles[i] : s.label + ": " + Num(s.x[i]) + ", " + Num(s.y[i]);
      if (i < s.failed.size() && s.failed[i]) {
        const double x = f.X(s.x[i]), y = f.top + 6;
        svg += Fmt("<path class=\"failed\" d=\"M%.1f %.1fL%.1f %.1f", x - 4, y - 4, x + 4, y + 4) +
               Fmt("M%.1f %.1fL%.1f %.1f\"><title>", x - 4, y + 4, x + 4, y - 4) + Escape(title) + "</title></path>";
        continue;
      }
      if (o.y_cap && s.y[i] > *o.y_cap) {
        const double x = f.X(s.x[i]), y = f.top + 4;
        svg += Fmt("<path fill=\"#ff7f0e\" d=\"M%.1f %.1fL%.1f %.1f", x, y - 4, x - 4, y + 3) + Fmt("L%.1f %.1fZ\"><title>", x + 4, y + 3) +
               Escape(title + " (above the plot)") + "</title></path>";
        continue;
      }
      if (i < s.spread.size() && s.spread[i] > 0)
        svg += Fmt("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"", f.X(s.x[i]), f.X(s.x[i]), f.Y(s.y[i] - s.spread[i] / 2),
                   f.Y(s.y[i] + s.spread[i] / 2)) +
               s.color + "\" stroke-opacity=\"0.45\"/>";
      svg += Fmt("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"", f.X(s.x[i]), f.Y(s.y[i])) + s.color + "\" fill-opacity=\"0.75\"><title>" +
             Escape(title) + "</title></circle>";
    }
  }
  return svg + "</svg>";
}

std::string BarChart(const std::vector<Bar>& bars, const ChartOptions& o) {
  ChartOptions sized = o;
  const double row = 18, top = 26, label_width = 170;
  sized.height = static_cast<int>(top + row * static_cast<double>(bars.size()) + 24);
  double hi = 0;
  for (const auto& b : bars) hi = std::max(hi, b.value);
  if (hi <= 0) hi = 1;
  const double plot = o.width - label_width - 70;
  std::string svg = Open(sized);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = top + row * static_cast<double>(i);
    svg += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">", label_width - 6, y + 12) + Escape(b.label.substr(0, 28)) + "</text>";
    svg += Fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"", label_width, y + 2, std::max(1.0, b.value / hi * plot), row - 5) +
           b.color + "\"><title>" + Escape(b.title.empty() ? b.label + ": " + Num(b.value) : b.title) + "</title></rect>";
    svg += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">", label_width + b.value / hi * plot + 4, y + 12) + Num(b.value) + "</text>";
  }
  svg += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"label\" text-anchor=\"middle\">", label_width + plot / 2, sized.height - 6.0) + Escape(o.x_label) +
         "</text>";
  return svg + "</svg>";
}

std::string IntervalChart(const std::vector<IntervalRow>& rows, const ChartOptions& o) {
  ChartOptions sized = o;
  const double row = 20, label_width = 150;
  Frame f;
  f.left = label_width;
  f.width = o.width;
  f.height = 26 + row * static_cast<double>(rows.size()) + 38;
  sized.height = static_cast<int>(f.height);
  double hi = 0;
  for (const auto& r : rows)
    for (const auto& in : r.intervals) hi = std::max(hi, in.end);
  f.x_lo = 0, f.x_hi = hi > 0 ? hi * 1.02 : 1, f.y_lo = 0, f.y_hi = 1;
  std::string svg = Open(sized);
  const double x_step = TickStep(f.x_lo, f.x_hi, 5);
  for (double x = 0; x <= f.x_hi; x += x_step) {
    svg += Fmt("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", f.X(x), f.X(x), f.top, f.height - f.bottom);
    svg += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">", f.X(x), f.height - f.bottom + 14) + Num(x) + "</text>";
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = f.top + row * static_cast<double>(i);
    svg += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">", label_width - 6, y + 13) + Escape(rows[i].label.substr(0, 24)) + "</text>";
    for (const auto& in : rows[i].intervals)
      svg += Fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"", f.X(in.start), y + 2, std::max(1.0, f.X(in.end) - f.X(in.start)),
                 row - 5) +
             in.color + "\" stroke=\"#fff\" stroke-width=\"0.5\"><title>" + Escape(in.title) + "</title></rect>";
  }
  svg += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"label\" text-anchor=\"middle\">", (f.left + f.width - f.right) / 2, f.height - 6) + Escape(o.x_label) +
         "</text>";
  return svg + "</svg>";
}

}  // namespace tilebank::report
