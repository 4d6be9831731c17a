// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <ostream>

namespace CLI {
class App;
}  // namespace CLI

namespace rsim::cli {

/// A subcommand registered on the app: its CLI11 subcommand, and what runs it once the arguments
/// are parsed into its options (which the closure owns). Returns the exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<int(std::ostream& out, std::ostream& err)> run;
};

Command add_run_command(CLI::App& app);
Command add_whatif_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_search_command(CLI::App& app);
Command add_threshold_command(CLI::App& app);
Command add_roofs_command(CLI::App& app);
Command add_matmul_command(CLI::App& app);
Command add_import_hf_command(CLI::App& app);
Command add_collective_command(CLI::App& app);
Command add_validate_command(CLI::App& app);
Command add_calibrate_command(CLI::App& app);
Command add_list_command(CLI::App& app);
Command add_merge_command(CLI::App& app);

}  // namespace rsim::cli
