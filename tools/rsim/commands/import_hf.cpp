// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "output.hpp"
#include "sim/spec/hf_cache.hpp"
#include "sim/spec/hf_config.hpp"
#include "sim/spec/model_yaml.hpp"

#include <CLI/CLI.hpp>

#include <memory>

namespace rsim::cli {
namespace {

struct ImportHfOptions {
  std::string config;
  std::string name;
};

int import_hf_command(const ImportHfOptions& options, std::ostream& out) {
  out << model_yaml(import_hf_config(resolve_hf_config(options.config), options.name));
  return kExitOk;
}

}  // namespace

Command add_import_hf_command(CLI::App& app) {
  const auto options = std::make_shared<ImportHfOptions>();
  CLI::App* import_hf = app.add_subcommand(
      "import-hf",
      "Print a model YAML (models/NAME.yaml format) made from a Hugging Face config.json");
  import_hf
      ->add_option("CONFIG", options->config,
                   "A Hugging Face config.json, or a model id (ORG/NAME) in the local Hub "
                   "cache")
      ->required();
  import_hf->add_option("--name", options->name,
                        "Display name (default: _name_or_path, else the config's folder)");
  import_hf->footer(
      "Sizes come from the config's keys (GPT-2 names n_embd, n_layer, n_head, n_positions, "
      "n_inner too);\n"
      "the gated MLP, norm, positions, experts, windows and latent attention from rsim's table "
      "of\nmodel_types (llama, mistral, mixtral, gemma, gemma2, gemma3_text, gpt2, gpt_neox, "
      "qwen2,\nqwen2_moe, qwen3, qwen3_moe, phi3, deepseek_v3, gpt_oss). A model id is looked up "
      "in\n$HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub (refs/main's snapshot). A "
      "scenario's\n'model:' may also name a config.json directly.");
  return {import_hf, [options](std::ostream& out, std::ostream& /*err*/) {
            return import_hf_command(*options, out);
          }};
}

}  // namespace rsim::cli
