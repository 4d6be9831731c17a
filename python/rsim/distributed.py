"""Sweeps and training searches as Dask tasks.

``rsim.distributed.sweep(client, scenario, …)`` splits the grid into ``shards`` contiguous slices
(``rsim sweep --shard K/N``), runs each as a task on the cluster behind ``client`` (a
``dask.distributed.Client``), and joins their outputs with ``rsim merge``: the result is the
local ``rsim.sweep(scenario, …)``'s, bit for bit (the crossovers are found again on the whole
grid, in this process). ``search`` does the same for a training search's plan shapes.

The workers need rsim importable and the scenario's files at the same paths (relative paths are
relative to each worker's working directory, so a shared file system or absolute paths).
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Any, List, Optional

import rsim

__all__ = ["sweep", "search"]


def _sweep_shard(scenario: Any, shard: str, options: dict) -> str:
    return rsim.sweep(scenario, shard=shard, **options).to_json()


def _search_shard(scenario: Any, shard: str, options: dict) -> str:
    return rsim.search(scenario, shard=shard, **options).to_json()


def _shard_count(client: Any, shards: Optional[int]) -> int:
    if shards is not None:
        if shards < 1:
            raise rsim.InputError(f"shards: expected a number >= 1, got {shards}")
        return shards
    # One task per worker thread: the cluster's whole width, each task on its own core.
    return max(1, sum(client.nthreads().values()))


def _run(client: Any, task, scenario: Any, shards: int, options: dict,
         threads: Optional[int]) -> rsim.Result:
    run_id = uuid.uuid4().hex
    futures = [
        client.submit(task, scenario, f"{index}/{shards}", options,
                      key=f"rsim{task.__name__}-{run_id}-{index}-of-{shards}")
        for index in range(1, shards + 1)
    ]
    texts: List[str] = client.gather(futures)
    with tempfile.TemporaryDirectory(prefix="rsim_shards_") as directory:
        paths = []
        for index, text in enumerate(texts, start=1):
            path = Path(directory) / f"shard_{index}.json"
            path.write_text(text)
            paths.append(str(path))
        return rsim.merge(paths, threads=threads)


def sweep(client: Any, scenario: Any, *, shards: Optional[int] = None, **options: Any) -> rsim.SweepResult:
    """``rsim.sweep(scenario, **options)`` as ``shards`` Dask tasks (default: one per worker
    thread) on ``client``'s cluster, merged; the same result as the local call."""
    count = _shard_count(client, shards)
    result = _run(client, _sweep_shard, scenario, count, options, options.get("threads"))
    assert isinstance(result, rsim.SweepResult)
    return result


def search(client: Any, scenario: Any, *, devices: int, shards: Optional[int] = None,
           **options: Any) -> rsim.Result:
    """``rsim.search(scenario, devices=…, **options)`` for a training scenario as ``shards``
    Dask tasks on ``client``'s cluster, merged; the same result as the local call."""
    count = _shard_count(client, shards)
    options = dict(options, devices=devices)
    return _run(client, _search_shard, scenario, count, options, options.get("threads"))
