// SPDX-License-Identifier: MIT
#pragma once
// One of N contiguous slices of a sweep's grid or of a search's plan shapes (`--shard K/N`), so
// that N processes (a Slurm job array, Dask tasks) each evaluate one and `rsim merge` joins their
// outputs into what one process prints.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace rsim {

struct Shard {
  std::int64_t index = 1;  ///< K, from 1 to count
  std::int64_t count = 1;  ///< N
  /// Asked for (`--shard`, even 1/1): the output carries the `shard` record rsim merge reads.
  bool requested = false;

  /// The whole grid or space (1/1): nothing to merge.
  [[nodiscard]] bool whole() const { return count == 1; }
  /// [first, end) of `total` items: ⌊total·(K−1)/N⌋ to ⌊total·K/N⌋, so the N slices cover the
  /// items in order, each once, and differ in size by at most one.
  [[nodiscard]] std::pair<std::size_t, std::size_t> slice(std::size_t total) const;
};

/// "K/N" with 1 ≤ K ≤ N ≤ 1,000,000; InputError naming `origin` (the option) otherwise.
Shard parse_shard(std::string_view text, std::string_view origin);

}  // namespace rsim
