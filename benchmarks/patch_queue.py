"""The patch queue (issue 35): deriving every patch's state, and reading the queue.

Generates a kernel-like archive (benchmarks/gen_archive.py), ingests it (which
derives the queue, as every ingest does), then times:
- a full derive of every patch's lifecycle and state (`refresh(full=True)`), the
  issue's target: under 5 s for a 35k-message list;
- a refresh with nothing new (what every `ingest`, `match` and `sync` pays at its
  end when it stored nothing);
- `e2g patches` end to end (a whole process, start-up included), with the default
  states, `--state all`, `--json`, `--from` and `--flat`: the target is 150 ms;
- the listing itself (e2g.api.queue.listing.patches) in process.
Medians of --rounds runs. No repository is matched: every patch's way back is asked,
and answered "unknown".

    python benchmarks/patch_queue.py [--messages 35000] [--rounds 5] [--data DIR]

`--data DIR` reuses a data dir a run left (`--keep`), so a large one is built once.
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
sys.path.insert(0, str(ROOT))

from benchmarks.runs import e2g_seconds as _e2g  # noqa: E402
from benchmarks.runs import finish, generated_list, list_options  # noqa: E402
from e2g import config  # noqa: E402
from e2g.api.basis import open_store  # noqa: E402
from e2g.api.queue import listing  # noqa: E402
from e2g.api.queue.refresh import refresh  # noqa: E402
from e2g.index.store import QueueFilter  # noqa: E402

DERIVE_TARGET = 5.0
LIST_TARGET = 0.150


def _median(times: list[float]) -> str:
    return (
        f"median {statistics.median(times) * 1000:,.0f} ms "
        f"(min {min(times) * 1000:,.0f}, max {max(times) * 1000:,.0f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    list_options(parser, rounds=5)
    args = parser.parse_args(argv)
    work, data = generated_list(args, "e2g-queue-")
    settings = config.resolve(data_dir=data, env={}, home=work)
    with open_store(settings) as store:
        counts = store.queue_state_counts()
        messages = store.max_seq()
    patches = sum(counts.values())
    print(f"{messages:,} messages, {patches:,} patch versions: {counts}")

    derive = []
    for _ in range(args.rounds):
        derive.append(refresh(settings, full=True).elapsed)
    verdict = "under" if statistics.median(derive) < DERIVE_TARGET else "OVER"
    print(f"derive every patch: {_median(derive)}; {verdict} {DERIVE_TARGET:.0f} s")
    idle = [refresh(settings).elapsed for _ in range(args.rounds)]
    print(f"refresh with nothing new: {_median(idle)}")

    for name, wanted in (
        ("default states", QueueFilter(states=listing.parse_states(None))),
        ("all states", QueueFilter()),
        ("--from", QueueFilter(author="jens")),
    ):
        times = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            listing.patches(settings, wanted=wanted)
            times.append(time.perf_counter() - started)
        print(f"listing.patches ({name}, 100 rows): {_median(times)}")

    for label, extra in (
        ("e2g patches", ()),
        ("e2g patches --state all", ("--state", "all")),
        ("e2g patches --json", ("--json",)),
        ("e2g patches --from jens", ("--from", "jens")),
        ("e2g patches --flat --state all", ("--flat", "--state", "all")),
    ):
        times = [_e2g(data, "patches", *extra) for _ in range(args.rounds)]
        verdict = "under" if statistics.median(times) < LIST_TARGET else "OVER"
        print(f"{label}: {_median(times)}; {verdict} 150 ms")
    for label, url, took in _pages(data, args.rounds):
        verdict = "under" if statistics.median(took) < LIST_TARGET else "OVER"
        print(f"GET {url} ({label}): {_median(took)}; {verdict} 150 ms")
    finish(work, data, args)
    return 0


PAGES = (
    ("the default filter, first page", "/patches"),
    ("every state, page 50", "/patches?state=all&page=50"),
    ("a person's", "/patches?state=all&from=jens"),
    ("the feed", "/patches.atom?state=all"),
)


def _pages(data: Path, rounds: int) -> list[tuple[str, str, list[float]]]:
    """Each of PAGES asked `rounds` times of an `e2g serve` in its own process, on
    loopback, after one warm-up request each: (label, URL, seconds per request)."""
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-m", "e2g", "--data-dir", str(data), "serve"]
        + ["--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"

    def get(url: str) -> float:
        started = time.perf_counter()
        with urllib.request.urlopen(base + url, timeout=60) as response:
            response.read()
        return time.perf_counter() - started

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                get("/static/style.css")
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("e2g serve did not answer") from None
                time.sleep(0.2)
        found = []
        for label, url in PAGES:
            get(url)
            found.append((label, url, [get(url) for _ in range(rounds)]))
        return found
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    raise SystemExit(main())
