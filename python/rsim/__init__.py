"""rsim in Python: a roofline simulator for LLM workloads and parallelism plans.

Every function runs the same C++ library as the ``rsim`` command, in-process, and returns what
``rsim COMMAND … --format json`` prints, as plain Python values in SI units (seconds, bytes,
FLOP/s), with the same keys::

    import rsim
    result = rsim.run("scenarios/pi05_thor.yaml")
    result.totals["t_lower_s"]          # the lower bound of the whole run, in seconds
    result.ops_frame()                  # one row per op (pandas)

A scenario, hardware or model is a path to a YAML file, a preset name (``rsim.list_presets``) or a
Python dict with the YAML's keys. Bad input raises :class:`InputError` (with ``file``, ``line``
and ``column`` where it came from a file); nothing aborts the interpreter. Sweeps and searches
release the GIL and stop on Ctrl-C (``KeyboardInterrupt``). ``rsim.distributed`` runs sweeps and
training searches as Dask tasks.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _rsim

__all__ = [
    "InputError",
    "Result",
    "RunResult",
    "SweepResult",
    "run",
    "whatif",
    "compare",
    "sweep",
    "search",
    "threshold",
    "roofs",
    "matmul",
    "collective",
    "import_hf",
    "list_presets",
    "merge",
    "cli",
    "__version__",
]

# The presets installed with the package (pip copies hardware/, models/ and scenarios/ there);
# a source-tree build finds them in the tree it was built from.
_SHARE = Path(__file__).resolve().parent / "share"
if _SHARE.is_dir():
    os.environ.setdefault("RSIM_DATA_DIR", str(_SHARE))

Source = Union[str, "os.PathLike[str]", Mapping[str, Any]]


class InputError(ValueError):
    """Input rsim refuses (a bad YAML key, a missing file, a plan that does not divide, an
    impossible range): the command line's exit code 2. ``file``, ``line`` and ``column`` say
    where, when the message names a place in a file."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
        found = re.match(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<column>\d+): ", message)
        self.file: Optional[str] = found.group("file") if found else None
        self.line: Optional[int] = int(found.group("line")) if found else None
        self.column: Optional[int] = int(found.group("column")) if found else None


def _version() -> str:
    code, out, _ = _rsim.run(["--version"])
    return out.decode().split()[-1] if code == 0 else "unknown"


__version__ = _version()


def cli(args: Sequence[str]) -> "tuple[int, str, str]":
    """Run ``rsim ARGS…`` in-process and return (exit code, stdout, stderr) as text: any
    command, any format, exactly what the command line prints."""
    code, out, err = _rsim.run([str(arg) for arg in args])
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _check(code: int, err: str) -> None:
    message = err.strip()
    if message.startswith("rsim: "):
        message = message[len("rsim: ") :]
    if code == 2:
        raise InputError(message)
    if code == 130:
        raise KeyboardInterrupt(message or "rsim: interrupted")
    if code != 0:
        raise RuntimeError(f"rsim exited {code}: {message}")


class _Files:
    """Python dicts given for a scenario, hardware or model, written as YAML files (JSON is
    YAML) for the call's duration."""

    def __init__(self) -> None:
        self._directory: Optional[tempfile.TemporaryDirectory] = None
        self._count = 0

    def path(self, source: Source, kind: str, suffix: str = ".yaml") -> str:
        if isinstance(source, Mapping):
            if self._directory is None:
                self._directory = tempfile.TemporaryDirectory(prefix="rsim_")
            self._count += 1
            path = Path(self._directory.name) / f"{kind}_{self._count}{suffix}"
            path.write_text(json.dumps(source, indent=1))
            return str(path)
        if isinstance(source, (str, os.PathLike)):
            return os.fspath(source)
        raise TypeError(f"{kind}: expected a path, a preset name or a dict, got {type(source)}")

    def close(self) -> None:
        if self._directory is not None:
            self._directory.cleanup()


def _value_text(value: Any) -> str:
    """A --set value: a dict or list as a YAML flow value (JSON), a bool as YAML's."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value)
    return str(value)


def _pairs(flag: str, values: Union[None, str, Mapping[str, Any], Iterable[str]]) -> List[str]:
    """`--flag K=V` for each entry of a dict, or each `K=V` string."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    elif isinstance(values, Mapping):
        values = [f"{key}={_value_text(value)}" for key, value in values.items()]
    args: List[str] = []
    for value in values:
        args += [flag, str(value)]
    return args


def _option(flag: str, value: Any) -> List[str]:
    if value is None or value is False:
        return []
    if value is True:
        return [flag]
    return [flag, str(value)]


