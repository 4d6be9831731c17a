// SPDX-License-Identifier: MIT
#include "sim/cost/tile_cache.hpp"

#include <bit>
#include <cstring>

namespace rsim {

std::size_t TileCache::KeyHash::operator()(const Key& key) const {
  // Every number's bits (they sit high in a double), mixed by multiplication so that they reach
  // the top bits too, which pick the front's slot.
  std::uint64_t mixed = 0;
  for (const double value : key) {
    mixed = (mixed ^ std::bit_cast<std::uint64_t>(value)) * 0x9e3779b97f4a7c15ULL;
  }
  return static_cast<std::size_t>(mixed);
}

TileCache::Rows* TileCache::rows(const Key& key) {
  // The front's slot from every number of the key, each multiplied by its own odd constant
  // (independent products, not one chain) and folded; the top bits pick the slot. A sweep over
  // several plans keeps a few dozen keys live per thread.
  std::uint64_t mixed = 0;
  for (std::size_t index = 0; index < key.size(); ++index) {
    mixed ^= std::bit_cast<std::uint64_t>(key[index]) * (0x9e3779b97f4a7c15ULL + 2 * index);
  }
  Recent& slot = recent_[static_cast<std::size_t>((mixed * 0xc2b2ae3d27d4eb4fULL) >> 54)];
  // Bitwise: a key equal by value but not in bits (±0) only misses the front.
  if (slot.rows == nullptr || std::memcmp(slot.key.data(), key.data(), sizeof(Key)) != 0) {
    slot = {key, &rows_[key]};  // unordered_map's references survive rehashing
  }
  return slot.rows;
}

}  // namespace rsim
