// SPDX-License-Identifier: MIT
#pragma once

#include <ostream>

namespace rsim {

/// The rsim command line: parses arguments, calls the library, prints to `out` / `err`.
/// Returns the process exit code: 0 ok, 1 internal error, 2 bad input or usage.
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace rsim
