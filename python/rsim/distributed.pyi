"""Type stubs of rsim.distributed."""

from typing import Any, Optional

import rsim

def sweep(client: Any, scenario: rsim.Source, *, shards: Optional[int] = ..., **options: Any) -> rsim.SweepResult: ...
def search(
    client: Any, scenario: rsim.Source, *, devices: int, shards: Optional[int] = ..., **options: Any
) -> rsim.Result: ...
