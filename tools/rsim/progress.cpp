// SPDX-License-Identifier: MIT
#include "progress.hpp"

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <mutex>
#include <string>
#include <unistd.h>

namespace rsim::cli {

std::atomic<bool> sweep_interrupted{false};

extern "C" void interrupt_sweep(int /*signal*/) { sweep_interrupted.store(true); }

namespace {
std::mutex interrupt_mutex;
int interrupt_scopes = 0;
void (*interrupt_previous)(int) = nullptr;
}  // namespace

InterruptScope::InterruptScope() {
  const std::lock_guard lock(interrupt_mutex);
  if (interrupt_scopes++ == 0) {
    sweep_interrupted.store(false);
    interrupt_previous = std::signal(SIGINT, interrupt_sweep);
  }
}

InterruptScope::~InterruptScope() {
  const std::lock_guard lock(interrupt_mutex);
  if (--interrupt_scopes == 0) {
    std::signal(SIGINT, interrupt_previous);
  }
}

std::function<void(std::size_t, std::size_t)> progress_bar(std::ostream& err,
                                                           std::string_view unit) {
  if (isatty(STDERR_FILENO) == 0) {
    return {};
  }
  struct State {
    std::mutex mutex;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point shown;
  };
  auto state = std::make_shared<State>();
  return [state, &err, unit](std::size_t done, std::size_t total) {
    const std::lock_guard lock(state->mutex);
    const auto now = std::chrono::steady_clock::now();
    if (now - state->start < std::chrono::seconds(1) ||
        (now - state->shown < std::chrono::milliseconds(100) && done < total)) {
      return;
    }
    state->shown = now;
    constexpr std::size_t kWidth = 40;
    const std::size_t filled = kWidth * done / total;
    err << fmt::format("\r[{}{}] {}/{} {}", std::string(filled, '#'),
                       std::string(kWidth - filled, '.'), done, total, unit)
        << (done == total ? "\n" : "") << std::flush;
  };
}

}  // namespace rsim::cli
