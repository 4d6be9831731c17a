// SPDX-License-Identifier: MIT
// Issue 24: `rsim import-hf ORG/NAME` finds the config.json in the local Hugging Face Hub cache
// (huggingface_hub's layout: models--ORG--NAME/refs/main and snapshots/REVISION/).
#include "sim/spec/hf_cache.hpp"

#include "cli_fixture.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace {

namespace fs = std::filesystem;

// Sets an environment variable for one scope and restores it after.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      old_ = old;
    }
    ::setenv(name, value.c_str(), 1);
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;
  ~ScopedEnvironment() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A Hub cache holding Qwen/Qwen3-8B at revision "abc123" (refs/main) and an older "old000".
fs::path make_cache(const fs::path& hub) {
  fs::remove_all(hub);
  const fs::path repository = hub / "models--Qwen--Qwen3-8B";
  for (const char* revision : {"abc123", "old000"}) {
    fs::create_directories(repository / "snapshots" / revision);
  }
  fs::copy_file(rsim::test::source_path("tests/data/hf/Qwen3-8B/config.json"),
                repository / "snapshots" / "abc123" / "config.json");
  std::ofstream(repository / "snapshots" / "old000" / "config.json") << "{}";
  fs::create_directories(repository / "refs");
  std::ofstream(repository / "refs" / "main") << "abc123";
  return repository;
}

}  // namespace

TEST_CASE("import-hf takes a model id from the Hub cache", "[hf_config][hf_cache]") {
  const fs::path hub = fs::temp_directory_path() / "rsim_hf_cache_test" / "hub";
  const fs::path repository = make_cache(hub);
  {
    const ScopedEnvironment cache("HF_HUB_CACHE", hub.string());
    CHECK(rsim::find_cached_config("Qwen/Qwen3-8B") ==
          repository / "snapshots" / "abc123" / "config.json");
    const auto run = rsim::test::rsim_cli({"import-hf", "Qwen/Qwen3-8B"});
    CHECK(run.code == 0);
    CHECK_THAT(run.out, Catch::Contains("num_hidden_layers: 36\n"));
    // An id the cache lacks: exit 2, the folder searched and how to get the file.
    const auto missing = rsim::test::rsim_cli({"import-hf", "Qwen/Qwen3-4B"});
    CHECK(missing.code == 2);
    CHECK_THAT(
        missing.err,
        Catch::Contains("no cached config.json of model id 'Qwen/Qwen3-4B' in " + hub.string()));
  }
  {
    // $HF_HOME/hub when HF_HUB_CACHE is unset.
    const ScopedEnvironment no_cache("HF_HUB_CACHE", "");
    const ScopedEnvironment home("HF_HOME", hub.parent_path().string());
    CHECK(rsim::hf_cache_folders() == std::vector<fs::path>{hub});
    CHECK(rsim::find_cached_config("Qwen/Qwen3-8B").has_value());
  }
  fs::remove_all(hub.parent_path());
}

TEST_CASE("what looks like a model id", "[hf_config][hf_cache]") {
  CHECK(rsim::looks_like_model_id("deepseek-ai/DeepSeek-V3"));
  CHECK_FALSE(rsim::looks_like_model_id("config.json"));
  CHECK_FALSE(rsim::looks_like_model_id("models/llama3_8b.yaml"));
  CHECK_FALSE(rsim::looks_like_model_id("a/b/config"));
  CHECK_FALSE(rsim::looks_like_model_id("/abs"));
}
