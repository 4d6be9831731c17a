// SPDX-License-Identifier: MIT
#include "sim/spec/config.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using rsim::ConfigError;
using rsim::parse_config;

namespace {

// The message of the ConfigError thrown by `action`, or "" if none.
template <class Action>
std::string error_of(Action action) {
  try {
    action();
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("unknown keys are errors at the key's line and column", "[config]") {
  const auto document = parse_config("name: x\nsizes:\n  big: 1\n  bigg: 2\n", "t.yaml");
  const auto& sizes = document.at("sizes");
  CHECK(error_of([&] { sizes.allow_only({"big"}); }) ==
        "t.yaml:4:3: error: unknown key 'sizes.bigg' (expected one of: big)");
}

TEST_CASE("a missing key is reported at its parent map", "[config]") {
  const auto document = parse_config("name: x\nsizes:\n  big: 1\n", "t.yaml");
  CHECK(error_of([&] { (void)document.at("sizes").at("small"); }) ==
        "t.yaml:3:3: error: missing required key 'sizes.small'");
}

TEST_CASE("scalars are checked for type, sign and unit", "[config]") {
  const auto document = parse_config(
      "count: many\nzero: 0\nrate: 128 GB\nflag: yes\nlist: [1]\nratio: 1.5x\n", "t.yaml");
  CHECK(error_of([&] { (void)document.at("count").as_positive_int(); }) ==
        "t.yaml:1:8: error: 'count': expected a whole number ≥ 1, got \"many\"");
  CHECK(error_of([&] { (void)document.at("zero").as_positive_int(); }) ==
        "t.yaml:2:7: error: 'zero': expected a whole number ≥ 1, got \"0\"");
  CHECK(error_of([&] { (void)document.at("rate").as_quantity(rsim::Dimension::byte_rate); }) ==
        "t.yaml:3:7: error: 'rate': expected a bandwidth like \"273 GB/s\" or \"400 Gb/s\" "
        "(positive, with a unit), got \"128 GB\"");
  CHECK(error_of([&] { (void)document.at("flag").as_bool(); }) ==
        "t.yaml:4:7: error: 'flag': expected true or false, got \"yes\"");
  CHECK(error_of([&] { (void)document.at("list").as_string(); }) ==
        "t.yaml:5:7: error: 'list': expected a string");
  CHECK(error_of([&] { (void)document.at("ratio").as_number(); }) ==
        "t.yaml:6:8: error: 'ratio': expected a number, got \"1.5x\"");
}

TEST_CASE("duplicate keys and YAML syntax errors name the position", "[config]") {
  CHECK(error_of([] { parse_config("a: 1\na: 2\n", "t.yaml"); }) ==
        "t.yaml:2:1: error: duplicate key 'a'");
  CHECK(error_of([] { parse_config("a: [1, 2\n", "t.yaml"); }).rfind("t.yaml:", 0) == 0);
  CHECK(error_of([] { parse_config("- 1\n- 2\n", "t.yaml"); }) ==
        "t.yaml:1:1: error: expected a map of keys at the top level");
}

TEST_CASE("a missing file is an error naming it", "[config]") {
  CHECK(error_of([] { rsim::load_config_file("no/such/file.yaml"); }) ==
        "no/such/file.yaml: error: cannot open file");
}

TEST_CASE("ConfigFiles parses a file once and hands out copies and a bad file fails every time",
          "[config]") {
  const auto path = std::filesystem::temp_directory_path() / "rsim_config_files_test.yaml";
  std::ofstream(path) << "workload:\n  batch: 1\n";
  rsim::ConfigFiles files;
  auto first = files.load(path);
  first.set_path("workload.batch", "8", {"--set", 0, 0});  // a copy: the kept one is unchanged
  // The file changes on disk after its first load: the kept parse answers (once per sweep).
  std::ofstream(path) << "workload:\n  batch: 2\n";
  CHECK(first.at("workload").at("batch").as_positive_int() == 8);
  CHECK(files.load(path).at("workload").at("batch").as_positive_int() == 1);
  CHECK(rsim::load_config_file(path, nullptr).at("workload").at("batch").as_positive_int() == 2);
  std::filesystem::remove(path);
  for (int attempt = 0; attempt < 2; ++attempt) {
    CHECK(error_of([&] { (void)files.load("no/such/file.yaml"); }) ==
          "no/such/file.yaml: error: cannot open file");
  }
}

TEST_CASE("set_path overrides and creates nested keys", "[config]") {
  auto document = parse_config("workload:\n  batch: 1\n", "t.yaml");
  document.set_path("workload.batch", "8", {"--set", 0, 0});
  document.set_path("workload.seq_len", "128", {"--set", 0, 0});
  CHECK(document.at("workload").at("batch").as_positive_int() == 8);
  CHECK(document.at("workload").at("seq_len").as_positive_int() == 128);
}
