// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "options.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "sim/base/error.hpp"
#include "sim/explore/validation.hpp"
#include "sim/report/validation_report.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>

namespace rsim::cli {
namespace {

struct ValidateOptions {
  std::string path = "validation";
  std::string format = "table";
  std::int64_t threads = 0;
};

// Exit 3: the set ran, and a lower bound is above its measurement (or a case failed).
constexpr int kExitValidationFailed = 3;

int validate_command(const ValidateOptions& options, std::ostream& out, std::ostream& err) {
  if (!std::filesystem::exists(options.path)) {
    throw InputError(fmt::format(
        "rsim validate {}: no such file or folder (give the folder holding cases.yaml, e.g. the "
        "repository's validation/)",
        options.path));
  }
  const std::vector<ValidationCase> cases = load_validation_cases(options.path);
  const std::vector<ValidationResult> results =
      run_validation(cases, options.threads, progress_bar(err, "cases"));
  const ValidationSummary summary = summarize_validation(results);
  emit(
      options.format, out, [&] { return validation_to_json(results, summary); },
      [&](std::ostream& stream) { write_validation_text(stream, results, summary); },
      [&](std::ostream& stream) { write_validation_text(stream, results, summary); });
  return summary.passed() ? kExitOk : kExitValidationFailed;
}

}  // namespace

Command add_validate_command(CLI::App& app) {
  const auto options = std::make_shared<ValidateOptions>();
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Hold the lower bound and the expected time against published measurements (exit 3 when "
      "a lower bound is above its measurement)");
  validate->add_option("PATH", options->path,
                       "cases.yaml or the folder holding it (default: validation)");
  validate->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}));
  validate->add_option("--threads", options->threads, "Worker threads (default: all cores)")
      ->check(non_negative_number());
  return {validate, [options](std::ostream& out, std::ostream& err) {
            return validate_command(*options, out, err);
          }};
}

}  // namespace rsim::cli
