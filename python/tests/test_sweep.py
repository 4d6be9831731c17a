"""rsim.sweep, shards and merge, Dask, the GIL and Ctrl-C."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import rsim

SWEEP = "scenarios/shard_d_vs_batch.yaml"


def test_sweep_is_the_cli_json_and_a_frame(rsim_cli):
    result = rsim.sweep(SWEEP, threads=2)
    assert result.to_json() == rsim_cli("sweep", SWEEP, "--threads", "2", "--format", "json")
    # The scenario's sweep: block, workload.batch 16..4096:log2 (16, 32, …, 4096: 9 values) ×
    # plan [shard_d, shard_batch]: 18 points, the last axis fastest.
    frame = result.frame()
    assert len(frame) == 18
    assert list(frame.columns[:2]) == ["workload.batch", "plan"]
    assert list(frame["workload.batch"][:4]) == [16, 16, 32, 32]
    assert list(frame["plan"][:2]) == ["shard_d", "shard_batch"]
    assert (frame["t_lower_s"] <= frame["t_upper_s"]).all()
    over = rsim.sweep(SWEEP, over={"workload.batch": [64, 128], "plan": ["shard_batch"]},
                      threads=2, crossovers=False)
    assert len(over.points) == 2 and over.crossovers == []


def test_shards_merge_to_the_whole_sweep():
    whole = rsim.sweep(SWEEP, threads=2)
    paths = []
    for index in range(1, 4):
        path = f"{os.environ.get('TMPDIR', '/tmp')}/rsim_py_shard_{os.getpid()}_{index}.json"
        with open(path, "w") as file:
            file.write(rsim.sweep(SWEEP, threads=2, shard=f"{index}/3").to_json())
        paths.append(path)
    merged = rsim.merge(paths, threads=2)
    assert isinstance(merged, rsim.SweepResult)
    assert merged.to_json() == whole.to_json()
    with pytest.raises(rsim.InputError, match="missing"):
        rsim.merge(paths[:2])
    for path in paths:
        os.remove(path)


def test_dask_sweep_and_search_equal_the_local_calls():
    distributed = pytest.importorskip("distributed")
    import rsim.distributed

    with distributed.Client(processes=False, n_workers=2, threads_per_worker=1,
                            dashboard_address=None) as client:
        local = rsim.sweep(SWEEP, threads=2)
        assert rsim.distributed.sweep(client, SWEEP, threads=2).to_json() == local.to_json()
        assert rsim.distributed.sweep(client, SWEEP, shards=5, threads=2).to_json() == \
            local.to_json()
        train = "scenarios/llama3_8b_train_h100.yaml"
        local_search = rsim.search(train, devices=4, top=5, threads=2)
        remote = rsim.distributed.search(client, train, devices=4, top=5, threads=2, shards=3)
        assert remote.to_json() == local_search.to_json()


def test_the_gil_is_released_during_a_sweep():
    # While a sweep runs on another thread, this thread keeps running Python.
    ticks = 0
    done = threading.Event()

    def sweep():
        rsim.sweep("scenarios/llama3_8b_h100.yaml",
                   over={"workload.batch": "1..4000"}, threads=1, crossovers=False)
        done.set()

    worker = threading.Thread(target=sweep)
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert ticks > 10


def test_ctrl_c_interrupts_a_sweep():
    # 20,000 Mixtral points (a mixture of experts takes the per-point path, milliseconds each)
    # would run for minutes; SIGINT after 3 s stops the sweep and the module raises
    # KeyboardInterrupt (the CLI's exit 130) within seconds.
    code = (
        "import rsim, sys, time\n"
        "start = time.monotonic()\n"
        "try:\n"
        "    rsim.sweep('scenarios/mixtral_8x7b_h100.yaml', over={'workload.batch': '1..20000'},"
        " threads=1, crossovers=False)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', time.monotonic() - start); sys.exit(0)\n"
        "print('finished'); sys.exit(1)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    word, seconds = out.split()
    assert word == "interrupted"
    assert float(seconds) < 30
