"""rsim.run and the other single-scenario commands: what the CLI prints, as Python values."""

import json

import pytest

import rsim

PI05 = "scenarios/pi05_thor.yaml"
LLAMA = "scenarios/llama3_8b_h100.yaml"


def test_run_is_the_cli_json(rsim_cli):
    result = rsim.run(PI05)
    text = rsim_cli("run", PI05, "--format", "json")
    assert result.to_json() == text
    assert result.totals["t_lower_s"] == json.loads(text)["totals"]["t_lower_s"]
    assert result.totals["t_lower_s"] < result.totals["t_expected_s"] < result.totals["t_upper_s"]
    assert result["schema_version"] == 1


def test_frames_have_a_row_per_op_and_stage():
    result = rsim.run(PI05)
    ops = result.ops_frame()
    assert len(ops) == len(result.ops)
    assert list(ops["name"]) == [op["name"] for op in result.ops]
    stages = result.stages_frame()
    assert list(stages["name"]) == [stage["name"] for stage in result.stages]
    assert "blocks" not in stages.columns
    # The stages add up to the whole run (each stage's lower bound is Σ over its ops).
    assert stages["t_lower_s"].sum() == pytest.approx(result.totals["t_lower_s"], rel=1e-12)


def test_set_takes_a_dict_with_yaml_values():
    # Llama 3 8B decode, 8 sequences of 4,096 tokens on one H100 SXM, BF16: a step reads the
    # weights but the embedding table (8.03e9 − 128,256 × 4,096 parameters) × 2 B = 15.01 GB,
    # and the KV cache, 8 × 4,096 tokens × 32 layers × 2 (K, V) × 8 heads × 128 × 2 B = 4.295 GB:
    # 19.3 GB / 3.35 TB/s (the H100 SXM datasheet's HBM3) ≈ 5.78 ms, memory-bound.
    result = rsim.run(LLAMA, set={"workload": {"phase": "decode", "batch": 8, "context": 4096}})
    assert result.totals["t_lower_s"] == pytest.approx(5.78e-3, rel=5e-3)
    assert result.totals["bound"] == "memory"
    same = rsim.run(LLAMA, set=["workload={phase: decode, batch: 8, context: 4096}"])
    assert same.totals == result.totals


def test_a_scenario_hardware_or_model_may_be_a_dict():
    scenario = {
        "name": "Llama 3 8B prefill on H100 SXM (BF16)",
        "hardware": "h100_sxm",
        "model": "llama3_8b",
        "workload": {"phase": "prefill", "batch": 4, "seq_len": 2048},
        "precision": {"weights": "bf16", "activations": "bf16", "compute": "bf16"},
        "fusion": {"attention": "fused", "into_matmul": ["activation", "residual", "rope"]},
    }
    from_dict = rsim.run(scenario)
    from_file = rsim.run(LLAMA)
    assert from_dict.totals == from_file.totals
    # A hardware and a model given as dicts (the shipped files' own keys, read with PyYAML):
    # the same figures as the presets.
    yaml = pytest.importorskip("yaml")
    with open("hardware/h100_sxm.yaml") as file:
        hardware = yaml.safe_load(file)
    with open("models/llama3_8b.yaml") as file:
        model = yaml.safe_load(file)
    assert rsim.run(LLAMA, hardware=hardware, model=model).totals == from_file.totals
    assert (rsim.matmul(hardware, b=64, d=4096, f=4096)["t_lower_s"]
            == rsim.matmul("h100_sxm", b=64, d=4096, f=4096)["t_lower_s"])


def test_bad_input_raises_input_error_with_the_place():
    with pytest.raises(rsim.InputError) as missing:
        rsim.run("scenarios/no_such_scenario.yaml")
    assert "no_such_scenario.yaml" in str(missing.value)
    with pytest.raises(rsim.InputError) as bad_key:
        rsim.run({"hardware": "h100_sxm", "model": "llama3_8b",
                  "workload": {"phase": "prefill", "batch": 4, "seq_len": 2048},
                  "bogus_key": 1})
    error = bad_key.value
    assert "bogus_key" in error.message
    assert error.file is not None and error.file.endswith(".yaml")
    assert error.line is not None and error.line > 1
    assert error.column is not None
    with pytest.raises(rsim.InputError):
        rsim.run(LLAMA, plan="no_such_plan")
    # The interpreter goes on: the next call works.
    assert rsim.run(PI05).totals["t_lower_s"] > 0


def test_version_is_the_cli_version(rsim_cli):
    assert rsim_cli("--version").split() == ["rsim", rsim.__version__]


def test_a_serving_run_has_its_latencies(rsim_cli):
    args = {"workload.requests": 100, "workload.input_tokens": 256, "workload.output_tokens": 32}
    result = rsim.run("scenarios/llama3_70b_serve_h100.yaml", set=args)
    serving = result.serving
    assert serving["requests"] == 100
    assert 0 < serving["ttft_s"]["p50"] <= serving["ttft_s"]["p99"]
    assert result.to_json() == rsim_cli(
        "run", "scenarios/llama3_70b_serve_h100.yaml", "--format", "json",
        *[arg for key, value in args.items() for arg in ("--set", f"{key}={value}")])
    assert rsim.run(PI05).serving is None
