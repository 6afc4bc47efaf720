"""What the benchmarks share: `e2g` run as a user runs it, timed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def e2g_seconds(data: Path, *args: str) -> float:
    """The wall time of one `e2g -q ARGS` on the data dir `data`, in its own
    process (start-up included, as a user waits for it); a failure ends the run."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "e2g", "--data-dir", str(data), "-q", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"e2g {' '.join(args)} failed: {done.stderr.strip()}")
    return elapsed
