// SPDX-License-Identifier: MIT
#include "sim/spec/tile.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace rsim {
namespace {

// Where a kernel keeps its operand tiles, by tier name: GPU shared memory, TPU VMEM.
constexpr std::array<std::string_view, 2> kKernelTileTiers{"smem", "vmem"};

}  // namespace

std::string to_string(const Tile& tile) {
  return fmt::format("{}×{}×{}", tile.bm, tile.bn, tile.bk);
}

Tile parse_tile(std::string_view text, std::string_view what) {
  std::array<std::int64_t, 3> edges{};
  std::size_t parsed = 0;
  std::string_view rest = text;
  while (parsed < edges.size()) {
    const auto [end, error] =
        std::from_chars(rest.data(), rest.data() + rest.size(), edges[parsed]);
    if (error != std::errc() || edges[parsed] <= 0) {
      break;
    }
    ++parsed;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    if (parsed < edges.size() && !rest.empty() && (rest.front() == ',' || rest.front() == 'x')) {
      rest.remove_prefix(1);
    }
  }
  if (parsed != edges.size() || !rest.empty()) {
    throw InputError(
        fmt::format("{} '{}': expected three positive integers bm,bn,bk (e.g. "
                    "128,256,64)",
                    what, text));
  }
  return Tile{edges[0], edges[1], edges[2]};
}

const Tile* TileChoices::find(std::string_view tier) const {
  for (const auto& [name, tile] : by_tier) {
    if (name == tier) {
      return &tile;
    }
  }
  return nullptr;
}

std::string kernel_tile_tier(const std::vector<MemoryTier>& memory) {
  for (const MemoryTier& tier : memory) {
    if (std::find(kKernelTileTiers.begin(), kKernelTileTiers.end(), tier.name) !=
        kKernelTileTiers.end()) {
      return tier.name;
    }
  }
  return "";
}

void check_tile_tiers(const TileChoices& tiles, const std::vector<MemoryTier>& memory,
                      std::string_view hardware) {
  std::vector<std::string> on_chip;
  for (std::size_t index = 1; index < memory.size(); ++index) {
    on_chip.push_back(memory[index].name);
  }
  for (const auto& [tier, tile] : tiles.by_tier) {
    if (std::find(on_chip.begin(), on_chip.end(), tier) == on_chip.end()) {
      throw InputError(fmt::format("{}: {} has no on-chip tier '{}' to hold a tile (tiers: {})",
                                   tiles.origin, hardware, tier, fmt::join(on_chip, ", ")));
    }
  }
}

}  // namespace rsim
