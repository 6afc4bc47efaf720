"""The review metrics (issue 36): every metric over a generated list, timed.

Generates a kernel-like archive (benchmarks/gen_archive.py), ingests it (which
derives the patch queue the metrics read), then times, as medians of --rounds runs:
- every metric in process (e2g.api.metrics.metrics), all time, --by year, --by
  month, --dir --depth 2 and --person: the target is under 5 s for a 35k-message list;
- `e2g metrics --by year --json` end to end (a whole process, start-up included);
and prints the peak RSS of this process and a linear projection to 1M messages
(the work is one pass over the queue's rows and the files' paths). No repository is
matched: no patch is applied, so the accepted-side metrics count zeros, at the
same cost of reading every row.

    python benchmarks/metrics.py [--messages 35000] [--rounds 3] [--data DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]
sys.path.insert(0, str(ROOT))

from benchmarks.runs import finish, generated_list, list_options  # noqa: E402
from e2g import config  # noqa: E402
from e2g.api.core import open_store  # noqa: E402
from e2g.api.metrics import Query, metrics  # noqa: E402

TARGET = 5.0
MILLION = 1_000_000


def _timed(settings: config.Settings, query: Query, rounds: int) -> tuple[float, int]:
    times, rows = [], 0
    for _ in range(rounds):
        started = time.perf_counter()
        rows = len(metrics(settings, query))
        times.append(time.perf_counter() - started)
    return statistics.median(times), rows


def _peak_rss(data: Path, env: dict[str, str]) -> tuple[float, float]:
    """The RSS (MB) of a fresh process once e2g is imported, and its peak once it
    computed every metric by month."""
    # VmHWM, not getrusage: a child's ru_maxrss starts at its parent's high-water
    # mark (this process ran the metrics and maybe an ingest), VmHWM at its own.
    hwm = (
        "print([int(l.split()[1]) for l in open('/proc/self/status') "
        "if l.startswith('VmHWM')][0])"
    )
    script = (
        "import sys; from pathlib import Path; from e2g import config; "
        "from e2g.api.metrics import Query, metrics; "
        "s = config.resolve(data_dir=Path(sys.argv[1]), env={}, home=Path('/')); "
        f"{hwm}; metrics(s, Query(by='month')); {hwm}"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(data)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    before, after = (int(line) / 1024 for line in done.stdout.split())
    return before, after


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    list_options(parser, rounds=3)
    args = parser.parse_args(argv)
    work, data = generated_list(args, "e2g-metrics-")
    settings = config.resolve(data_dir=data, env={}, home=work)
    with open_store(settings) as store:
        messages = store.max_seq()
        versions = sum(store.queue_state_counts().values())
    print(f"{messages:,} messages, {versions:,} patch versions")
    slowest = 0.0
    for label, query in (
        ("all metrics, all time", Query()),
        ("all metrics --by year", Query(by="year")),
        ("all metrics --by month", Query(by="month")),
        ("all metrics --dir --depth 2", Query(group="dir", depth=2)),
        ("all metrics --person --by year", Query(group="person", by="year")),
    ):
        elapsed, rows = _timed(settings, query, args.rounds)
        slowest = max(slowest, elapsed)
        verdict = "under" if elapsed < TARGET else "OVER"
        print(f"{label}: {elapsed * 1000:,.0f} ms, {rows:,} rows; {verdict} 5 s")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = []
    for _ in range(args.rounds):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "e2g", "--data-dir", str(data), "-q", "metrics"]
            + ["--by", "year", "--json"],
            capture_output=True,
            check=True,
            env=env,
        )
        runs.append(time.perf_counter() - started)
    print(f"e2g metrics --by year --json: {statistics.median(runs) * 1000:,.0f} ms")
    base, peak = _peak_rss(data, env)
    scale = MILLION / max(1, messages)
    print(
        f"peak RSS of a process computing every metric --by month: {peak:,.0f} MB "
        f"({base:,.0f} MB once imported); projected to 1M messages (linear): "
        f"{slowest * scale:,.1f} s for the slowest choice, "
        f"{base + (peak - base) * scale:,.0f} MB"
    )
    finish(work, data, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
