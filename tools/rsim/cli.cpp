// SPDX-License-Identifier: MIT
#include "cli.hpp"

#include "commands/commands.hpp"
#include "output.hpp"
#include "sim/base/error.hpp"
#include "sim/report/text_width.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"rsim: a roofline simulator for LLM workloads and parallelism plans", "rsim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("rsim ") + RSIM_VERSION,
                       "Print rsim's version and exit");
  app.footer(
      "HARDWARE, MODEL and the scenario's presets are names (thor_t5000) or paths to YAML files.\n"
      "Exit codes: 0 ok, 1 internal error, 2 bad input or usage, 3 validate: a lower bound above "
      "its measurement.");

  // In the order `rsim --help` lists them.
  const std::vector<cli::Command> commands{
      cli::add_run_command(app),       cli::add_whatif_command(app),
      cli::add_compare_command(app),   cli::add_sweep_command(app),
      cli::add_search_command(app),    cli::add_threshold_command(app),
      cli::add_roofs_command(app),     cli::add_matmul_command(app),
      cli::add_import_hf_command(app), cli::add_collective_command(app),
      cli::add_validate_command(app),  cli::add_calibrate_command(app),
      cli::add_list_command(app),      cli::add_merge_command(app)};
  bool wide = false;
  for (const cli::Command& command : commands) {
    command.app->add_flag("--wide", wide,
                          "Print every table column and line whole, however wide (default: fit "
                          "the terminal, $COLUMNS, or 120 columns when not a terminal)");
  }

  const std::string first = argc > 1 ? argv[1] : "";
  constexpr std::array<std::string_view, 14> kCommands{
      "run",    "whatif",     "compare",   "sweep",    "search",    "threshold", "roofs",
      "matmul", "collective", "import-hf", "validate", "calibrate", "list",      "merge"};
  if (!first.empty() && first[0] != '-' &&
      std::find(kCommands.begin(), kCommands.end(), first) == kCommands.end()) {
    err << fmt::format("rsim: unknown command '{}' (commands: {}); see rsim --help\n", first,
                       fmt::join(kCommands, ", "));
    return cli::kExitInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help, out, err);
  } catch (const CLI::CallForVersion& version) {
    out << version.what() << '\n';  // CLI11 prints it without a newline
    return cli::kExitOk;
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help, out, err);
  } catch (const CLI::ParseError& error) {
    // CLI11's own text ("--devices: Value 0 not in range …") without rsim's prefix and with no
    // hint of where to look (issue 23 #7): every usage error reads like every other error.
    const std::string help =
        first.empty() || first[0] == '-' ? "rsim --help" : "rsim " + first + " --help";
    err << fmt::format("rsim: {} (see {})\n", error.what(), help);
    return cli::kExitInput;
  }
  try {
    for (const cli::Command& command : commands) {
      if (*command.app) {
        out << TextWidth{cli::report_width(wide)};
        const int code = command.run(out, err);
        // A report that did not reach its reader is a failed run (`> /dev/full` exited 0).
        out.flush();
        if (!out) {
          err << "rsim: error: the output could not be written (disk full, or the reader "
                 "closed it)\n";
          return cli::kExitInput;
        }
        return code;
      }
    }
    return cli::kExitInternal;  // not reached: require_subcommand(1) makes parse() pick one
  } catch (const InputError& error) {
    err << "rsim: " << error.what() << '\n';
    return cli::kExitInput;
  } catch (const std::exception& error) {
    err << "rsim: " << error.what() << '\n';
    return cli::kExitInternal;
  }
}

}  // namespace rsim