def _scenario_args(
    files: _Files,
    *,
    set: Union[None, str, Mapping[str, Any], Iterable[str]] = None,
    precision: Optional[str] = None,
    plan: Optional[str] = None,
    mode: Optional[str] = None,
    variant: Optional[str] = None,
    peak: Union[None, str, Mapping[str, Any], Iterable[str]] = None,
    bandwidth: Union[None, str, Mapping[str, Any], Iterable[str]] = None,
    calibration: Optional[str] = None,
    hardware: Optional[Source] = None,
    model: Optional[Source] = None,
) -> List[str]:
    args = _pairs("--set", set)
    if hardware is not None:
        args += ["--set", f"hardware={files.path(hardware, 'hardware')}"]
    if model is not None:
        args += ["--set", f"model={files.path(model, 'model')}"]
    args += _option("--precision", precision)
    args += _option("--plan", plan)
    args += _option("--mode", mode)
    args += _option("--variant", variant)
    args += _pairs("--peak", peak)
    args += _pairs("--bandwidth", bandwidth)
    args += _option("--calibration", calibration)
    return args


def _roof_args(
    *,
    mode: Optional[str] = None,
    peak: Union[None, str, Mapping[str, Any], Iterable[str]] = None,
    bandwidth: Union[None, str, Mapping[str, Any], Iterable[str]] = None,
    calibration: Optional[str] = None,
) -> List[str]:
    return (
        _option("--mode", mode)
        + _pairs("--peak", peak)
        + _pairs("--bandwidth", bandwidth)
        + _option("--calibration", calibration)
    )


class Result:
    """What one command printed as JSON: ``data`` (a dict, SI units, the CLI's keys), indexable
    like it (``result["totals"]``); ``to_json()`` is the command's ``--format json`` text."""

    def __init__(self, command: str, text: str):
        self.command = command
        self._text = text
        self.data: Dict[str, Any] = json.loads(text)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __contains__(self, key: str) -> bool:
        return key in self.data

    def keys(self):
        return self.data.keys()

    def to_json(self) -> str:
        """The JSON exactly as ``rsim COMMAND … --format json`` prints it."""
        return self._text

    def __repr__(self) -> str:
        return f"<rsim {self.command} result: {', '.join(list(self.data)[:8])}, …>"


def _frame(rows: List[Dict[str, Any]]):
    try:
        import pandas
    except ImportError as error:  # pragma: no cover - pandas is optional
        raise ImportError("this needs pandas (Debian: apt install python3-pandas)") from error
    return pandas.DataFrame(rows)


class RunResult(Result):
    """``rsim run``: ``totals`` (the whole run), ``stages`` and ``ops`` (lists of dicts); for a
    serving scenario (``phase: serve``) ``serving``: TTFT, TPOT, end to end (each ``mean``,
    ``p50``, ``p90``, ``p99``), throughput, goodput and KV occupancy."""

    @property
    def serving(self) -> Optional[Dict[str, Any]]:
        return self.data.get("serving")

    @property
    def totals(self) -> Dict[str, Any]:
        return self.data["totals"]

    @property
    def stages(self) -> List[Dict[str, Any]]:
        return self.data["stages"]

    @property
    def ops(self) -> List[Dict[str, Any]]:
        return self.data["ops"]

    def ops_frame(self):
        """The ops as a pandas DataFrame, one row per op (its scalar figures; the per-tier
        breakdowns stay dicts in their cells)."""
        return _frame(self.ops)

    def stages_frame(self):
        """The stages as a pandas DataFrame, one row per stage (without their blocks)."""
        return _frame([{k: v for k, v in stage.items() if k != "blocks"} for stage in self.stages])


class SweepResult(Result):
    """``rsim sweep``: ``points`` (grid order, the last axis fastest), ``crossovers``,
    ``axes``; ``frame()`` one row per point with a column per axis."""

    @property
    def points(self) -> List[Dict[str, Any]]:
        return self.data["points"]

    @property
    def crossovers(self) -> List[Dict[str, Any]]:
        return self.data["crossovers"]

    @property
    def axes(self) -> List[Dict[str, Any]]:
        return self.data["axes"]

    def frame(self):
        """The points as a pandas DataFrame: the axes' values (numbers where the axis is
        numeric), then the figures (t_lower_s, t_expected_s, …, error)."""
        numeric = {axis["key"] for axis in self.axes if axis["numeric"]}
        rows = []
        for point in self.points:
            row: Dict[str, Any] = {
                key: int(value) if key in numeric else value
                for key, value in point["values"].items()
            }
            row.update({key: value for key, value in point.items() if key != "values"})
            rows.append(row)
        return _frame(rows)


