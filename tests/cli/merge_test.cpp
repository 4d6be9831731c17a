// SPDX-License-Identifier: MIT
// rsim sweep/search --shard K/N and rsim merge: the merged output is the unsharded one, byte for
// byte (the condition for running one grid as a Slurm array or Dask tasks).
#include "cli_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/explore/shard.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace {

using rsim::test::rsim_cli;

// Runs `args` with --shard K/N for K = 1…N, writes each output to a file of its own (named after
// `stem`) and returns the paths, K = N first so that merge cannot rely on the order.
std::vector<std::string> shard_files(const std::vector<std::string>& args, int shards,
                                     const std::string& stem) {
  std::vector<std::string> paths;
  for (int index = shards; index >= 1; --index) {
    std::vector<std::string> with_shard = args;
    with_shard.push_back("--shard");
    with_shard.push_back(fmt::format("{}/{}", index, shards));
    const rsim::test::Outcome outcome = rsim_cli(with_shard);
    REQUIRE(outcome.code == 0);
    const auto path = std::filesystem::temp_directory_path() /
                      fmt::format("rsim_{}_{}_of_{}.json", stem, index, shards);
    std::ofstream(path) << outcome.out;
    paths.push_back(path.string());
  }
  return paths;
}

rsim::test::Outcome merge_files(std::vector<std::string> paths) {
  paths.insert(paths.begin(), "merge");
  paths.push_back("--threads");
  paths.push_back("2");
  return rsim_cli(paths);
}

// What rsim merge prints of `args` run in `shards` shards (the merge must succeed).
std::string merged_output(const std::vector<std::string>& args, int shards,
                          const std::string& stem) {
  const rsim::test::Outcome merged = merge_files(shard_files(args, shards, stem));
  INFO(merged.err);
  REQUIRE(merged.code == 0);
  return merged.out;
}

}  // namespace

TEST_CASE("a shard is the K-th of N contiguous slices, sizes within one") {
  // 10 points over 3 shards: ⌊10·k/3⌋ for k = 0…3 is 0, 3, 6, 10.
  CHECK(rsim::Shard{1, 3}.slice(10) == std::pair<std::size_t, std::size_t>{0, 3});
  CHECK(rsim::Shard{2, 3}.slice(10) == std::pair<std::size_t, std::size_t>{3, 6});
  CHECK(rsim::Shard{3, 3}.slice(10) == std::pair<std::size_t, std::size_t>{6, 10});
  // More shards than points: some slices are empty, and together they still cover each once.
  CHECK(rsim::Shard{1, 4}.slice(2) == std::pair<std::size_t, std::size_t>{0, 0});
  CHECK(rsim::Shard{2, 4}.slice(2) == std::pair<std::size_t, std::size_t>{0, 1});
  CHECK(rsim::Shard{4, 4}.slice(2) == std::pair<std::size_t, std::size_t>{1, 2});
  CHECK(rsim::parse_shard("3/8", "--shard").index == 3);
  CHECK(rsim::parse_shard("3/8", "--shard").count == 8);
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/2000000", "1/2x"}) {
    CHECK_THROWS_WITH(rsim::parse_shard(bad, "--shard"),
                      Catch::Contains("--shard: expected K/N") && Catch::Contains(bad));
  }
}

TEST_CASE("a sweep run in shards and merged prints the unsharded sweep byte for byte") {
  // shard_d_vs_batch's sweep: batch 16…4096 (9 values) × 2 plans = 18 points, with crossovers
  // found by bisection on the merged grid.
  const std::vector<std::string> sweep{
      "sweep", "scenarios/shard_d_vs_batch.yaml", "--format", "json", "--threads", "2"};
  const rsim::test::Outcome whole = rsim_cli(sweep);
  REQUIRE(whole.code == 0);
  REQUIRE(nlohmann::json::parse(whole.out)["crossovers"].size() > 0);
  for (const int shards : {1, 3, 20}) {  // 20 > 18 points: two slices are empty
    CHECK(merged_output(sweep, shards, fmt::format("merge_sweep{}", shards)) == whole.out);
  }
}

