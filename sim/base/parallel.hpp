// SPDX-License-Identifier: MIT
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace rsim {

/// How a parallel loop ran: the threads of its arena and the items it finished (fewer than asked
/// when cancelled).
struct ParallelRun {
  std::int64_t threads = 1;
  std::size_t finished = 0;
};

/// `body(index, state)` for every index in [0, count), in parallel with TBB on `threads` threads
/// (0: all hardware threads). Each thread gets its own `State` (default-constructed when it first
/// runs an item: a tile cache, a graph copy) so bodies share nothing mutable. `progress(done,
/// count)` is called after each item from any thread; a set `cancel` stops the items not started.
template <typename State, typename Body>
ParallelRun parallel_indexed(std::int64_t threads, std::size_t count, const Body& body,
                             const std::function<void(std::size_t, std::size_t)>& progress = {},
                             const std::atomic<bool>* cancel = nullptr) {
  tbb::task_arena arena(threads > 0 ? static_cast<int>(threads) : tbb::task_arena::automatic);
  std::atomic<std::size_t> done{0};
  tbb::enumerable_thread_specific<State> states;
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count), [&](const auto& range) {
      State& state = states.local();
      // Without a progress callback the shared count is added to once per range, not per item:
      // threads incrementing one atomic per item pass its cache line back and forth.
      std::size_t finished_here = 0;
      for (std::size_t index = range.begin(); index != range.end(); ++index) {
        if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
          break;
        }
        body(index, state);
        if (progress) {
          progress(++done, count);
        } else {
          ++finished_here;
        }
      }
      done += finished_here;
    });
  });
  return {arena.max_concurrency(), done.load()};
}

}  // namespace rsim
