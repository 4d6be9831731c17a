// SPDX-License-Identifier: MIT
// Text reports fit the terminal (issue 25): $COLUMNS, --wide, and no network figures on one device.
#include "cli_fixture.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using rsim::test::rsim_cli;

std::string shipped(const std::string& name) {
  return rsim::test::source_path("scenarios/" + name + ".yaml").string();
}

// Sets $COLUMNS for one scope, as a terminal's shell would, and puts back what was there.
class ColumnsVariable {
 public:
  explicit ColumnsVariable(const char* value) {
    if (const char* old = std::getenv("COLUMNS"); old != nullptr) {
      saved_ = old;
    }
    setenv("COLUMNS", value, 1);
  }
  ColumnsVariable(const ColumnsVariable&) = delete;
  ColumnsVariable& operator=(const ColumnsVariable&) = delete;
  ~ColumnsVariable() {
    if (saved_) {
      setenv("COLUMNS", saved_->c_str(), 1);
    } else {
      unsetenv("COLUMNS");
    }
  }

 private:
  std::optional<std::string> saved_;
};

// The widest line of `text` in code points (every report character is one column wide).
std::size_t widest_line(const std::string& text) {
  std::istringstream lines(text);
  std::size_t widest = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto points = std::count_if(line.begin(), line.end(), [](char byte) {
      return (static_cast<unsigned char>(byte) & 0xC0U) != 0x80U;
    });
    widest = std::max(widest, static_cast<std::size_t>(points));
  }
  return widest;
}

}  // namespace

TEST_CASE("text reports fit $COLUMNS and --wide shows every column", "[cli]") {
  // Issue 25: COLUMNS=120 rsim run scenarios/pi05_thor.yaml prints no line over 120 columns,
  // with the bound in its first lines.
  const ColumnsVariable columns("120");
  const auto fitted = rsim_cli({"run", shipped("pi05_thor")});
  REQUIRE(fitted.code == 0);
  CHECK(widest_line(fitted.out) <= 120);
  CHECK(fitted.out.substr(0, fitted.out.find("\n  hardware")).find("bound by memory (dram)") !=
        std::string::npos);
  // The top-ops table hides its least-needed columns and says so.
  CHECK_THAT(fitted.out, Catch::Contains("hidden to fit 120 columns; --wide shows every column"));
  const auto wide = rsim_cli({"run", shipped("pi05_thor"), "--wide"});
  CHECK(widest_line(wide.out) > 120);
  CHECK_THAT(wide.out, !Catch::Contains("hidden to fit"));
  // One device: no network column or term anywhere.
  CHECK_THAT(wide.out, !Catch::Contains("ΣT_net") && !Catch::Contains("T_net"));
  // The other wide reports fit too.
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"whatif", shipped("pi05_thor")},
        {"compare", shipped("shard_d_vs_batch"), "--plan", "shard_d", "--plan", "shard_batch"},
        {"search", shipped("llama3_70b_tp8_h100"), "--devices", "8"},
        {"roofs", "h100_sxm"},
        {"threshold", shipped("pi05_thor")}}) {
    const auto outcome = rsim_cli(command);
    CHECK(outcome.code == 0);
    CHECK(widest_line(outcome.out) <= 120);
  }
  // A narrow terminal narrows the report (60 columns is the narrowest rsim lays out for).
  const ColumnsVariable narrow("70");
  CHECK(widest_line(rsim_cli({"run", shipped("pi05_thor")}).out) <= 70);
}
