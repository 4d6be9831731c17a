// SPDX-License-Identifier: MIT
#pragma once

#include "sim/report/json.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace rsim::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitInput = 2;
inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT, the shell's convention

// Prints a result as JSON, CSV or the text report, as `format` asks.
template <class Json, class Csv, class Text>
int emit(const std::string& format, std::ostream& out, Json json, Csv csv, Text text) {
  if (format == "json") {
    const auto document = json();
    if (const auto path = find_non_finite(document)) {
      throw std::logic_error("internal: a non-finite number at '" + *path +
                             "' in the JSON output (please report it with the input)");
    }
    // Names come from user files: bytes that are not UTF-8 become U+FFFD rather than an
    // exception (nlohmann type_error.316, exit 1: issue 23 #4).
    out << document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  } else if (format == "csv") {
    csv(out);
  } else {
    text(out);
  }
  return kExitOk;
}

// The columns text reports fit: none (0, no limit) with --wide, else $COLUMNS when it is a
// number, else the terminal's width when stdout is one, else 120; never under 60.
std::size_t report_width(bool wide);

// Writes a chart or report file; a path that cannot be written is the user's to fix.
void write_file(const std::string& flag, const std::string& path, const std::string& content);

// --plot FILE writes the SVG; --plot - prints the text chart instead of the report (true).
template <class Svg, class Text>
bool plot(const std::string& target, std::ostream& out, Svg svg, Text text) {
  if (target == "-") {
    out << text();
    return true;
  }
  if (!target.empty()) {
    write_file("--plot", target, svg());
  }
  return false;
}

template <class Html>
void write_html(const std::string& target, Html html) {
  if (!target.empty()) {
    std::ostringstream document;
    html(document);
    write_file("--html", target, document.str());
  }
}

}  // namespace rsim::cli
