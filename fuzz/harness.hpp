// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rsim::fuzz {

/// Moves the process into a scratch folder of its own holding copies of the shipped preset
/// folders (hardware/, models/, scenarios/, plans/): the inputs a target writes, and any file a
/// fuzzed command line asks to write (--plot x.svg), land there and never in the source tree.
/// Idempotent; every target calls it from LLVMFuzzerInitialize.
void prepare_workspace();

/// Writes one input to `relative_path` inside the workspace and returns that path.
std::string write_input(const std::string& relative_path, const std::uint8_t* data,
                        std::size_t size);

/// The contract of issue 23 for one command line (without the leading "rsim"): exit 0 or 2,
/// never 1 (rsim's own bug) or anything else, and an input error starts "rsim: ". A breach
/// aborts with the command line, the exit code and rsim's message, which libFuzzer (or the
/// standalone driver) reports as a finding with the input that caused it. Non-finite numbers are
/// caught by running with `--format json`: the CLI refuses (exit 1) a JSON document holding one
/// (the text report echoes names like "meta-inf", so a word search there finds false ones).
void run_and_check(const std::vector<std::string>& args);

/// The input split at newlines into at most `max_lines` lines (an empty input gives none).
std::vector<std::string> split_lines(const std::uint8_t* data, std::size_t size,
                                     std::size_t max_lines);

}  // namespace rsim::fuzz