def _json_command(command: str, args: List[str], files: _Files, kind=Result) -> Result:
    try:
        code, out, err = cli([command] + args + ["--format", "json"])
    finally:
        files.close()
    if command in ("sweep", "search", "merge") and code == 130:
        raise KeyboardInterrupt("rsim: interrupted (Ctrl-C)")
    _check(code, err)
    return kind(command, out)


def run(scenario: Source, **options: Any) -> RunResult:
    """Cost a scenario op by op against its roofs (``rsim run``).

    Options (all keyword, all optional): ``set`` (a dict of scenario keys, e.g.
    ``{"workload.batch": 8}``, or ``KEY=VALUE`` strings), ``precision``, ``plan``, ``mode``,
    ``variant``, ``peak`` (``{"bf16": "989 TFLOP/s"}``), ``bandwidth`` (``{"hbm": "3.35 TB/s"}``),
    ``calibration`` (a file ``rsim calibrate`` wrote), ``hardware`` and ``model`` (a preset name,
    a path or a dict, replacing the scenario's).
    """
    files = _Files()
    args = [files.path(scenario, "scenario")] + _scenario_args(files, **options)
    return _json_command("run", args, files, RunResult)


def whatif(scenario: Source, **options: Any) -> Result:
    """The scenario's variants beside its baseline (``rsim whatif``); options as :func:`run`
    (``variant`` picks one)."""
    files = _Files()
    args = [files.path(scenario, "scenario")] + _scenario_args(files, **options)
    return _json_command("whatif", args, files)


def compare(scenario: Source, *, plans: Optional[Sequence[str]] = None, **options: Any) -> Result:
    """Plan presets side by side on the scenario's mesh (``rsim compare``): ``plans`` to
    compare (default: every preset that fits the mesh); other options as :func:`run`."""
    files = _Files()
    args = [files.path(scenario, "scenario")] + _scenario_args(files, **options)
    for plan in plans or []:
        args += ["--plan", plan]
    return _json_command("compare", args, files)


def _over_args(over: Union[None, str, Mapping[str, Any], Iterable[str]]) -> List[str]:
    if over is None:
        return []
    if isinstance(over, Mapping):
        over = [
            f"{key}={','.join(str(v) for v in value) if isinstance(value, (list, tuple, range)) else value}"
            for key, value in over.items()
        ]
    return _pairs("--over", over)


def sweep(
    scenario: Source,
    *,
    over: Union[None, str, Mapping[str, Any], Iterable[str]] = None,
    threads: Optional[int] = None,
    rank_by: Optional[str] = None,
    crossovers: bool = True,
    shard: Optional[str] = None,
    **options: Any,
) -> SweepResult:
    """A grid of scenario keys, evaluated in parallel, with its crossovers (``rsim sweep``).

    ``over``: ``{"workload.batch": [1, 8, 64], "precision": ["bf16", "fp8"]}`` or ``KEY=VALUES``
    strings (``"workload.batch=1..4096:log2"``); default: the scenario's ``sweep:`` block.
    ``threads`` (default: all cores), ``rank_by`` (expected, lower, upper), ``crossovers=False``
    skips their search, ``shard="K/N"`` evaluates one slice (join them with :func:`merge`).
    The GIL is released while it runs; Ctrl-C raises KeyboardInterrupt."""
    files = _Files()
    args = [files.path(scenario, "scenario")] + _scenario_args(files, **options)
    args += _over_args(over)
    args += _option("--threads", threads)
    args += _option("--rank-by", rank_by)
    args += _option("--no-crossovers", not crossovers)
    args += _option("--shard", shard)
    return _json_command("sweep", args, files, SweepResult)


def search(
    scenario: Source,
    *,
    devices: int,
    objective: Optional[str] = None,
    rank_by: Optional[str] = None,
    top: Optional[int] = None,
    threads: Optional[int] = None,
    exhaustive: bool = False,
    shard: Optional[str] = None,
    **options: Any,
) -> Result:
    """Every inference or training plan for ``devices`` devices, ranked (``rsim search``):
    ``objective`` (latency, throughput, cost; inference), ``rank_by``, ``top`` (default 10, 0 =
    all), ``threads``, ``exhaustive``, ``shard="K/N"`` (training; join with :func:`merge`).
    The result's ``ranked`` lists the plans, ``rejected`` the counts by reason."""
    files = _Files()
    args = [files.path(scenario, "scenario"), "--devices", str(devices)]
    args += _scenario_args(files, **options)
    args += _option("--objective", objective)
    args += _option("--rank-by", rank_by)
    args += _option("--top", top)
    args += _option("--threads", threads)
    args += _option("--exhaustive", exhaustive)
    args += _option("--shard", shard)
    return _json_command("search", args, files)


