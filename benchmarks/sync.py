"""`e2g sync` with nothing new: 10 inboxes of 5 epochs each, served on 127.0.0.1.

Builds the inboxes in a temporary directory (tests/ingest/inbox_server.py's Site:
public-inbox epochs, a manifest.js.gz each), serves them with git's smart HTTP (`git
http-backend` behind a threaded WSGI server), ingests every inbox once by URL, then
times whole `e2g sync` processes (start-up included) in which nothing is new, and
the same with the manifests withheld, where every epoch is asked with `git
ls-remote` instead (plus one probe per inbox for an epoch that does not exist yet).
Prints the median and the spread of each against the 2 s target of issue 24.

    python benchmarks/sync.py [--rounds 5] [--inboxes 10] [--epochs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the test helpers build and serve the inboxes

from benchmarks.runs import e2g_seconds as _e2g  # noqa: E402
from tests.ingest.inbox_server import Server, Site  # noqa: E402

TARGET_SECONDS = 2.0


def _build(root: Path, inboxes: int, epochs: int) -> tuple[Site, list[str]]:
    site = Site(root)
    names = [f"list{number}" for number in range(inboxes)]
    for name in names:
        for _ in range(epochs):
            site.add_epoch(name, 2)
    return site, names


def _rounds(data: Path, rounds: int) -> list[float]:
    _e2g(data, "sync")  # a first run warms the page cache and git's packs
    return [_e2g(data, "sync") for _ in range(rounds)]


def _line(label: str, times: list[float]) -> str:
    median = statistics.median(times)
    verdict = "ok" if median < TARGET_SECONDS else "OVER"
    return (
        f"{label:<34} median {median:6.3f} s  min {min(times):6.3f}  "
        f"max {max(times):6.3f}  (target < {TARGET_SECONDS:.0f} s: {verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--inboxes", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="e2g-sync-bench-") as scratch:
        started = time.perf_counter()
        site, names = _build(Path(scratch) / "site", options.inboxes, options.epochs)
        built = time.perf_counter() - started
        data = Path(scratch) / "data"
        with Server(site) as server:
            took = _e2g(data, "ingest", *(f"{server.url}/{name}/" for name in names))
            print(
                f"{options.inboxes} inboxes x {options.epochs} epochs: built in "
                f"{built:.1f} s, cloned and ingested in {took:.1f} s"
            )
            with_manifest = _rounds(data, options.rounds)
            server.manifest = False
            probed = _rounds(data, options.rounds)
        print(_line("sync, nothing new (manifest)", with_manifest))
        print(_line("sync, nothing new (ls-remote)", probed))


if __name__ == "__main__":
    main()
