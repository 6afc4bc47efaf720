"""Token blame against line blame: speed, memory, and how often they disagree.

For each FILE of a repository (default: git.git's apply.c and diff.c), one after
the other in each round, so that load from other users is shared alike:

- `git blame -w -M -C HEAD -- FILE` (the reference: what line blame costs);
- `e2g blame --tokens FILE HEAD --json`, cold: a data dir whose token cache is
  empty (the file's whole history is lexed, imported and blamed, and the commits no
  `e2g match` answered are matched);
- the same again, cached: the answer read back.

It prints medians of the rounds and the peak RSS of the e2g process tree (git
included: RUSAGE_CHILDREN), against issue 23's targets: cold at most 2x git blame,
cached under 0.5 s, peak RSS under 500 MB.

`--compare` also prints, per file, what tokens change over lines (cregit's
comparison): the share of lines whose tokens come from more than one commit, and
the share of tokens whose commit is not the one line blame gives their line. Both
read the same throwaway history the command uses (no mail needed).

The data dir holds the bundled sample's mail (a tiny store: blame needs one), so
reviews are looked up as a user's would be, just rarely found. `--graph` writes the
repository's commit-graph into it first, as `e2g tokens warm` or `e2g sync` leave
it (e2g.git.lens): cold then means the file's token history is not there, its
history is read through the graph. `--random N` blames N random C files of HEAD
(`--seed`) and prints their total too.

    python benchmarks/token_blame.py --repo /path/to/git.git [--rounds 3] [--compare]
    python benchmarks/token_blame.py --repo REPO --file t/test-lib.sh --file git-p4.py --compare
    python benchmarks/token_blame.py --repo REPO --random 20 --rounds 1 [--graph]
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample-mbox" / "frob-devel.mbox"
sys.path.insert(0, str(ROOT))

TARGET_COLD_RATIO = 2.0
TARGET_CACHED = 0.5
TARGET_RSS_MB = 500


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds of a child process and the peak RSS (MB) of its tree so far."""
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    return elapsed, peak


def run_file(repo: Path, path: str, data: Path, rounds: int) -> dict[str, float]:
    env = {**os.environ, "E2G_DATA_DIR": str(data), "E2G_PAGER": "cat"}
    e2g = [sys.executable, "-m", "e2g", "blame", "--tokens", path, "HEAD", "--json"]
    git = ["git", "blame", "-w", "-M", "-C", "HEAD", "--", path]
    line, cold, cached, peaks = [], [], [], []
    for _ in range(rounds):
        line.append(timed(git, repo, env)[0])
        shutil.rmtree(data / "tokens", ignore_errors=True)
        seconds, peak = timed(e2g, repo, env)
        cold.append(seconds)
        peaks.append(peak)
        cached.append(timed(e2g, repo, env)[0])
    return {
        "git blame -w -M -C": statistics.median(line),
        "cold": statistics.median(cold),
        "cached": statistics.median(cached),
        "peak_mb": max(peaks),
    }


def write_graph(repo_path: Path, data: Path) -> None:
    """The commit-graph `e2g tokens warm` writes into the data dir (not timed)."""
    from e2g.api.token_cache import LENSES
    from e2g.git.lens import lens_directory, write_lens
    from e2g.git.repo import Repo

    repo = Repo.open(repo_path)
    started = time.perf_counter()
    assert write_lens(lens_directory(data / LENSES, repo), repo, [repo.resolve("HEAD")])
    print(f"commit-graph written in {time.perf_counter() - started:.1f} s (not timed)")


def compare(repo_path: Path, path: str, data: Path) -> tuple[float, float, int, int]:
    """(share of lines with tokens of several commits, share of tokens whose commit
    differs from line blame's, lines, tokens)."""
    from e2g import config
    from e2g.api.tokens import token_origins
    from e2g.git.repo import Repo
    from e2g.tokens.lex import lexer_for

    settings = config.resolve(data_dir=data, env={}, home=data)
    repo = Repo.open(repo_path)
    head = repo.resolve("HEAD")
    text = repo.file_text(head, path)
    tokens, blamed = token_origins(
        settings, repo, path, head, lexer_for(path), text=text, contents=None
    )
    by_line = {line.number: line.sha for line in repo.blame(head, path).lines}
    commits_of_line: dict[int, set[str]] = {}
    differ = 0
    for token, origin in zip(tokens, blamed.origins, strict=True):
        commits_of_line.setdefault(token.line, set()).add(origin.sha)
        differ += origin.sha != by_line.get(token.line)
    mixed = sum(len(shas) > 1 for shas in commits_of_line.values())
    return (
        mixed / len(commits_of_line),
        differ / len(tokens),
        len(commits_of_line),
        len(tokens),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repo", type=Path, required=True, help="a clone of git.git, or any repository"
    )
    parser.add_argument(
        "--file", action="append", help="a file of the repository (repeatable)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--compare", action="store_true", help="also token vs line blame shares"
    )
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--random", type=int, default=0, help="N random C files")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument(
        "--graph", action="store_true", help="with the commit-graph a warm writes"
    )
    options = parser.parse_args()
    files = list(options.file or ([] if options.random else ["apply.c", "diff.c"]))
    if options.random:
        tree = subprocess.run(
            ["git", "ls-tree", "-r", "--name-only", "HEAD"],
            cwd=options.repo,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        c_files = sorted(path for path in tree if path.endswith(".c"))
        files += random.Random(options.seed).sample(c_files, options.random)
    compileall.compile_dir(str(ROOT / "e2g"), quiet=1)  # as installing e2g would
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "data"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "e2g",
                "--data-dir",
                str(data),
                "-q",
                "ingest",
                str(SAMPLE),
            ],
            check=True,
        )
        if options.graph:
            write_graph(options.repo, data)
        if not options.skip_timing:
            print(
                f"{'file':<24} {'git blame':>10} {'cold':>8} {'ratio':>6} {'cached':>8} {'peak MB':>8}"
            )
            totals = [0.0, 0.0]
            for path in files:
                found = run_file(options.repo, path, data, options.rounds)
                ratio = found["cold"] / found["git blame -w -M -C"]
                totals[0] += found["git blame -w -M -C"]
                totals[1] += found["cold"]
                print(
                    f"{path[-24:]:<24} {found['git blame -w -M -C']:>9.2f}s {found['cold']:>7.2f}s "
                    f"{ratio:>5.2f}x {found['cached']:>7.2f}s {found['peak_mb']:>8.0f}"
                )
            print(
                f"{f'total of {len(files)}':<24} {totals[0]:>9.2f}s {totals[1]:>7.2f}s "
                f"{totals[1] / totals[0]:>5.2f}x"
                + (" (with the commit-graph)" if options.graph else "")
            )
            print(
                f"targets: cold <= {TARGET_COLD_RATIO}x git blame, cached < {TARGET_CACHED} s, "
                f"peak < {TARGET_RSS_MB} MB"
            )
        if options.compare:
            print(
                f"\n{'file':<24} {'lines':>7} {'tokens':>8} {'mixed lines':>12} {'tokens differ':>14}"
            )
            for path in files:
                mixed, differ, lines, tokens = compare(
                    options.repo, path, Path(scratch) / "cache"
                )
                print(
                    f"{path:<24} {lines:>7} {tokens:>8} {mixed:>11.1%} {differ:>13.1%}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
