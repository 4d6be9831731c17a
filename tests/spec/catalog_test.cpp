// SPDX-License-Identifier: MIT
// `rsim list`'s catalog of shipped presets, and the closest name a "no such preset" suggests.
#include "sim/spec/catalog.hpp"

#include "sim/base/error.hpp"
#include "sim/spec/presets.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

namespace {

const rsim::CatalogEntry* find(const std::vector<rsim::CatalogEntry>& entries,
                               const std::string& name) {
  const auto found = std::find_if(entries.begin(), entries.end(),
                                  [&](const auto& entry) { return entry.name == name; });
  return found == entries.end() ? nullptr : &*found;
}

}  // namespace

TEST_CASE("the catalog lists every shipped preset with its description", "[catalog]") {
  const auto hardware = rsim::catalog(rsim::CatalogKind::hardware);
  REQUIRE(find(hardware, "h100_sxm") != nullptr);
  CHECK(find(hardware, "h100_sxm")->description == "NVIDIA H100 SXM5 80GB");
  CHECK(find(hardware, "tpu_v5e") != nullptr);
  CHECK(std::is_sorted(hardware.begin(), hardware.end(),
                       [](const auto& a, const auto& b) { return a.name < b.name; }));
  const auto models = rsim::catalog(rsim::CatalogKind::models);
  REQUIRE(find(models, "llama3_70b") != nullptr);
  // Llama 3 70B: 70,553,706,496 parameters (hf_families_test.cpp, Llama-3.1-70B); DeepSeek-V3
  // 671,026,419,200 and 37,552,297,472 active (hf_moe_mla_test.cpp), 4 significant digits.
  CHECK(find(models, "llama3_70b")->description == "Llama 3 70B: 70.55B parameters; 80 layers");
  REQUIRE(find(models, "deepseek_v3") != nullptr);
  CHECK(find(models, "deepseek_v3")->description ==
        "DeepSeek-V3: 671B parameters, 37.55B active; 61 layers, 256 experts top-8, latent "
        "attention");
  CHECK(find(rsim::catalog(rsim::CatalogKind::plans), "megatron_tp") != nullptr);
  CHECK(find(rsim::catalog(rsim::CatalogKind::precisions), "fp8") != nullptr);
  CHECK(rsim::parse_catalog_kind("gpus") == std::nullopt);
}

TEST_CASE("a preset name that is not there gets the candidates and the closest", "[catalog]") {
  const std::vector<std::string> names{"h100_sxm", "thor_t5000", "tpu_v5e"};
  CHECK(rsim::closest_name("h100", names) == "h100_sxm");          // a prefix
  CHECK(rsim::closest_name("tpu_v5p", names) == "tpu_v5e");        // one letter off
  CHECK(rsim::closest_name("THOR_T5000", names) == "thor_t5000");  // case
  CHECK(rsim::closest_name("mi300x", names) == std::nullopt);      // nothing near
  // The shipped library, in name order (hardware/*.yaml).
  CHECK_THROWS_WITH(rsim::find_preset("h100_sx", "hardware", {}),
                    Catch::Contains("did you mean 'h100_sxm'?") &&
                        Catch::Contains("presets: a100_sxm_40gb, a100_sxm_80gb, b200, "
                                        "gb200_nvl72, h100_pcie, h100_sxm, h200_sxm, l4, l40s, "
                                        "mi300x, mi325x, orin_agx_64gb, rtx_4090, thor_t5000, "
                                        "tpu_v4, tpu_v5e, tpu_v5p, tpu_v6e"));
}
