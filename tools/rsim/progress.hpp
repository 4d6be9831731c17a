// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <ostream>
#include <string_view>

namespace rsim::cli {

// Set by SIGINT while a sweep or a training search runs: it stops and prints what it finished.
// A signal handler can only reach static storage.
extern std::atomic<bool> sweep_interrupted;

extern "C" void interrupt_sweep(int /*signal*/);

/// While alive, SIGINT sets sweep_interrupted (cleared on entry) instead of killing the process;
/// the handler before the first scope comes back when the last one ends. Counted, because the
/// Python module runs commands on several threads at once (each thread's scope restoring what
/// another installed would leave Ctrl-C caught for good).
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  InterruptScope(InterruptScope&&) = delete;
  InterruptScope& operator=(InterruptScope&&) = delete;
};

// A progress bar on stderr once a sweep or a training search has run for a second, when stderr
// is a terminal.
std::function<void(std::size_t, std::size_t)> progress_bar(std::ostream& err,
                                                           std::string_view unit = "points");

}  // namespace rsim::cli
