// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace rsim {

/// One row of a table naming the values of an enum (the names YAML, JSON and the CLI use).
template <class Enum>
struct Named {
  Enum value;
  std::string_view name;
};

/// The name of `value` in `table` ("unknown" if absent).
template <class Enum, std::size_t N>
constexpr std::string_view name_of(Enum value, const std::array<Named<Enum>, N>& table) {
  for (const Named<Enum>& entry : table) {
    if (entry.value == value) {
      return entry.name;
    }
  }
  return "unknown";
}

/// The value named `name` in `table`, or nullopt.
template <class Enum, std::size_t N>
constexpr std::optional<Enum> find_named(std::string_view name,
                                         const std::array<Named<Enum>, N>& table) {
  for (const Named<Enum>& entry : table) {
    if (entry.name == name) {
      return entry.value;
    }
  }
  return std::nullopt;
}

/// "a, b, c": every name of the table, for error messages.
template <class Enum, std::size_t N>
std::string names_of(const std::array<Named<Enum>, N>& table) {
  std::string joined;
  for (const Named<Enum>& entry : table) {
    joined += (joined.empty() ? "" : ", ") + std::string(entry.name);
  }
  return joined;
}

}  // namespace rsim
