"""Soak: a default-option `e2g ingest` of a large generated archive, to the end.

Generates (or reuses) a kernel-list mbox of --count messages (default 200,000) with
gen_archive.py, runs `python -m e2g --data-dir D ingest --json ARCHIVE` exactly as a
user would (parse workers, index process), optionally beside a CPU hog on every core
(--busy, the machine the reliability bug showed up on), then checks and prints:

- elapsed seconds, messages/s, and the peak RSS of the largest process of the run;
- the store's message count and the full-text index's document count and lag;
- a search whose hit count is known from the store (`has:diff`, in process).

It fails loudly (exit 1, with the reason) when the run does not end within --bound
seconds, exits non-zero, or leaves the index unequal to the store. notmuch is the
reference for speed: `benchmarks/ingest.py` runs the two side by side.

    python benchmarks/soak.py [--count 200000] [--workdir DIR] [--busy] [--bound 3600]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import gen_archive  # noqa: E402

from e2g import config  # noqa: E402
from e2g.api import core  # noqa: E402
from e2g.index.fulltext import Fulltext  # noqa: E402


def _hog(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


def _start_hogs(seconds: float) -> list[multiprocessing.Process]:
    hogs = [
        multiprocessing.Process(target=_hog, args=(seconds,), daemon=True)
        for _ in range(os.cpu_count() or 1)
    ]
    for hog in hogs:
        hog.start()
    return hogs


def _ingest(data: Path, archive: Path, bound: float) -> tuple[dict[str, object], float]:
    command = [
        sys.executable,
        "-m",
        "e2g",
        "--data-dir",
        str(data),
        "ingest",
        "--json",
        str(archive),
    ]
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=bound,
            check=False,
            cwd=HERE.parent,
        )
    except subprocess.TimeoutExpired:
        sys.exit(f"soak: FAILED: the ingest did not end within {bound:.0f} s")
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(
            f"soak: FAILED: the ingest exited {done.returncode}: {done.stderr.strip()}"
        )
    return json.loads(done.stdout), elapsed


def _store_counts(data: Path) -> tuple[int, int]:
    connection = sqlite3.connect(data / "store.sqlite3")
    try:
        messages = connection.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        patches = connection.execute(
            "SELECT COUNT(*) FROM messages WHERE kind = 'patch'"
        ).fetchone()[0]
    finally:
        connection.close()
    return int(messages), int(patches)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--workdir", type=Path, help="keep the archive (reused) and data here"
    )
    parser.add_argument(
        "--busy", action="store_true", help="a CPU hog on every core meanwhile"
    )
    parser.add_argument(
        "--bound", type=float, default=3600.0, help="fail past this many seconds"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="e2g-soak-"))
    workdir.mkdir(parents=True, exist_ok=True)
    archive = workdir / f"soak-{args.count}-{args.seed}.mbox"
    if not archive.exists():
        print(f"soak: generating {args.count:,} messages -> {archive}", file=sys.stderr)
        gen_archive.generate(archive, args.count, seed=args.seed)
    data = workdir / "data"
    if data.exists():
        subprocess.run(["rm", "-rf", str(data)], check=True)

    hogs = _start_hogs(args.bound) if args.busy else []
    try:
        print(
            f"soak: ingesting ({'busy' if hogs else 'idle'} machine)", file=sys.stderr
        )
        summary, elapsed = _ingest(data, archive, args.bound)
    finally:
        for hog in hogs:
            hog.terminate()
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    messages, patches = _store_counts(data)
    settings = config.resolve(data_dir=data, env={}, home=workdir)
    with Fulltext.open(settings.index_dir, create=False) as fulltext:
        documents = fulltext.count()
    search_started = time.monotonic()
    found = core.search(settings, "has:diff", limit=20, catch_up=False)
    search_ms = (time.monotonic() - search_started) * 1000

    result = {
        "messages_in_archive": args.count,
        "busy": bool(hogs),
        "elapsed_s": round(elapsed, 1),
        "msgs_per_s": round(args.count / elapsed, 1),
        "peak_rss_mb": round(peak_mb, 1),
        "store_messages": messages,
        "index_documents": documents,
        "index_lag": summary["index_lag"],
        "is_patch_hits": found.total,
        "is_patch_expected": patches,
        "search_ms": round(search_ms, 1),
    }
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(
                f"{key:>20}  {value:,}"
                if isinstance(value, int | float) and not isinstance(value, bool)
                else f"{key:>20}  {value}"
            )
    problems = []
    if messages != args.count:
        problems.append(f"the store holds {messages:,} of {args.count:,} messages")
    if documents != messages or summary["index_lag"] != 0:
        problems.append(
            f"the index holds {documents:,} documents for {messages:,} messages"
        )
    if found.total != patches:
        problems.append(f"has:diff found {found.total:,}, the store has {patches:,}")
    for problem in problems:
        print(f"soak: FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
