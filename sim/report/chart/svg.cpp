// SPDX-License-Identifier: MIT
#include "sim/report/chart/svg.hpp"

#include "sim/base/error.hpp"
#include "sim/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace rsim {

bool Box::intersects(const Box& other) const {
  return x < other.right() && other.x < right() && y < other.bottom() && other.y < bottom();
}

bool Box::contains(const Box& other) const {
  return other.x >= x && other.right() <= right() && other.y >= y && other.bottom() <= bottom();
}

double LogAxis::to_pixel(double value) const {
  const double fraction =
      (std::log10(value) - std::log10(low)) / (std::log10(high) - std::log10(low));
  return pixel_low + fraction * (pixel_high - pixel_low);
}

std::vector<double> LogAxis::decades() const {
  std::vector<double> result;
  // A small tolerance keeps 1e3 when low is 999.9999 after a division. The exponents are held
  // to a double's range: an infinite or zero bound once cast ±inf to int and looped 2³² times.
  constexpr double kLowest = -324.0;
  constexpr double kHighest = 308.0;
  const double first = std::clamp(std::ceil(std::log10(low) - 1e-9), kLowest, kHighest);
  const double last = std::clamp(std::floor(std::log10(high) + 1e-9), kLowest, kHighest);
  if (!(std::isfinite(first) && std::isfinite(last))) {
    return result;
  }
  for (auto exponent = static_cast<int>(first); exponent <= static_cast<int>(last); ++exponent) {
    result.push_back(std::pow(10.0, exponent));
  }
  return result;
}

double LinearAxis::to_pixel(double value) const {
  return pixel_low + (value - low) / (high - low) * (pixel_high - pixel_low);
}

namespace {

// The 1-2-5 step nearest to span / count.
double nice_step(double span, int count) {
  const double raw = span / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * magnitude >= raw) {
      return factor * magnitude;
    }
  }
  return 10.0 * magnitude;
}

}  // namespace

std::vector<double> LinearAxis::ticks(int count) const {
  const double step = nice_step(high - low, count);
  std::vector<double> result;
  for (double tick = std::ceil(low / step) * step; tick <= high + step * 1e-9; tick += step) {
    result.push_back(tick);
  }
  return result;
}

double nice_ceiling(double value) {
  RSIM_CHECK(value > 0.0, "nice_ceiling of a non-positive value");
  // A 1-2-5 step of about a seventh of the value, then the first multiple of it at or above.
  const double step = nice_step(value, 7);
  return std::ceil(value / step * (1.0 - 1e-12)) * step;
}

double text_width(std::string_view text, double font_px) {
  return 0.6 * font_px * static_cast<double>(display_width(std::string(text)));
}

