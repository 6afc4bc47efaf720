"""Start-up cost of e2g: whole-process wall times, medians of many runs.

Builds the bundled sample in a temporary directory (clone sample-mbox/sample-repo.bundle,
add a `stable` branch that cherry-picks the demo commit, name the trees mainline and
stable in a config, ingest sample-mbox/frob-devel.mbox, match both trees) unless
--data-dir/--repo are given, byte-compiles e2g as installing it would, then times, as
child processes and one after the other in each round (so that load from other users
is shared alike):

- `python3 -c pass` (the reference: Python itself);
- `e2g --version` (the lightest command);
- `e2g link REV --json` (the demo commit, in two trees) and `e2g link BACKPORT --json`
  (its stable backport: the upstream's postings, the trees, the release), and `e2g
  search QUERY` (end to end);
- the import of `e2g.cli.app`, measured inside a child (`time.perf_counter()` around it).

Prints the median and the spread of each, next to the targets of issues 15 and 26.
`--baseline DIR` also times another checkout (PYTHONPATH=DIR) in the same rounds,
alternating, so that before and after are measured in the same minute.

`--installed` also times e2g as a user installs it (as pipx does): a new virtual
environment in the scratch directory, `pip install` of this checkout and its
dependencies from the package index, its own `python -c pass` and its console
script `e2g`. A development machine's floor holds what a user's does not: the
editable install's import hook and any other `.pth` file of the Python running this
(here ~20 ms of every start); the installed line shows what users wait.

    python benchmarks/startup.py [--rounds 30] [--baseline /path/to/old/checkout]
    python benchmarks/startup.py --data-dir DATA --repo REPO --rev SHA [--backport SHA] --query 'io_uring'
    python benchmarks/startup.py --installed [...]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample-mbox"
# Whole-process targets from issue 15, in seconds (None: no target, a reference).
TARGETS: dict[str, float | None] = {
    "python3 -c pass": None,
    "e2g --version": 0.060,
    "e2g link REV --json": 0.150,
    # Issue 26: `link` with trees still under 150 ms (a stable backport's answer).
    "e2g link BACKPORT --json": 0.150,
    "e2g search QUERY": 0.150,
    "import e2g.cli.app": None,
}
IMPORT_APP = (
    "import time; t = time.perf_counter(); import e2g.cli.app; "
    "print(time.perf_counter() - t)"
)


def build_sample(root: Path) -> tuple[Path, Path, str, str]:
    """(data dir, repo, demo commit, its backport) of the bundled sample, built under
    `root`, with named trees: `mainline` (main) and `stable` (a branch from before
    the demo commit that cherry-picks it with -x, tagged frob-1.0.1), both matched.
    Every command of the benchmark runs with this config (`XDG_CONFIG_HOME=root`)."""
    repo = root / "repo"
    data = root / "data"
    rev = json.loads((SAMPLE / "expected.json").read_text())["demo_commit"]
    subprocess.run(
        ["git", "clone", "-q", str(SAMPLE / "sample-repo.bundle"), str(repo)],
        check=True,
    )

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=Sam Stable",
             "-c", "user.email=sam@example.org", *args],
            check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip

    git("switch", "-q", "-c", "stable", f"{rev}~1")
    git("cherry-pick", "-x", rev)
    git("tag", "frob-1.0.1")
    backport = git("rev-parse", "HEAD")
    git("switch", "-q", "main")
    (root / "e2g").mkdir()
    (root / "e2g" / "config.toml").write_text(
        f'[trees.mainline]\nrepo = "{repo}"\nbranches = ["main"]\n\n'
        f'[trees.stable]\nrepo = "{repo}"\nbranches = ["stable"]\n'
    )
    e2g = [sys.executable, "-m", "e2g", "--data-dir", str(data), "-q"]
    env = {**_env(ROOT), "XDG_CONFIG_HOME": str(root)}
    for command in (
        ["ingest", str(SAMPLE / "frob-devel.mbox")],
        ["match", "--tree", "mainline", "--tree", "stable"],
    ):
        subprocess.run([*e2g, *command], check=True, env=env, stdout=subprocess.DEVNULL)
    answer = subprocess.run(
        [*e2g, "link", "-C", str(repo), backport, "--json"],
        check=True, env=env, capture_output=True,
    ).stdout  # fmt: skip
    if (json.loads(answer)["upstream"] or {}).get("commit") != rev:
        sys.exit(f"the sample's backport {backport} is not linked to {rev}: {answer!r}")
    return data, repo, str(rev), backport


def _env(checkout: Path | None) -> dict[str, str]:
    """The environment of a child: PYTHONPATH names the checkout it measures; none for
    an installed e2g, which must find only what its environment holds."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return env if checkout is None else {**env, "PYTHONPATH": str(checkout)}


def install(scratch: Path) -> Path:
    """A new virtual environment with this checkout installed as users install it;
    its bin directory."""
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(ROOT)],
        check=True,
        env=_env(None),
    )
    return venv / "bin"


