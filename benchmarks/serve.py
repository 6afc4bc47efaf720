"""Latency of `e2g serve` under concurrent clients on loopback.

Builds the bundled sample (ingest sample-mbox/frob-devel.mbox, clone the sample repo)
in a temporary directory unless --data-dir/--repo are given, runs uvicorn on 127.0.0.1
with a free port, and drives `/api/v1/commits/{rev}` and `/commit/{rev}` with N
concurrent httpx async clients for a bounded number of requests and seconds. Prints
p50/p99 per URL, once with the link cache on (the default server) and once with it off
(every request runs git and the matcher).

    python benchmarks/serve.py [--clients 20] [--requests 400] [--seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from e2g import api, config

SAMPLE = Path(__file__).resolve().parents[1] / "sample-mbox"


def build_sample(root: Path) -> tuple[config.Settings, Path, str]:
    repo = root / "repo"
    subprocess.run(
        ["git", "clone", "-q", str(SAMPLE / "sample-repo.bundle"), str(repo)],
        check=True,
    )
    settings = config.resolve(data_dir=root / "data", env={}, home=root / "home")
    api.ingest(settings, [str(SAMPLE / "frob-devel.mbox")], workers=1)
    rev = json.loads((SAMPLE / "expected.json").read_text())["demo_commit"]
    return settings, repo, str(rev)


SERVER = """
import sys, uvicorn
from pathlib import Path
from e2g import config
from e2g.web.app import create_app
data_dir, repo, port, entries = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
app = create_app(config.resolve(data_dir=Path(data_dir)), repo=Path(repo), cache_entries=entries)
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
"""


def start(
    settings: config.Settings, repo: Path, *, cache: bool
) -> tuple[subprocess.Popen[bytes], str]:
    """The server in its own process, as `e2g serve` runs: the clients here do not share its GIL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    entries = "512" if cache else "0"
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SERVER,
            str(settings.data_dir),
            str(repo),
            str(port),
            entries,
        ]
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx.get(base + "/static/style.css", timeout=1)
            return server, base
        except httpx.TransportError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit("the server did not start")


async def drive(
    url: str, *, clients: int, requests: int, seconds: float
) -> tuple[list[float], int]:
    latencies: list[float] = []
    failures = 0
    deadline = time.monotonic() + seconds
    remaining = requests

    async def one_client(client: httpx.AsyncClient) -> None:
        nonlocal remaining, failures
        while remaining > 0 and time.monotonic() < deadline:
            remaining -= 1
            started = time.perf_counter()
            response = await client.get(url)
            latencies.append((time.perf_counter() - started) * 1000)
            failures += response.status_code != 200

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        await client.get(url)  # warm-up: imports, first git process, first cache fill
        await asyncio.gather(*(one_client(client) for _ in range(clients)))
    return latencies, failures


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def report(label: str, latencies: list[float], failures: int, elapsed: float) -> None:
    print(
        f"{label:<44} n={len(latencies):>5}  p50={statistics.median(latencies):7.1f} ms  "
        f"p99={percentile(latencies, 0.99):7.1f} ms  max={max(latencies):7.1f} ms  "
        f"{len(latencies) / elapsed:6.0f} req/s  non-200={failures}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=400, help="per URL and mode")
    parser.add_argument(
        "--seconds", type=float, default=30.0, help="time bound per URL and mode"
    )
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--repo", type=Path)
    parser.add_argument("--rev")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="e2g-bench-") as scratch:
        if options.data_dir and options.repo and options.rev:
            settings = config.resolve(data_dir=options.data_dir)
            repo, rev = options.repo, options.rev
        else:
            settings, repo, rev = build_sample(Path(scratch))
        print(
            f"{options.clients} concurrent clients, at most {options.requests} requests / {options.seconds:.0f} s per row"
        )
        for cache in (True, False):
            server, base = start(settings, repo, cache=cache)
            for path in (f"/api/v1/commits/{rev}", f"/commit/{rev}"):
                started = time.monotonic()
                latencies, failures = asyncio.run(
                    drive(
                        base + path,
                        clients=options.clients,
                        requests=options.requests,
                        seconds=options.seconds,
                    )
                )
                label = f"{path.split(rev)[0]}{{rev}} cache={'on' if cache else 'off'}"
                report(label, latencies, failures, time.monotonic() - started)
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
