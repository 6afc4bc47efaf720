"""Files written whole or not at all: what e2g keeps beside its store (a tree's log,
its ancestry) is replaced by a temporary file synced and then renamed over it, so a
reader, or the next run after a crash or kill -9, finds the old file or the new one,
never half of either.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from e2g import faults


def replace_whole(
    place: Path, data: bytes, *, fault: str | None = None, sync: bool = True
) -> bool:
    """`place` replaced by `data`, or left as it was: False when the write failed (a
    full disk). A killed writer's temporary file is removed by the next writer.
    `fault`: the fault point (e2g.faults) between the write and the sync; `sync`
    False for a hint whose loss in a power cut costs nothing but time."""
    for leftover in place.parent.glob(f".{place.name}.*.tmp"):
        with contextlib.suppress(OSError):
            leftover.unlink()
    try:
        descriptor, name = tempfile.mkstemp(
            dir=place.parent, prefix=f".{place.name}.", suffix=".tmp"
        )
    except OSError:
        return False
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            if fault is not None:
                faults.point(fault)
            if sync:
                os.fsync(handle.fileno())
        Path(name).replace(place)
    except OSError:
        with contextlib.suppress(OSError):
            Path(name).unlink()
        return False
    return True
