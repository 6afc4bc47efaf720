"""A tiny run of benchmarks/backports.py: its store answers every backport from its
upstream and matches every new commit, so the figures it prints compare like with
like."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "backports.py"


def test_a_tiny_run(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_backports", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    found = module.run(tmp_path, 30, rounds=2)
    assert found["stable"]["backports"] == 30
    assert found["stable"]["matched"] == 30
    assert found["fresh"] == {**found["fresh"], "matched": 30, "backports": 0}
    assert found["mainline"]["matched"] == 30
    # Each round matched from the store as mainline's match left it.
    for name in ("stable", "fresh"):
        runs = found[name]["runs"]
        assert len(runs) == 2
        assert min(runs) <= found[name]["seconds"] <= max(runs)
    low, high = found["speedup_range"]
    assert 0 < low <= high
