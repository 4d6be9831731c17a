"""The probe commands from Python: matmul, collective, roofs, threshold, whatif, compare,
search, import_hf, list_presets, and the raw cli()."""

import pytest

import rsim


def test_matmul_counts_flops_and_bytes():
    # X[1024, 1024] · W[1024, 1024] in BF16: 2·B·D·F = 2 × 1024³ = 2,147,483,648 FLOPs; at
    # least X, W and the output once: 3 × 1024² × 2 B = 6,291,456 B.
    result = rsim.matmul("h100_sxm", b=1024, d=1024, f=1024, dtype="bf16")
    assert result["flops"] == 2 * 1024**3
    assert result["bytes"] == 3 * 1024**2 * 2


def test_collective_on_nvlink(rsim_cli):
    result = rsim.collective("h100_sxm", op="all-reduce", bytes="1 GB", devices=8,
                             network="nvlink")
    assert result.to_json() == rsim_cli("collective", "--hardware", "h100_sxm", "--op",
                                         "all-reduce", "--bytes", "1 GB", "--devices", "8",
                                         "--network", "nvlink", "--format", "json")


def test_whatif_compare_threshold_search_roofs_are_the_cli(rsim_cli):
    scenario = "scenarios/shard_d_vs_batch.yaml"
    assert rsim.whatif(scenario).to_json() == rsim_cli("whatif", scenario, "--format", "json")
    assert rsim.compare(scenario, plans=["megatron_tp"]).to_json() == rsim_cli(
        "compare", scenario, "--plan", "megatron_tp", "--format", "json")
    assert rsim.threshold("scenarios/llama3_8b_h100.yaml").to_json() == rsim_cli(
        "threshold", "scenarios/llama3_8b_h100.yaml", "--format", "json")
    search = rsim.search("scenarios/llama3_70b_tp8_h100.yaml", devices=8, top=3)
    assert search.to_json() == rsim_cli("search", "scenarios/llama3_70b_tp8_h100.yaml",
                                        "--devices", "8", "--top", "3", "--format", "json")
    assert len(search["ranked"]) == 3
    assert rsim.roofs("h100_sxm", mode=None).to_json() == rsim_cli("roofs", "h100_sxm",
                                                                   "--format", "json")


def test_import_hf_takes_a_config_dict():
    # Llama-2-7b's config.json keys: 32 layers of width 4096, 32 heads, MLP 11008, vocab 32000.
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
        "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32,
        "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "hidden_act": "silu",
    }
    text = rsim.import_hf(config, name="llama2_7b_from_dict")
    assert "d_model: 4096" in text or "hidden_size: 4096" in text
    assert "llama2_7b_from_dict" in text
    with pytest.raises(rsim.InputError):
        rsim.import_hf({"model_type": "llama"})


def test_list_presets_and_cli():
    names = [entry["name"] for entry in rsim.list_presets("hardware")]
    assert "h100_sxm" in names and "thor_t5000" in names
    code, out, err = rsim.cli(["roofs", "h100_sxm"])
    assert code == 0 and "H100" in out and err == ""
    code, _, err = rsim.cli(["frobnicate"])
    assert code == 2 and "unknown command" in err
    with pytest.raises(rsim.InputError):
        rsim.list_presets("gadgets")


def test_the_stubs_name_every_public_function():
    import ast
    import inspect
    from pathlib import Path

    stub = ast.parse((Path(rsim.__file__).parent / "__init__.pyi").read_text())
    stubbed = {node.name for node in stub.body if isinstance(node, ast.FunctionDef)}
    functions = {name for name in rsim.__all__ if inspect.isfunction(getattr(rsim, name))}
    assert functions <= stubbed
    for name in functions:
        # Each function's keyword options are in its stub (those it names itself).
        stub_function = next(node for node in stub.body
                             if isinstance(node, ast.FunctionDef) and node.name == name)
        stub_names = {arg.arg for arg in stub_function.args.args + stub_function.args.kwonlyargs}
        parameters = inspect.signature(getattr(rsim, name)).parameters
        named = {p for p, v in parameters.items() if v.kind != inspect.Parameter.VAR_KEYWORD}
        assert named <= stub_names, name
        assert getattr(rsim, name).__doc__, name