TEST_CASE("sweep shards keep their --precision and --bandwidth for the merged crossovers") {
  // INT8 on an HBM slowed to 1 TB/s moves every crossover (shard_d → shard_batch fastest at a
  // batch of 58, not 74): the merge finds them with the shards' options, not the scenario's.
  const std::vector<std::string> sweep{"sweep",       "scenarios/shard_d_vs_batch.yaml",
                                       "--format",    "json",
                                       "--threads",   "2",
                                       "--precision", "int8",
                                       "--bandwidth", "hbm=1 TB/s"};
  const rsim::test::Outcome whole = rsim_cli(sweep);
  REQUIRE(whole.code == 0);
  const rsim::test::Outcome plain =
      rsim_cli({"sweep", "scenarios/shard_d_vs_batch.yaml", "--format", "json", "--threads", "2"});
  CHECK(nlohmann::json::parse(whole.out)["crossovers"] !=
        nlohmann::json::parse(plain.out)["crossovers"]);
  CHECK(merged_output(sweep, 2, "merge_sweep_options") == whole.out);
}

TEST_CASE("a training search run in shards and merged prints the unsharded search") {
  // Llama 3 8B on 4 H100s: 63 plan shapes; each shard keeps its best --top 5, of which the
  // merge keeps the best 5 of all, ranked again; counts and rejections by reason added up.
  const std::vector<std::string> search{"search",    "scenarios/llama3_8b_train_h100.yaml",
                                        "--devices", "4",
                                        "--format",  "json",
                                        "--top",     "5",
                                        "--threads", "2"};
  const rsim::test::Outcome whole = rsim_cli(search);
  REQUIRE(whole.code == 0);
  const std::string merged = merged_output(search, 3, "merge_search");
  CHECK(merged == whole.out);
  const auto json = nlohmann::json::parse(merged);
  CHECK(json["ranked"].size() == 5);
  CHECK(json["shapes"] == json["shapes_searched"]);
}

TEST_CASE("rsim merge names the file that is missing, doubled or not a shard") {
  // A two-point sweep in three shards (one of them empty), without crossovers: the checks are
  // the merge's, not the sweep's.
  const std::vector<std::string> sweep{"sweep",
                                       "scenarios/shard_d_vs_batch.yaml",
                                       "--over",
                                       "workload.batch=16,32",
                                       "--over",
                                       "plan=shard_batch",
                                       "--no-crossovers",
                                       "--format",
                                       "json",
                                       "--threads",
                                       "1"};
  const std::vector<std::string> files = shard_files(sweep, 3, "merge_errors");  // 3/3, 2/3, 1/3
  REQUIRE(merge_files(files).code == 0);
  const rsim::test::Outcome missing = merge_files({files[0], files[1]});
  CHECK(missing.code == 2);
  CHECK(missing.err == "rsim: shard 1/3 is missing: merge needs all 3 shards' files\n");
  const rsim::test::Outcome doubled = merge_files({files[0], files[1], files[2], files[2]});
  CHECK(doubled.code == 2);
  CHECK_THAT(doubled.err, Catch::Contains("shard 1/3 was given twice"));
  const rsim::test::Outcome whole = rsim_cli(sweep);
  const auto whole_path = std::filesystem::temp_directory_path() / "rsim_merge_errors_whole.json";
  std::ofstream(whole_path) << whole.out;
  const rsim::test::Outcome not_shard = merge_files({whole_path.string()});
  CHECK(not_shard.code == 2);
  CHECK_THAT(not_shard.err, Catch::Contains("rsim_merge_errors_whole.json: not the output of "
                                            "one shard"));
  const rsim::test::Outcome absent = merge_files({"no/such/shard.json"});
  CHECK(absent.code == 2);
  CHECK(absent.err == "rsim: no/such/shard.json: cannot open the file\n");
  const rsim::test::Outcome table =
      rsim_cli({"sweep", "scenarios/shard_d_vs_batch.yaml", "--shard", "1/2"});
  CHECK(table.code == 2);
  CHECK_THAT(table.err, Catch::Contains("add --format json"));
  const rsim::test::Outcome inference = rsim_cli(
      {"search", "scenarios/llama3_70b_tp8_h100.yaml", "--devices", "8", "--shard", "1/2"});
  CHECK(inference.code == 2);
  CHECK_THAT(inference.err, Catch::Contains("only a training search"));
}
