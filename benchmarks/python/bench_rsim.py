"""The Python module's benchmarks (issue 26): medians, printed; nothing asserted.

  python3 benchmarks/python/bench_rsim.py [--repeat N]

run from the repository root with rsim importable (a pip install, or PYTHONPATH=<build>/python of
a Release build) and RSIM_CLI pointing at the rsim executable for the CLI comparison.

1. rsim.run of Llama 2 7B prefill (batch 1 × 2,048 tokens on an H100 SXM) in-process: median of
   N calls, after one warm-up call (the YAML files are read by every call: the module runs the
   command line in-process).
2. rsim.sweep points per second from Python against the CLI's (the same 2^14-point batch line).
3. A Dask sweep (Mixtral 8x7B over 8,192 batches, 8 shards) on 1 vs 2 local worker processes,
   one thread each: the scaling ratio.
"""

import argparse
import json
import os
import statistics
import subprocess
import time

import rsim

SCENARIO = {
    "name": "Llama 2 7B prefill on H100 SXM (BF16)",
    "hardware": "h100_sxm",
    "model": "llama2_7b",
    "workload": {"phase": "prefill", "batch": 1, "seq_len": 2048},
}
SWEEP = "scenarios/llama3_70b_tp8_h100.yaml"
OVER = {"workload.batch": "1..16384"}
# Mixtral 8x7B on 8 H100s: a mixture of experts takes the per-point path (about 0.3 ms a point),
# so the Dask run is mostly evaluation, not process start and merge.
DASK_SWEEP = "scenarios/mixtral_8x7b_h100.yaml"
DASK_OVER = {"workload.batch": "1..8192"}


def median_seconds(call, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    path = "/tmp/rsim_bench_llama2_7b.yaml"
    with open(path, "w") as file:
        json.dump(SCENARIO, file)
    rsim.run(path)
    run_s = median_seconds(lambda: rsim.run(path), args.repeat)
    print(f"rsim.run llama2_7b prefill: median {run_s * 1e6:.0f} us over {args.repeat} calls")

    points = 16384
    rsim.sweep(SWEEP, over=OVER, crossovers=False)
    sweep_s = median_seconds(lambda: rsim.sweep(SWEEP, over=OVER, crossovers=False), 5)
    print(f"rsim.sweep from Python: {points / sweep_s:,.0f} points/s (median of 5)")
    cli = os.environ.get("RSIM_CLI")
    if cli:
        command = [cli, "sweep", SWEEP, "--over", "workload.batch=1..16384", "--no-crossovers",
                   "--format", "json"]
        cli_s = median_seconds(lambda: subprocess.run(command, check=True, capture_output=True), 5)
        print(f"rsim sweep (CLI, JSON to a pipe): {points / cli_s:,.0f} points/s (median of 5); "
              f"Python / CLI time {sweep_s / cli_s:.2f}")

    try:
        import distributed
        from rsim import distributed as rsim_distributed
    except ImportError:
        print("dask.distributed not installed: no Dask benchmark")
        return
    per_workers = {}
    for workers in (1, 2):
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            rsim_distributed.sweep(client, DASK_SWEEP, over=DASK_OVER, crossovers=False,
                                   threads=1, shards=8)
            per_workers[workers] = median_seconds(
                lambda: rsim_distributed.sweep(client, DASK_SWEEP, over=DASK_OVER,
                                               crossovers=False, threads=1, shards=8), 3)
        print(f"Dask sweep, {workers} worker(s): {per_workers[workers]:.3f} s (median of 3)")
    print(f"Dask scaling, 1 -> 2 workers: {per_workers[1] / per_workers[2]:.2f}x")


if __name__ == "__main__":
    main()
