"""Speed of `e2g match` over a whole repository next to git's own floor, in one run.

    python benchmarks/match.py --data-dir STORE_DIR --repo REPO [REV ...]

The floor is `git log -p --no-merges | git patch-id --stable` over the same range: git
has to produce every diff anyway. The store is copied to a temporary data dir first,
so the benchmark neither changes it nor profits from links stored by an earlier run.
Prints commits/s of both (medians of --repeat alternating runs: wall times on a
shared machine move), their ratio, `e2g link` latency and peak RSS.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from match_floor import floor_seconds  # noqa: E402


def run_match(
    data: Path, repo: Path, revs: list[str], jobs: int
) -> tuple[dict[str, object], float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "e2g",
            "--data-dir",
            str(data),
            "-q",
            "match",
            "-C",
            str(repo),
            "--ignore-trailers",
            "--jsonl",
            "-j",
            str(jobs),
            *revs,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - started
    rss = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    matched = sum(1 for line in lines if line["status"] == "matched")
    return {"commits": len(lines), "matched": matched}, seconds, rss


def link_latency(
    data: Path, repo: Path, revs: list[str], count: int = 10
) -> list[float]:
    shas = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "rev-list",
            "--no-merges",
            f"--max-count={count}",
            *(revs or ["HEAD"]),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    times = []
    for sha in shas:
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "e2g",
                "--data-dir",
                str(data),
                "link",
                "-C",
                str(repo),
                "--json",
                sha,
            ],
            capture_output=True,
            check=True,
        )
        times.append(time.perf_counter() - started)
    return times


def fresh_store(source: Path, target: Path) -> Path:
    """A copy of the store (and index) in `target`: each run starts with no links."""
    target.mkdir()
    for name in ("store.sqlite3", "store.sqlite3-wal"):
        if (source / name).exists():
            shutil.copy2(source / name, target / name)
    if (source / "fulltext").exists():
        shutil.copytree(source / "fulltext", target / "fulltext")
    # The copy's own writeback is no part of a match: without this, SQLite's first
    # fsync (a checkpoint) pays for flushing the whole copied store.
    os.sync()
    return target


def byte_compiled() -> None:
    """Compile e2g's modules as installing the package would: with
    PYTHONDONTWRITEBYTECODE set (as on some machines), an editable checkout
    would otherwise be recompiled at every start of every timed run."""
    import e2g

    compileall.compile_dir(Path(e2g.__file__).parent, quiet=2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of each, alternating; medians are reported (default 3)",
    )
    parser.add_argument("revs", nargs="*")
    args = parser.parse_args()
    byte_compiled()
    floors: list[float] = []
    runs: list[float] = []
    peak = 0
    counts: dict[str, object] = {}
    floor_commits = 0
    with tempfile.TemporaryDirectory(prefix="e2g-match-bench-") as scratch:
        for attempt in range(max(1, args.repeat)):
            floor_commits, floor_time = floor_seconds(args.repo, args.revs)
            floors.append(floor_time)
            data = fresh_store(args.data_dir, Path(scratch) / f"data{attempt}")
            counts, seconds, rss = run_match(data, args.repo, args.revs, args.jobs)
            runs.append(seconds)
            peak = max(peak, rss)
        latency = link_latency(data, args.repo, args.revs)
    floor_time, seconds = statistics.median(floors), statistics.median(runs)
    floor_rate = floor_commits / floor_time if floor_time else 0.0
    rate = int(counts["commits"]) / seconds if seconds else 0.0  # type: ignore[call-overload]
    spread = f"(median of {len(runs)}; runs {min(runs):.2f}..{max(runs):.2f} s)"
    print(
        f"git log -p | git patch-id --stable: {floor_commits} commits in {floor_time:.2f} s = {floor_rate:,.0f} commits/s"
    )
    print(
        f"e2g match -j {args.jobs} (trailers ignored): {counts['commits']} commits ({counts['matched']} matched) "
        f"in {seconds:.2f} s = {rate:,.0f} commits/s {spread}; peak RSS {peak / 1024:.0f} MiB"
    )
    print(
        f"ratio floor/e2g: {floor_rate / rate:.1f}x slower than the floor"
        if rate
        else "no commits"
    )
    print(
        f"e2g link wall time over {len(latency)} commits: median {statistics.median(latency) * 1000:.0f} ms, "
        f"max {max(latency) * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
