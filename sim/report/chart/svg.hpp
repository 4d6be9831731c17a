// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rsim {

/// A rectangle in SVG pixels (y grows downwards).
struct Box {
  double x = 0.0;  ///< left
  double y = 0.0;  ///< top
  double width = 0.0;
  double height = 0.0;
  [[nodiscard]] double right() const { return x + width; }
  [[nodiscard]] double bottom() const { return y + height; }
  /// True when the interiors overlap (touching edges do not count).
  [[nodiscard]] bool intersects(const Box& other) const;
  /// True when `other` lies entirely inside this box.
  [[nodiscard]] bool contains(const Box& other) const;
};

/// A logarithmic axis: maps values in [low, high] onto pixels [pixel_low, pixel_high] by
/// pixel = pixel_low + (log10 v − log10 low) / (log10 high − log10 low) · (pixel_high − pixel_low).
/// For a y axis pixel_low is the bottom (the larger pixel value).
struct LogAxis {
  double low = 1.0;
  double high = 10.0;
  double pixel_low = 0.0;
  double pixel_high = 1.0;
  [[nodiscard]] double to_pixel(double value) const;
  /// Every power of ten in [low, high].
  [[nodiscard]] std::vector<double> decades() const;
};

/// A linear axis, pixel = pixel_low + (v − low) / (high − low) · (pixel_high − pixel_low).
struct LinearAxis {
  double low = 0.0;
  double high = 1.0;
  double pixel_low = 0.0;
  double pixel_high = 1.0;
  [[nodiscard]] double to_pixel(double value) const;
  /// Ticks at a 1, 2 or 5 × 10ⁿ step at or above (high − low) / count, from `low` to `high`
  /// (the step nice_ceiling uses, so an axis it tops ends on a tick).
  [[nodiscard]] std::vector<double> ticks(int count = 7) const;
};

/// The top of a linear axis from 0 to `value` (> 0): the first multiple of a 1, 2 or 5 × 10ⁿ
/// step near value / 7 at or above `value` (620 → step 100 → 700).
double nice_ceiling(double value);

/// Estimated width in pixels of `text` in a sans-serif font of `font_px`: 0.6 em per code point
/// (DejaVu Sans averages ≈ 0.55 em on mixed text, so the estimate errs wide and boxes that do
/// not intersect leave their text apart).
double text_width(std::string_view text, double font_px);

/// Where a label sits: its box, and the anchor it points at.
struct LabelPlacement {
  Box box;
  double anchor_x = 0.0;
  double anchor_y = 0.0;
  bool placed = false;  ///< false: no free spot was found and the label is left out
  bool leader = false;  ///< drawn away from its point, with a line back to it
};

/// A label to place next to a point of radius `radius`.
struct LabelRequest {
  double x = 0.0;
  double y = 0.0;
  double radius = 0.0;
  double width = 0.0;
  double height = 0.0;
  int first_spot = 0;  ///< where to start in the spot order (kBelowRight: below and right)
};
/// LabelRequest::first_spot for labels that read best below and right of their point (ridges:
/// the roof runs right, the slope down-left).
constexpr int kBelowRight = 6;

/// Greedy collision-avoiding placement, in request order (most important first): each label
/// tries spots around its point at growing distances and takes the first one inside `area` that
/// hits no label already placed and no box in `obstacles`.
std::vector<LabelPlacement> place_labels(const std::vector<LabelRequest>& requests, const Box& area,
                                         std::vector<Box> obstacles = {});

/// "&", "<", ">", '"' escaped for XML text and attributes.
std::string escape_xml(std::string_view text);

/// A tiny SVG writer: elements are appended as text; numbers are written with 2 decimals.
class SvgDocument {
 public:
  SvgDocument(double width_px, double height_px);
  /// Attributes are given as ready text, e.g. `stroke="#333" stroke-width="2"`.
  void line(double x1, double y1, double x2, double y2, std::string_view attributes);
  void rect(const Box& box, std::string_view attributes);
  void circle(double x, double y, double radius, std::string_view attributes);
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view attributes);
  void polygon(const std::vector<std::pair<double, double>>& points, std::string_view attributes);
  /// Text at (x, y) (baseline), escaped; `attributes` sets anchor, size, rotation.
  void text(double x, double y, std::string_view content, std::string_view attributes);
  /// Opens a <g> with these attributes; close it with close_group().
  void open_group(std::string_view attributes);
  void close_group();
  /// A raw fragment (already valid SVG).
  void raw(std::string_view fragment);
  [[nodiscard]] std::string str() const;  ///< the whole <svg> document
  [[nodiscard]] double width() const { return width_; }
  [[nodiscard]] double height() const { return height_; }

 private:
  double width_;
  double height_;
  std::string body_;
};

/// "1 k", "100 T": a power of ten with an SI prefix, for tick labels.
std::string decade_label(double value);

}  // namespace rsim
