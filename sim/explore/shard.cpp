// SPDX-License-Identifier: MIT
#include "sim/explore/shard.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <charconv>
#include <string>

namespace rsim {
namespace {

constexpr std::int64_t kMaxShards = 1'000'000;

std::int64_t parse_count(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty()) {
    return -1;
  }
  return value;
}

}  // namespace

std::pair<std::size_t, std::size_t> Shard::slice(std::size_t total) const {
  // ⌊total·k/N⌋ with total = q·N + r is q·k + ⌊r·k/N⌋: r·k < N² ≤ 10^12, no overflow.
  const auto shards = static_cast<std::size_t>(count);
  const auto bound = [&](std::size_t k) {
    return total / shards * k + total % shards * k / shards;
  };
  return {bound(static_cast<std::size_t>(index - 1)), bound(static_cast<std::size_t>(index))};
}

Shard parse_shard(std::string_view text, std::string_view origin) {
  const std::size_t slash = text.find('/');
  const std::int64_t index =
      slash == std::string_view::npos ? -1 : parse_count(text.substr(0, slash));
  const std::int64_t count =
      slash == std::string_view::npos ? -1 : parse_count(text.substr(slash + 1));
  if (index < 1 || count < 1 || index > count || count > kMaxShards) {
    throw InputError(fmt::format(
        "{}: expected K/N, the K-th of N slices with 1 <= K <= N <= {} (e.g. 3/8), got '{}'",
        origin, kMaxShards, text));
  }
  return {index, count, true};
}

}  // namespace rsim