namespace {

// Offsets of a label's box from its point, in units of the label's own size plus the point's
// radius: right, left, above, below, then the four diagonals. Right of the point comes first
// because roofline points crowd along a slope rising to the right.
struct Spot {
  double dx;  // −1 left of the point, 0 centred, +1 right
  double dy;  // −1 above, 0 centred, +1 below
};
constexpr std::array<Spot, 8> kSpots{{
    {1, 0},
    {-1, 0},
    {0, -1},
    {0, 1},
    {1, -1},
    {-1, -1},
    {1, 1},
    {-1, 1},
}};
constexpr std::array<double, 4> kDistances{3.0, 14.0, 30.0, 50.0};  // px beyond the radius

Box spot_box(const LabelRequest& request, Spot spot, double distance) {
  const double reach = request.radius + distance;
  Box box;
  box.width = request.width;
  box.height = request.height;
  box.x = spot.dx > 0   ? request.x + reach
          : spot.dx < 0 ? request.x - reach - request.width
                        : request.x - request.width / 2.0;
  box.y = spot.dy > 0   ? request.y + reach
          : spot.dy < 0 ? request.y - reach - request.height
                        : request.y - request.height / 2.0;
  return box;
}

bool is_free(const Box& box, const Box& area, const std::vector<Box>& taken) {
  if (!area.contains(box)) {
    return false;
  }
  for (const Box& other : taken) {
    if (box.intersects(other)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<LabelPlacement> place_labels(const std::vector<LabelRequest>& requests, const Box& area,
                                         std::vector<Box> obstacles) {
  std::vector<LabelPlacement> placements;
  placements.reserve(requests.size());
  for (const LabelRequest& request : requests) {
    LabelPlacement placement;
    placement.anchor_x = request.x;
    placement.anchor_y = request.y;
    for (std::size_t step = 0; step < kDistances.size() && !placement.placed; ++step) {
      for (std::size_t spot = 0; spot < kSpots.size(); ++spot) {
        const std::size_t rotated =
            (spot + static_cast<std::size_t>(request.first_spot)) % kSpots.size();
        const Box box = spot_box(request, kSpots[rotated], kDistances[step]);
        if (is_free(box, area, obstacles)) {
          placement.box = box;
          placement.placed = true;
          placement.leader = step > 0;
          break;
        }
      }
    }
    if (placement.placed) {
      obstacles.push_back(placement.box);
    }
    placements.push_back(placement);
  }
  return placements;
}

std::string escape_xml(std::string_view text) {
  std::string result;
  result.reserve(text.size());
  for (char character : text) {
    switch (character) {
      case '&':
        result += "&amp;";
        break;
      case '<':
        result += "&lt;";
        break;
      case '>':
        result += "&gt;";
        break;
      case '"':
        result += "&quot;";
        break;
      default:
        result += character;
    }
  }
  return result;
}

SvgDocument::SvgDocument(double width_px, double height_px)
    : width_(width_px), height_(height_px) {}

void SvgDocument::line(double x1, double y1, double x2, double y2, std::string_view attributes) {
  body_ += fmt::format("<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" {}/>\n", x1,
                       y1, x2, y2, attributes);
}

void SvgDocument::rect(const Box& box, std::string_view attributes) {
  body_ += fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" {}/>\n",
                       box.x, box.y, box.width, box.height, attributes);
}

void SvgDocument::circle(double x, double y, double radius, std::string_view attributes) {
  body_ += fmt::format("<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"{:.2f}\" {}/>\n", x, y, radius,
                       attributes);
}

namespace {

std::string point_list(const std::vector<std::pair<double, double>>& points) {
  std::string text;
  for (const auto& [x, y] : points) {
    text += fmt::format("{}{:.2f},{:.2f}", text.empty() ? "" : " ", x, y);
  }
  return text;
}

}  // namespace

void SvgDocument::polyline(const std::vector<std::pair<double, double>>& points,
                           std::string_view attributes) {
  body_ += fmt::format("<polyline points=\"{}\" {}/>\n", point_list(points), attributes);
}

void SvgDocument::polygon(const std::vector<std::pair<double, double>>& points,
                          std::string_view attributes) {
  body_ += fmt::format("<polygon points=\"{}\" {}/>\n", point_list(points), attributes);
}

void SvgDocument::text(double x, double y, std::string_view content, std::string_view attributes) {
  body_ += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\" {}>{}</text>\n", x, y, attributes,
                       escape_xml(content));
}

void SvgDocument::open_group(std::string_view attributes) {
  body_ += fmt::format("<g {}>\n", attributes);
}

void SvgDocument::close_group() { body_ += "</g>\n"; }

void SvgDocument::raw(std::string_view fragment) { body_ += fragment; }

std::string SvgDocument::str() const {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{2}</svg>\n",
      width_, height_, body_);
}

std::string decade_label(double value) {
  // Plain below 1000, then SI prefixes, as on the axes of the Jetson Thor roofline write-up rsim
  // started from (1, 10, 100, 1K, 10K).
  constexpr std::array<std::pair<int, const char*>, 5> kPrefixes{
      {{3, "k"}, {6, "M"}, {9, "G"}, {12, "T"}, {15, "P"}}};
  const int exponent = static_cast<int>(std::lround(std::log10(value)));
  for (auto it = kPrefixes.rbegin(); it != kPrefixes.rend(); ++it) {
    if (exponent >= it->first) {
      return fmt::format("{:g} {}", std::pow(10.0, exponent - it->first), it->second);
    }
  }
  return fmt::format("{:g}", std::pow(10.0, exponent));
}

}  // namespace rsim
