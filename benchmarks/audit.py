"""Speed and memory of `e2g audit` over a repository `e2g match` has matched.

    python benchmarks/audit.py --data-dir DATA_DIR --repo REPO [--jobs 1 2] [--rounds 3] [REV ...]

The store must hold `e2g match`'s answers for the range (scale.py's, or run
`e2g match -C REPO` once): the audit is then a reading of stored facts, and this
measures that reading. Each round runs `e2g -q audit -C REPO --json --no-match -j N
REVS` as a child process for every --jobs value, alternating (a shared machine's
load falls on all alike), with start-up included, and records the wall time, the CPU
time of the process tree, the peak RSS of its largest process (os.wait4) and of the
whole tree (polled from /proc), the load average after it, and the verdict counts
(which must agree between --jobs values: workers never change a verdict).

Prints a table of medians (commits/s, seconds, CPU seconds, peak RSS) per --jobs,
then the verdict counts; --json prints one object instead. Exit 1 when a run fails
or two runs disagree on any verdict.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ingest as ingest_bench  # noqa: E402
from match import byte_compiled  # noqa: E402

ingest_bench.POLL_SECONDS = 0.5  # a poll costs CPU the measured run shares


def note(text: str) -> None:
    print(f"audit bench: {text}", file=sys.stderr, flush=True)


def run_audit(
    data: Path, repo: Path, revs: list[str], jobs: int, logs: Path
) -> dict[str, object]:
    """One timed `e2g audit` run: its measures, summary and a digest of its lines.

    Its output goes to a file, read back a line at a time: a benchmark process
    holding 60,000 lines would lend its size to the next child's peak RSS (the
    kernel counts a forked child's pages before it execs)."""
    argv = [
        sys.executable, "-m", "e2g", "--data-dir", str(data), "-q", "audit",
        "-C", str(repo), "--json", "--no-match", "-j", str(jobs), *revs,
    ]  # fmt: skip
    logs.mkdir(parents=True, exist_ok=True)
    out_path = logs / "stdout"
    with out_path.open("wb") as out, (logs / "stderr").open("wb") as err:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err)
        with ingest_bench.TreePoller(process.pid) as poller:
            _, status, usage = os.wait4(process.pid, 0)  # this child's own rusage
            seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"e2g audit failed: {(logs / 'stderr').read_text()}")
    digest = hashlib.sha1()
    summary: dict[str, object] = {}
    with out_path.open(encoding="utf-8") as lines:
        for line in lines:
            one = json.loads(line)
            if "summary" in one:
                summary = one["summary"]
            else:  # verdicts only: the evidence is text, the elapsed time moves
                digest.update(f"{one['commit']} {one['verdict']}\n".encode())
    return {
        "jobs": jobs,
        "seconds": seconds,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_process_rss": usage.ru_maxrss * 1024,  # Linux reports KiB
        "peak_tree_rss": poller.peak,
        "load": os.getloadavg()[0],
        "commits": summary["commits"],
        "counts": summary["counts"],
        "tags": summary["tags"],
        "tags_backed": summary["tags_backed"],
        "digest": digest.hexdigest(),
    }


def medians(runs: list[dict[str, object]], jobs: int) -> dict[str, object]:
    mine = [run for run in runs if run["jobs"] == jobs]

    def median(key: str) -> float:
        return statistics.median(float(run[key]) for run in mine)  # type: ignore[arg-type]

    seconds = median("seconds")
    commits = int(mine[0]["commits"])  # type: ignore[call-overload]
    return {
        "jobs": jobs,
        "commits": commits,
        "seconds": round(seconds, 2),
        "commits_per_second": round(commits / seconds),
        "cpu_seconds": round(median("cpu_seconds"), 2),
        "peak_process_rss_mb": round(median("peak_process_rss") / 2**20),
        "peak_tree_rss_mb": round(median("peak_tree_rss") / 2**20),
        "load": round(median("load"), 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--logs", type=Path, default=Path("/tmp/e2g-audit-bench"))
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("revs", nargs="*", help="revision range (default HEAD)")
    args = parser.parse_args(argv)
    byte_compiled()
    runs = []
    for number in range(args.rounds):
        for jobs in args.jobs:
            note(f"round {number + 1}, -j {jobs}")
            runs.append(
                run_audit(
                    args.data_dir,
                    args.repo,
                    args.revs,
                    jobs,
                    args.logs / f"{number}-{jobs}",
                )
            )
    agree = len({run["digest"] for run in runs}) == 1
    result = {
        "runs": [medians(runs, jobs) for jobs in args.jobs],
        "counts": runs[0]["counts"],
        "tags": runs[0]["tags"],
        "tags_backed": runs[0]["tags_backed"],
        "verdicts_agree": agree,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            "jobs  commits  seconds  commits/s  CPU s  peak RSS (process / tree)  load"
        )
        for row in result["runs"]:  # type: ignore[attr-defined]
            print(
                f"{row['jobs']:>4}  {row['commits']:>7}  {row['seconds']:>7}  "
                f"{row['commits_per_second']:>9}  {row['cpu_seconds']:>5}  "
                f"{row['peak_process_rss_mb']:>6} MB / {row['peak_tree_rss_mb']} MB"
                f"{'':>10}{row['load']}"
            )
        print("verdicts: " + ", ".join(f"{k} {v}" for k, v in result["counts"].items()))  # type: ignore[attr-defined]
        print(
            f"review tags backed by a mail: {result['tags_backed']} of {result['tags']}"
        )
        print("verdicts agree across runs" if agree else "VERDICTS DIFFER across runs")
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
