"""Backports against new commits: `e2g match --tree` of a stable branch whose N
commits are backports of matched mainline commits (each with `commit X upstream.`),
against the same for a branch of N new commits whose patches are in the archive.

New commits' patches were edited after posting (their patch-ids differ), as most
applied patches are, so the matcher compares subjects and diffs for them. Builds, in
a work dir: a repository (git fast-import) with `master` (N commits,
each adding one file), `linux-1.0.y` (their N backports, from the root), and
`linux-2.0.y` (N other new commits, from the root); one mbox of every master and
linux-2.0.y patch (git format-patch); a config naming the trees mainline (master),
stable (linux-1.0.y) and fresh (linux-2.0.y). It ingests the mbox, matches mainline,
then times stable and fresh (one worker each, so the figures compare on any core
count), each from a copy of that store, `--rounds` times, alternating which goes
first: this machine's speed moves by a third from one minute to the next, so one
run of each can move the ratio as much. Prints one JSON object on stdout: each
tree's median seconds and every run's, and the speedup (fresh's median over
stable's) with the lowest and highest of the rounds' own ratios.

    python benchmarks/backports.py                  # N = 2000, 5 rounds
    python benchmarks/backports.py --count 500 --rounds 3 --workdir /tmp/bp
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from e2g import config
from e2g.api import core
from e2g.api.match import match_tree


def _git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), *args], input=data, check=True, capture_output=True
    ).stdout


def _commit(  # noqa: PLR0913 - one fast-import record
    branch: str,
    mark: int,
    parent: str,
    *,
    when: int,
    message: str,
    path: str,
    text: str,
) -> str:
    data = message.encode()
    blob = text.encode()
    return (
        f"commit refs/heads/{branch}\nmark :{mark}\n"
        f"author Alice Example <alice@example.org> {when} +0000\n"
        f"committer Mia Maint <mia@example.org> {when} +0000\n"
        f"data {len(data)}\n{message}\nfrom {parent}\n"
        f"M 644 inline {path}\ndata {len(blob)}\n{text}\n"
    )


def _file(number: int, kind: str) -> tuple[str, str]:
    lines = "".join(f"int {kind}{number}_{n} = {n * number};\n" for n in range(6))
    return f"dir{number % 50}/{kind}{number}.c", lines


def build(work: Path, count: int) -> tuple[Path, Path, Path]:
    repo = work / "repo"
    _git(work, "init", "-q", "-b", "master", str(repo))
    start = 1_600_000_000
    root = "commit refs/heads/master\nmark :1\nauthor A <a@x> 1600000000 +0000\n"
    root += "committer A <a@x> 1600000000 +0000\ndata 4\nroot\nM 644 inline README\ndata 3\nhi\n\n"
    stream = [root]
    for i in range(count):
        path, text = _file(i, "m")
        stream.append(
            _commit(
                "master",
                2 + i,
                ":1" if i == 0 else f":{1 + i}",
                when=start + 3600 * (i + 1),
                message=f"dir{i % 50}: add m{i}\n\nAdd m{i}.\n",
                path=path,
                text=text,
            )
        )
    _git(repo, "fast-import", "--quiet", data="".join(stream).encode())
    shas = _git(repo, "rev-list", "--reverse", "master").decode().split()[1:]
    stream = []
    for i, upstream in enumerate(shas):
        path, text = _file(i, "m")
        stream.append(
            _commit(
                "linux-1.0.y",
                10 * count + i,
                shas[0] + "^" if i == 0 else f":{10 * count + i - 1}",
                when=start + 3600 * (count + i + 1),
                message=f"dir{i % 50}: add m{i}\n\ncommit {upstream} upstream.\n\nAdd m{i}.\n",
                path=path,
                text=text,
            )
        )
        path, text = _file(i, "s")
        stream.append(
            _commit(
                "linux-2.0.y",
                20 * count + i,
                shas[0] + "^" if i == 0 else f":{20 * count + i - 1}",
                when=start + 3600 * (count + i + 1),
                message=f"dir{i % 50}: add s{i}\n\nAdd s{i}.\n",
                path=path,
                text=text,
            )
        )
    _git(repo, "fast-import", "--quiet", data="".join(stream).encode())
    mbox = work / "list.mbox"
    with mbox.open("wb") as out:
        for branch in ("master", "linux-2.0.y"):
            patches = _git(
                repo,
                "format-patch",
                "--stdout",
                "--add-header=List-Id: <bench.example.org>",
                f"{shas[0]}^..{branch}",
            )
            if branch != "master":
                # As most patches are applied: edited after posting (another
                # patch-id), so the matcher compares subjects and diffs.
                patches = patches.replace(b"_0 = 0;\n", b"_0 = -1;\n")
            out.write(patches)
    xdg = work / "xdg"
    (xdg / "e2g").mkdir(parents=True, exist_ok=True)
    (xdg / "e2g" / "config.toml").write_text(
        "".join(
            f'[trees.{name}]\nrepo = "{repo}"\nbranches = ["{branch}"]\n\n'
            for name, branch in (
                ("mainline", "master"),
                ("stable", "linux-1.0.y"),
                ("fresh", "linux-2.0.y"),
            )
        )
    )
    return repo, mbox, xdg


def _timed(settings: config.Settings, name: str) -> tuple[float, dict[str, int]]:
    """Seconds `e2g match --tree NAME` took, and what it counted."""
    started = time.monotonic()
    (summary,) = match_tree(settings, name, jobs=1)
    elapsed = time.monotonic() - started
    counts = {
        "matched": summary.matched,
        "backports": summary.backports,
        "no_match": summary.no_match,
    }
    return elapsed, counts


def run(work: Path, count: int, rounds: int = 5) -> dict[str, object]:
    _, mbox, xdg = build(work, count)
    settings = config.resolve(
        data_dir=work / "data", env={"XDG_CONFIG_HOME": str(xdg)}, home=work
    )
    core.ingest(settings, [mbox])
    elapsed, counts = _timed(settings, "mainline")
    timed: dict[str, object] = {
        "commits": count,
        "mainline": {"seconds": round(elapsed, 3), **counts},
    }
    base = work / "data.matched"  # the store with mainline matched, kept to copy
    shutil.rmtree(base, ignore_errors=True)
    shutil.copytree(settings.data_dir, base)
    seconds: dict[str, list[float]] = {"stable": [], "fresh": []}
    for number in range(rounds):
        order = ("stable", "fresh") if number % 2 == 0 else ("fresh", "stable")
        for name in order:
            shutil.rmtree(settings.data_dir)
            shutil.copytree(base, settings.data_dir)
            elapsed, counts = _timed(settings, name)
            seconds[name].append(elapsed)
            if timed.setdefault(name, counts) != counts:
                sys.exit(f"{name}: round {number} counted {counts}, not {timed[name]}")
    for name, runs in seconds.items():
        # To the millisecond: stable's runs take a tenth of a second, and rounded
        # to 0.01 s they moved the ratio by up to 7%.
        timed[name] = {
            "seconds": round(statistics.median(runs), 3),
            "runs": [round(each, 3) for each in runs],
            **timed[name],  # type: ignore[dict-item]
        }
    stable, fresh = seconds["stable"], seconds["fresh"]
    ratios = [new / old for old, new in zip(stable, fresh, strict=True)]
    timed["speedup"] = round(statistics.median(fresh) / statistics.median(stable), 1)
    timed["speedup_range"] = [round(min(ratios), 1), round(max(ratios), 1)]
    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workdir", type=Path)
    arguments = parser.parse_args()
    if arguments.workdir:
        arguments.workdir.mkdir(parents=True, exist_ok=True)
        found = run(arguments.workdir, arguments.count, arguments.rounds)
    else:
        with tempfile.TemporaryDirectory() as work:
            found = run(Path(work), arguments.count, arguments.rounds)
    json.dump(found, sys.stdout)
    print()


if __name__ == "__main__":
    main()