def threshold(
    scenario: Source,
    *,
    param: Optional[str] = None,
    roof: Optional[str] = None,
    scope: Optional[str] = None,
    max: Optional[int] = None,
    **options: Any,
) -> Result:
    """Where compute reaches the memory or network roof (``rsim threshold``): ``param`` (batch,
    seq_len, d_model), ``roof`` (memory, network), ``scope`` (STAGE/GROUP), ``max``."""
    files = _Files()
    args = [files.path(scenario, "scenario")] + _scenario_args(files, **options)
    args += _option("--param", param)
    args += _option("--roof", roof)
    args += _option("--scope", scope)
    args += _option("--max", max)
    return _json_command("threshold", args, files)


def roofs(hardware: Source, *, compute: Optional[str] = None, **options: Any) -> Result:
    """A device's peaks, bandwidths and ridges, each with its source (``rsim roofs``);
    ``mode``, ``peak``, ``bandwidth``, ``calibration`` as :func:`run`."""
    files = _Files()
    args = [files.path(hardware, "hardware")] + _roof_args(**options)
    args += _option("--compute", compute)
    return _json_command("roofs", args, files)


def matmul(
    hardware: Source,
    *,
    b: int,
    d: int,
    f: int,
    dtype: Optional[str] = None,
    weights: Optional[str] = None,
    out: Optional[str] = None,
    compute: Optional[str] = None,
    precision: Optional[str] = None,
    per_batch_weights: bool = False,
    devices: Optional[int] = None,
    shard: Optional[str] = None,
    network: Optional[str] = None,
    sharp: bool = False,
    tile: Optional[Sequence[str]] = None,
    **options: Any,
) -> Result:
    """One X[b, d] · W[d, f] on one device, or split over ``devices`` (``shard`` d, batch or f,
    over ``network``) (``rsim matmul``): bytes and time per memory tier, the tiles, the GEMM's
    tile quantization."""
    files = _Files()
    args = ["--hardware", files.path(hardware, "hardware"), "--b", str(b), "--d", str(d)]
    args += ["--f", str(f)] + _roof_args(**options)
    for flag, value in (
        ("--dtype", dtype),
        ("--weights", weights),
        ("--out", out),
        ("--compute", compute),
        ("--precision", precision),
        ("--per-batch-weights", per_batch_weights),
        ("--devices", devices),
        ("--shard", shard),
        ("--network", network),
        ("--sharp", sharp),
    ):
        args += _option(flag, value)
    for fixed in tile or []:
        args += ["--tile", fixed]
    return _json_command("matmul", args, files)


def collective(
    hardware: Source,
    *,
    op: str,
    bytes: Union[int, float, str],
    devices: int,
    network: str,
    axes: Optional[int] = None,
    wraparound: bool = True,
    sharp: bool = False,
    **options: Any,
) -> Result:
    """One collective's time (``rsim collective``): ``op`` all-gather, reduce-scatter,
    all-reduce, all-to-all or send-recv of ``bytes`` over ``devices`` on ``network``."""
    files = _Files()
    args = ["--hardware", files.path(hardware, "hardware"), "--op", op, "--bytes", str(bytes)]
    args += ["--devices", str(devices), "--network", network] + _roof_args(**options)
    args += _option("--axes", axes)
    args += _option("--no-wraparound", not wraparound)
    args += _option("--sharp", sharp)
    return _json_command("collective", args, files)


def import_hf(config: Union[str, "os.PathLike[str]", Mapping[str, Any]], *, name: Optional[str] = None) -> str:
    """A model YAML (the text ``models/NAME.yaml`` holds) from a Hugging Face ``config.json``:
    its path, its dict, or ``ORG/NAME`` in the local Hub cache (``rsim import-hf``)."""
    files = _Files()
    try:
        source = files.path(config, "config", suffix=".json")
        code, out, err = cli(["import-hf", source] + _option("--name", name))
    finally:
        files.close()
    _check(code, err)
    return out


def list_presets(kind: str) -> List[Dict[str, Any]]:
    """The presets rsim ships: ``kind`` hardware, models, plans or precisions; a list of
    ``{"name": …, "description": …}``."""
    code, out, err = cli(["list", kind, "--format", "json"])
    _check(code, err)
    return json.loads(out)


def merge(files: Sequence[Union[str, "os.PathLike[str]"]], *, threads: Optional[int] = None) -> Result:
    """Join the JSON files of ``sweep(…, shard="K/N")`` or ``search(…, shard="K/N")`` (K = 1…N)
    into what the unsharded call returns (``rsim merge``); a sweep's result is a
    :class:`SweepResult`."""
    code, out, err = cli(["merge"] + [os.fspath(f) for f in files] + _option("--threads", threads))
    _check(code, err)
    data = json.loads(out)
    return (SweepResult if "axes" in data else Result)("merge", out)
