"""What the benchmarks share: `e2g` run as a user runs it, timed."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
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


def list_options(parser: argparse.ArgumentParser, *, rounds: int) -> None:
    """The options of a benchmark over a generated list: its size, the rounds, and
    a data dir to keep or reuse."""
    parser.add_argument("--messages", type=int, default=35_000)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--data", type=Path, help="a data dir a run kept")
    parser.add_argument("--keep", action="store_true", help="keep the data dir")


def generated_list(args: argparse.Namespace, prefix: str) -> tuple[Path, Path]:
    """(work dir, data dir): `args.data`, or a new one holding a generated list of
    `args.messages` messages ingested (the queue derived at its end), timed."""
    from benchmarks.gen_archive import generate
    from e2g import config
    from e2g.api.core import ingest

    work = Path(tempfile.mkdtemp(prefix=prefix))
    if args.data is not None:
        return work, Path(args.data)
    data = work / "data"
    archive = work / "list.mbox"
    generate(archive, args.messages, seed=1)
    started = time.perf_counter()
    ingest(config.resolve(data_dir=data, env={}, home=work), [str(archive)])
    print(
        f"ingest of {args.messages:,} messages (queue derived at its end): "
        f"{time.perf_counter() - started:.1f} s"
    )
    archive.unlink()
    return work, data


def finish(work: Path, data: Path, args: argparse.Namespace) -> None:
    """Say where a kept data dir is, else remove the run's work dir."""
    if args.keep or args.data:
        print(f"data dir: {data}")
        if args.data:
            shutil.rmtree(work)  # with --data, an empty work dir
    else:
        shutil.rmtree(work)