def commands(  # noqa: PLR0913 - one keyword per measured input
    data: Path,
    repo: Path,
    *,
    rev: str,
    backport: str,
    query: str,
    installed: Path | None = None,
) -> dict[str, list[str]]:
    """What each measured line runs; `e2g` is the console script's entry point, or
    with `installed` (a bin directory) the console script itself."""
    python = sys.executable if installed is None else str(installed / "python")
    e2g = (
        [python, "-c", "from e2g.cli.app import main; main()"]
        if installed is None
        else [str(installed / "e2g")]
    )
    data_dir = ["--data-dir", str(data)]
    return {
        "python3 -c pass": [python, "-c", "pass"],
        "e2g --version": [*e2g, "--version"],
        "e2g link REV --json": [
            *e2g,
            *data_dir,
            "link",
            "-C",
            str(repo),
            rev,
            "--json",
        ],
        "e2g link BACKPORT --json": [
            *e2g,
            *data_dir,
            "link",
            "-C",
            str(repo),
            backport,
            "--json",
        ],
        "e2g search QUERY": [*e2g, *data_dir, "search", query],
        "import e2g.cli.app": [python, "-c", IMPORT_APP],
    }


def run_once(argv: list[str], checkout: Path | None, cwd: Path) -> float:
    """Seconds of wall time for one child (or the time it printed, for the import).

    Run in `cwd`: the checkout, as `python -c` puts the current directory first on
    sys.path; for an installed e2g, a directory that holds no e2g."""
    start = time.perf_counter()
    done = subprocess.run(
        argv, env=_env(checkout), cwd=cwd, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{argv} failed ({done.returncode}): {done.stderr.decode()}")
    if argv[-1] == IMPORT_APP:
        return float(done.stdout)
    return elapsed


Variant = tuple[dict[str, list[str]], Path | None, Path]  # lines, checkout, cwd


def measure(
    variants: dict[str, Variant], *, rounds: int
) -> dict[tuple[str, str], list[float]]:
    """Every line of every variant once a round, alternating; one warm-up round."""
    times: dict[tuple[str, str], list[float]] = {}
    labels = list(next(iter(variants.values()))[0])
    for number in range(rounds + 1):
        for label in labels:
            for name, (lines, checkout, cwd) in variants.items():
                took = run_once(lines[label], checkout, cwd)
                if number:
                    times.setdefault((label, name), []).append(took)
        print(f"round {number}/{rounds}", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    return times


def report(times: dict[tuple[str, str], list[float]], checkouts: list[str]) -> None:
    """One line per figure; "over python" is the median less `python3 -c pass`'s, the
    part e2g can change (Python's own start moves most with the machine's load)."""
    floor = {
        name: statistics.median(times["python3 -c pass", name]) for name in checkouts
    }
    print(
        f"{'':26} {'variant':>9} {'median':>9} {'p10..p90':>17} "
        f"{'over python':>12} {'target':>8}"
    )
    for (label, name), values in times.items():
        deciles = statistics.quantiles(values, n=10)
        median = statistics.median(values)
        target = TARGETS[label]
        verdict = "" if target is None else ("ok" if median < target else "MISSED")
        over = (
            ""
            if label.startswith(("python3", "import"))
            else f"{(median - floor[name]) * 1000:+.1f}ms"
        )
        print(
            f"{label:26} {name:>9} {median * 1000:7.1f}ms "
            f"{deciles[0] * 1000:7.1f}..{deciles[-1] * 1000:5.1f}ms {over:>12} "
            f"{'' if target is None else f'<{target * 1000:.0f}ms':>8} {verdict}"
        )
    if len(checkouts) > 1:
        print(f"(variants measured alternately in each round: {', '.join(checkouts)})")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--repo", type=Path)
    parser.add_argument("--rev", help="a commit of --repo (default: HEAD)")
    parser.add_argument("--backport", help="a backport in --repo (default: --rev)")
    parser.add_argument("--query", default="frob")
    parser.add_argument("--baseline", type=Path, help="another checkout to compare")
    parser.add_argument(
        "--installed",
        action="store_true",
        help="also time e2g installed in a new virtual environment (pip install .)",
    )
    args = parser.parse_args()
    checkouts = {"this": ROOT}
    if args.baseline:
        checkouts["baseline"] = args.baseline.resolve()
    for checkout in checkouts.values():
        # On a machine with PYTHONDONTWRITEBYTECODE set, every start would compile e2g.
        compileall.compile_dir(checkout / "e2g", quiet=2)
    with tempfile.TemporaryDirectory(prefix="e2g-startup-") as scratch:
        if args.data_dir and args.repo:
            data, repo, rev = args.data_dir, args.repo, args.rev or "HEAD"
            backport = args.backport or rev
        else:
            data, repo, rev, backport = build_sample(Path(scratch))
            os.environ["XDG_CONFIG_HOME"] = scratch  # its named trees, for every child
        lines = commands(data, repo, rev=rev, backport=backport, query=args.query)
        variants: dict[str, Variant] = {
            name: (lines, checkout, checkout) for name, checkout in checkouts.items()
        }
        if args.installed:
            bin_dir = install(Path(scratch))
            variants["installed"] = (
                commands(
                    data,
                    repo,
                    rev=rev,
                    backport=backport,
                    query=args.query,
                    installed=bin_dir,
                ),
                None,
                Path(scratch),
            )
        report(measure(variants, rounds=args.rounds), list(variants))


if __name__ == "__main__":
    main()
