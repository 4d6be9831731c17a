// SPDX-License-Identifier: MIT
#include "sim/base/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

namespace rsim {
namespace {

enum class PrefixSet { decimal, decimal_and_binary, decimal_and_sub };

struct UnitSymbol {
  std::string_view symbol;
  Dimension dimension;
  double factor;  // SI value of one unit without prefix
  PrefixSet prefixes;
};

// Longest symbols first so that "B/s" is tried before "s".
constexpr std::array kUnits{
    UnitSymbol{"FLOP/s", Dimension::flop_rate, 1.0, PrefixSet::decimal},
    UnitSymbol{"OP/s", Dimension::flop_rate, 1.0, PrefixSet::decimal},
    UnitSymbol{"FLOP", Dimension::flops, 1.0, PrefixSet::decimal},
    UnitSymbol{"OP", Dimension::flops, 1.0, PrefixSet::decimal},
    UnitSymbol{"B/s", Dimension::byte_rate, 1.0, PrefixSet::decimal_and_binary},
    UnitSymbol{"b/s", Dimension::byte_rate, 1.0 / 8.0, PrefixSet::decimal},
    UnitSymbol{"Hz", Dimension::frequency, 1.0, PrefixSet::decimal},
    UnitSymbol{"B", Dimension::bytes, 1.0, PrefixSet::decimal_and_binary},
    UnitSymbol{"s", Dimension::seconds, 1.0, PrefixSet::decimal_and_sub},
};

struct Prefix {
  std::string_view symbol;
  double factor;
  PrefixSet minimum_set;  // the smallest set that admits it
};

constexpr std::array kPrefixes{
    Prefix{"", 1.0, PrefixSet::decimal},
    Prefix{"k", 1e3, PrefixSet::decimal},
    Prefix{"M", 1e6, PrefixSet::decimal},
    Prefix{"G", 1e9, PrefixSet::decimal},
    Prefix{"T", 1e12, PrefixSet::decimal},
    Prefix{"P", 1e15, PrefixSet::decimal},
    Prefix{"E", 1e18, PrefixSet::decimal},
    Prefix{"Ki", 1024.0, PrefixSet::decimal_and_binary},
    Prefix{"Mi", 1024.0 * 1024.0, PrefixSet::decimal_and_binary},
    Prefix{"Gi", 1024.0 * 1024.0 * 1024.0, PrefixSet::decimal_and_binary},
    Prefix{"Ti", 1024.0 * 1024.0 * 1024.0 * 1024.0, PrefixSet::decimal_and_binary},
    Prefix{"Pi", 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0, PrefixSet::decimal_and_binary},
    Prefix{"m", 1e-3, PrefixSet::decimal_and_sub},
    Prefix{"u", 1e-6, PrefixSet::decimal_and_sub},
    Prefix{"µ", 1e-6, PrefixSet::decimal_and_sub},
    Prefix{"n", 1e-9, PrefixSet::decimal_and_sub},
};

std::optional<double> prefix_factor(std::string_view symbol, PrefixSet allowed) {
  for (const Prefix& prefix : kPrefixes) {
    if (prefix.symbol == symbol &&
        (prefix.minimum_set == PrefixSet::decimal || prefix.minimum_set == allowed)) {
      return prefix.factor;
    }
  }
  return std::nullopt;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

struct DisplayUnit {
  Dimension dimension;
  std::string_view symbol;
};

constexpr std::array kDisplayUnits{
    DisplayUnit{Dimension::bytes, "B"},          DisplayUnit{Dimension::seconds, "s"},
    DisplayUnit{Dimension::flops, "FLOP"},       DisplayUnit{Dimension::byte_rate, "B/s"},
    DisplayUnit{Dimension::flop_rate, "FLOP/s"}, DisplayUnit{Dimension::frequency, "Hz"},
};

// Picks the decimal prefix that puts `value` in [1, 1000); sub-unit prefixes only when allowed.
std::pair<double, std::string_view> with_prefix(double value, bool allow_sub_unit) {
  struct Scale {
    double factor;
    std::string_view prefix;
  };
  static constexpr std::array kScales{
      Scale{1e18, "E"}, Scale{1e15, "P"}, Scale{1e12, "T"}, Scale{1e9, "G"},  Scale{1e6, "M"},
      Scale{1e3, "k"},  Scale{1.0, ""},   Scale{1e-3, "m"}, Scale{1e-6, "µ"}, Scale{1e-9, "n"},
  };
  const double magnitude = std::fabs(value);
  if (!std::isfinite(value) || magnitude == 0.0) {
    return {value, ""};
  }
  for (const Scale& scale : kScales) {
    if (scale.factor < 1.0 && !allow_sub_unit) {
      break;
    }
    // 0.99995 keeps 999.96 from printing as "1000" in the smaller prefix.
    if (magnitude >= scale.factor * 0.99995) {
      return {value / scale.factor, scale.prefix};
    }
  }
  return allow_sub_unit ? std::pair{value / 1e-9, std::string_view("n")}
                        : std::pair{value, std::string_view("")};
}

}  // namespace

std::string describe(Dimension dimension) {
  switch (dimension) {
    case Dimension::bytes:
      return "a size like \"128 GiB\" or \"50 MB\"";
    case Dimension::seconds:
      return "a time like \"63 ms\" or \"2 us\"";
    case Dimension::flops:
      return "an operation count like \"6.5 TFLOP\"";
    case Dimension::byte_rate:
      return "a bandwidth like \"273 GB/s\" or \"400 Gb/s\"";
    case Dimension::flop_rate:
      return "a compute rate like \"517 TFLOP/s\" or \"394 TOP/s\"";
    case Dimension::frequency:
      return "a frequency like \"1.575 GHz\"";
  }
  return "a quantity";
}

std::optional<double> parse_quantity(std::string_view text, Dimension expected) {
  text = trim(text);
  double number = 0.0;
  const char* const begin = text.data();
  const char* const end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(begin, end, number);
  if (error != std::errc{} || rest == begin) {
    return std::nullopt;
  }
  const std::string_view unit = trim(std::string_view(rest, static_cast<size_t>(end - rest)));
  for (const UnitSymbol& candidate : kUnits) {
    if (candidate.dimension != expected || unit.size() < candidate.symbol.size() ||
        unit.substr(unit.size() - candidate.symbol.size()) != candidate.symbol) {
      continue;
    }
    const auto factor =
        prefix_factor(unit.substr(0, unit.size() - candidate.symbol.size()), candidate.prefixes);
    if (!factor) {
      continue;
    }
    const double value = number * *factor * candidate.factor;
    if (!std::isfinite(value) || value <= 0.0) {
      return std::nullopt;
    }
    return value;
  }
  return std::nullopt;
}

std::string format_quantity(double si_value, Dimension dimension) {
  std::string_view symbol;
  for (const DisplayUnit& unit : kDisplayUnits) {
    if (unit.dimension == dimension) {
      symbol = unit.symbol;
    }
  }
  if (dimension == Dimension::seconds && std::fabs(si_value) >= 999.95) {
    // No kiloseconds: the units people read a long run in.
    constexpr double kMinute = 60.0;
    constexpr double kHour = 3600.0;
    constexpr double kDay = 86400.0;
    const double magnitude = std::fabs(si_value);
    return magnitude < 99.995 * kMinute  ? fmt::format("{:.4g} min", si_value / kMinute)
           : magnitude < 47.9995 * kHour ? fmt::format("{:.4g} h", si_value / kHour)
                                         : fmt::format("{:.4g} d", si_value / kDay);
  }
  const auto [scaled_value, prefix] = with_prefix(si_value, dimension == Dimension::seconds);
  return fmt::format("{:.4g} {}{}", scaled_value, prefix, symbol);
}

std::string format_capacity(double bytes) {
  // Capacities given in binary units (32 MiB, 228 KiB) print in them: exact multiples of 1024ⁿ
  // that are not also multiples of 1000ⁿ.
  static constexpr std::array<std::string_view, 5> kBinary{"Ki", "Mi", "Gi", "Ti", "Pi"};
  double unit = 1.0;
  double decimal_unit = 1.0;
  for (std::string_view prefix : kBinary) {
    unit *= 1024.0;
    decimal_unit *= 1000.0;
    const double count = bytes / unit;
    if (count >= 1.0 && count < 1024.0 && count == std::floor(count) &&
        std::fmod(bytes, decimal_unit) != 0.0) {
      return fmt::format("{:.4g} {}B", count, prefix);
    }
  }
  return format_quantity(bytes, Dimension::bytes);
}

std::string format_count(double value) {
  if (std::fabs(value) < 1e4) {
    return fmt::format("{:.4g}", value);
  }
  const auto [scaled_value, prefix] = with_prefix(value, false);
  return fmt::format("{:.4g}{}", scaled_value, prefix);
}

std::string format_parameters(double count) {
  struct Scale {
    double factor;
    std::string_view suffix;
  };
  static constexpr std::array kScales{Scale{1e12, "T"}, Scale{1e9, "B"}, Scale{1e6, "M"},
                                      Scale{1e3, "k"}};
  for (const Scale& scale : kScales) {
    if (std::fabs(count) >= scale.factor * 0.99995) {
      return fmt::format("{:.4g}{}", count / scale.factor, scale.suffix);
    }
  }
  return fmt::format("{:.4g}", count);
}

std::string format_plain(double value, int digits) {
  constexpr double kWhole = 1e4;     // from here on, whole numbers
  constexpr double kExact = 9.0e15;  // below 2^53: every whole number is exact in a double
  const double magnitude = std::fabs(value);
  if (!std::isfinite(value) || magnitude >= kExact) {
    return fmt::format("{:.{}g}", value, digits);
  }
  if (magnitude < kWhole && value != std::round(value)) {
    return fmt::format("{:.{}g}", value, digits);
  }
  const auto whole = static_cast<long long>(std::llround(magnitude));
  std::string digits_text = fmt::format("{}", whole);
  std::string grouped;
  for (std::size_t index = 0; index < digits_text.size(); ++index) {
    if (index > 0 && (digits_text.size() - index) % 3 == 0 && whole >= 10000) {
      grouped += ',';
    }
    grouped += digits_text[index];
  }
  return (value < 0.0 ? "-" : "") + grouped;
}

}  // namespace rsim
