"""Type stubs of the rsim module (python/rsim/__init__.py)."""

import os
from typing import Any, Dict, Iterable, KeysView, List, Mapping, Optional, Sequence, Tuple, Union

import pandas

__version__: str

Source = Union[str, os.PathLike[str], Mapping[str, Any]]
Pairs = Union[None, str, Mapping[str, Any], Iterable[str]]

class InputError(ValueError):
    message: str
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    def __init__(self, message: str) -> None: ...

class Result:
    command: str
    data: Dict[str, Any]
    def __init__(self, command: str, text: str) -> None: ...
    def __getitem__(self, key: str) -> Any: ...
    def __contains__(self, key: str) -> bool: ...
    def keys(self) -> KeysView[str]: ...
    def to_json(self) -> str: ...

class RunResult(Result):
    @property
    def serving(self) -> Optional[Dict[str, Any]]: ...
    @property
    def totals(self) -> Dict[str, Any]: ...
    @property
    def stages(self) -> List[Dict[str, Any]]: ...
    @property
    def ops(self) -> List[Dict[str, Any]]: ...
    def ops_frame(self) -> pandas.DataFrame: ...
    def stages_frame(self) -> pandas.DataFrame: ...

class SweepResult(Result):
    @property
    def points(self) -> List[Dict[str, Any]]: ...
    @property
    def crossovers(self) -> List[Dict[str, Any]]: ...
    @property
    def axes(self) -> List[Dict[str, Any]]: ...
    def frame(self) -> pandas.DataFrame: ...

def cli(args: Sequence[str]) -> Tuple[int, str, str]: ...
def run(
    scenario: Source,
    *,
    set: Pairs = ...,
    precision: Optional[str] = ...,
    plan: Optional[str] = ...,
    mode: Optional[str] = ...,
    variant: Optional[str] = ...,
    peak: Pairs = ...,
    bandwidth: Pairs = ...,
    calibration: Optional[str] = ...,
    hardware: Optional[Source] = ...,
    model: Optional[Source] = ...,
) -> RunResult: ...
def whatif(scenario: Source, **options: Any) -> Result: ...
def compare(scenario: Source, *, plans: Optional[Sequence[str]] = ..., **options: Any) -> Result: ...
def sweep(
    scenario: Source,
    *,
    over: Pairs = ...,
    threads: Optional[int] = ...,
    rank_by: Optional[str] = ...,
    crossovers: bool = ...,
    shard: Optional[str] = ...,
    **options: Any,
) -> SweepResult: ...
def search(
    scenario: Source,
    *,
    devices: int,
    objective: Optional[str] = ...,
    rank_by: Optional[str] = ...,
    top: Optional[int] = ...,
    threads: Optional[int] = ...,
    exhaustive: bool = ...,
    shard: Optional[str] = ...,
    **options: Any,
) -> Result: ...
def threshold(
    scenario: Source,
    *,
    param: Optional[str] = ...,
    roof: Optional[str] = ...,
    scope: Optional[str] = ...,
    max: Optional[int] = ...,
    **options: Any,
) -> Result: ...
def roofs(hardware: Source, *, compute: Optional[str] = ..., **options: Any) -> Result: ...
def matmul(
    hardware: Source,
    *,
    b: int,
    d: int,
    f: int,
    dtype: Optional[str] = ...,
    weights: Optional[str] = ...,
    out: Optional[str] = ...,
    compute: Optional[str] = ...,
    precision: Optional[str] = ...,
    per_batch_weights: bool = ...,
    devices: Optional[int] = ...,
    shard: Optional[str] = ...,
    network: Optional[str] = ...,
    sharp: bool = ...,
    tile: Optional[Sequence[str]] = ...,
    **options: Any,
) -> Result: ...
def collective(
    hardware: Source,
    *,
    op: str,
    bytes: Union[int, float, str],
    devices: int,
    network: str,
    axes: Optional[int] = ...,
    wraparound: bool = ...,
    sharp: bool = ...,
    **options: Any,
) -> Result: ...
def import_hf(config: Source, *, name: Optional[str] = ...) -> str: ...
def list_presets(kind: str) -> List[Dict[str, Any]]: ...
def merge(files: Sequence[Union[str, os.PathLike[str]]], *, threads: Optional[int] = ...) -> Result: ...
