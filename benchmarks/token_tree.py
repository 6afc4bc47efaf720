"""`e2g tokens warm` of a whole tree: wall time and peak memory, against blaming
its files one by one, against `git blame -w -M -C`, and the update after the
repository advanced.

1. The tree at REV0 warmed with `-j JOBS` in an empty data dir: wall time, the
   peak RSS of the whole process tree (e2g, its workers and their gits, summed, as
   sampled from /proc every 0.2 s), and the history walk's share.
2. A random sample of the tree's text files, each blamed cold on its own in a
   fresh data dir (`token_blame`, one process per file, as a reader opening a file
   that nobody warmed), interleaved with `git blame -w -M -C REV0 -- FILE` of the
   same file: both summed and scaled up to the tree's file count.
3. The warm at REV1 (REV0 advanced by about ADVANCE commits, first parents from
   REV1 back): wall time against the full warm's, and how many files were blamed
   again and how many carried; then, for the files it blamed again (a sample) and
   a sample of the carried ones, `blame --tokens --json`'s lines from the updated
   cache against a cold single-file run at REV1 in a fresh data dir: equal byte for
   byte or not.

On a machine whose cores other work shares, wall times are what they were then:
the script says so, and prints the load average before and after.

    python benchmarks/token_tree.py --repo /path/to/git.git [--jobs 2] [--sample 200]
        [--advance 100] [--pathspec builtin] [--check 30]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample-mbox" / "frob-devel.mbox"
sys.path.insert(0, str(ROOT))

TARGET_MINUTES = 20  # git.git's whole tree on 2 cores
TARGET_RSS_MB = 1024
TARGET_UPDATE_SHARE = 0.05


class TreeRss:
    """The peak summed memory (MB) of a process and its descendants, sampled: each
    process's PSS (its private pages, and its share of those it shares: forked
    workers share their parent's heap, which summed RSS would count once each)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeRss:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self.sample())

    def sample(self) -> float:
        children: dict[int, list[int]] = {}
        rss: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid = int(entry.name)
            children.setdefault(int(fields[1]), []).append(pid)
            rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        total, todo = 0, [self.pid]
        while todo:
            pid = todo.pop()
            total += _pss(pid, rss.get(pid, 0))
            todo.extend(children.get(pid, []))
        return total / (1 << 20)


def _pss(pid: int, rss: int) -> int:
    """A process's PSS in bytes (its RSS where smaps_rollup cannot be read)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return rss


def e2g_env(data: Path) -> dict[str, str]:
    return {
        **os.environ,
        "E2G_DATA_DIR": str(data),
        "E2G_PAGER": "cat",
        "PYTHONPATH": str(ROOT),
    }


def warm(repo: Path, data: Path, rev: str, jobs: int, pathspecs: list[str]) -> dict:
    command = [sys.executable, "-m", "e2g", "-q", "tokens", "warm", rev, *pathspecs]
    command += ["-j", str(jobs), "--json"]
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=repo, env=e2g_env(data), stdout=subprocess.PIPE, text=True
    )
    with TreeRss(process.pid) as rss:
        output, _ = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"e2g tokens warm failed ({process.returncode})")
    report = json.loads(output)
    report["wall"] = time.perf_counter() - started
    report["peak_mb"] = rss.peak
    return report


COLD = """
import sys
from pathlib import Path
from e2g import config
from e2g.api.tokens import token_origins
from e2g.git.repo import Repo
from e2g.tokens.lex import lexer_for
settings = config.resolve(data_dir=Path(sys.argv[1]))
repo = Repo.open(Path(sys.argv[2]))
path, rev = sys.argv[3], repo.resolve(sys.argv[4])
text = repo.file_text(rev, path)
token_origins(settings, repo, path, rev, lexer_for(path), text=text, contents=None)
"""

SPANS = """
import sys
from pathlib import Path
from e2g import config
from e2g.api.tokens import token_blame
from e2g.render import token_span_lines
settings = config.resolve(data_dir=Path(sys.argv[1]))
for path in sys.argv[4:]:
    found = token_blame(settings, path, sys.argv[3], repo=Path(sys.argv[2]), match=False)
    for line in token_span_lines(found.spans, found.reviews, lambda d: __import__("json").dumps(d, sort_keys=True)):
        print(path, line)
"""


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def cold_sample(
    repo: Path, rev: str, files: list[str], scratch: Path
) -> tuple[float, float, int]:
    """(e2g cold seconds, git blame seconds, files) over `files`, one by one."""
    e2g_total = git_total = 0.0
    for number, path in enumerate(files):
        data = scratch / f"cold-{number}"
        git_total += timed(
            ["git", "blame", "-w", "-M", "-C", rev, "--", path], repo, os.environ.copy()
        )
        e2g_total += timed(
            [sys.executable, "-c", COLD, str(data), str(repo), path, rev],
            repo,
            e2g_env(data),
        )
    return e2g_total, git_total, len(files)


def spans(repo: Path, data: Path, rev: str, files: list[str]) -> list[str]:
    output = subprocess.run(
        [sys.executable, "-c", SPANS, str(data), str(repo), rev, *files],
        cwd=repo,
        env=e2g_env(data),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return output.splitlines()


def git_lines(repo: Path, *args: str) -> list[str]:
    output = subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout
    return [line for line in output.splitlines() if line]


def main() -> int:  # noqa: PLR0915 - one run, in order
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--rev", default="HEAD", help="REV1 (REV0 is ADVANCE before)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--advance", type=int, default=100)
    parser.add_argument("--check", type=int, default=30, help="files compared")
    parser.add_argument("--pathspec", action="append", default=[])
    parser.add_argument(
        "--subset",
        type=int,
        default=0,
        help="warm N random files of the tree (scaled up to all), not all of them",
    )
    parser.add_argument("--seed", type=int, default=37)
    options = parser.parse_args()
    repo = options.repo.resolve()
    compileall.compile_dir(str(ROOT / "e2g"), quiet=1)
    rev1 = git_lines(repo, "rev-parse", options.rev)[0]
    rev0 = rev1
    for candidate in git_lines(repo, "rev-list", "--first-parent", rev1):
        rev0 = candidate
        if len(git_lines(repo, "rev-list", f"{candidate}..{rev1}")) >= options.advance:
            break
    advanced = len(git_lines(repo, "rev-list", f"{rev0}..{rev1}"))
    print(
        f"repository {repo}: REV0 {rev0[:12]}, REV1 {rev1[:12]} ({advanced} commits on)"
    )
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()} (shared)")
    rng = random.Random(options.seed)
    everything = git_lines(
        repo, "ls-tree", "-r", "--name-only", rev0, *options.pathspec
    )
    if options.subset:
        chosen = sorted(rng.sample(everything, min(options.subset, len(everything))))
        options.pathspec = [f":(literal){path}" for path in chosen]
    with tempfile.TemporaryDirectory(prefix="e2g-token-tree-") as scratch_name:
        scratch = Path(scratch_name)
        mail = scratch / "mail"  # the sample's store: spans read reviews from one
        subprocess.run(
            [sys.executable, "-m", "e2g", "-q", "ingest", str(SAMPLE)],
            env=e2g_env(mail),
            check=True,
        )
        data = scratch / "warm"
        for target in (data, scratch / "fresh"):
            target.mkdir()
            shutil.copy(mail / "store.sqlite3", target / "store.sqlite3")
        full = warm(repo, data, rev0, options.jobs, options.pathspec)
        print(
            f"warm of REV0 (-j {options.jobs}): {full['files']:,} files, "
            f"{full['warmed']:,} blamed, skipped {full['skipped']}, "
            f"{len(full['failed'])} failed; {full['wall']:.1f} s wall "
            f"(history walk {full['walk_seconds']:.1f} s), peak RSS "
            f"{full['peak_mb']:.0f} MB (targets: < {TARGET_MINUTES} min, "
            f"< {TARGET_RSS_MB} MB)"
        )
        manifest = json.loads(next((data / "token-trees").glob("*.json")).read_text())
        blamed = sorted(manifest["files"])
        if options.subset:
            whole = len(everything) / max(full["files"], 1)
            per_file = (full["wall"] - full["walk_seconds"]) / max(full["warmed"], 1)
            print(
                f"scaled to the {len(everything):,} files of the tree (x{whole:.1f}): "
                f"~{(full['warmed'] * whole * per_file + full['walk_seconds']) / 60:.1f}"
                f" min (one walk, {per_file:.2f} s a file at -j {options.jobs})"
            )
        sample = sorted(rng.sample(blamed, min(options.sample, len(blamed))))
        cold, line, counted = cold_sample(repo, rev0, sample, scratch)
        scale = len(blamed) / max(counted, 1)
        print(
            f"per file, cold, one by one ({counted} random files, scaled x{scale:.1f} "
            f"to {len(blamed):,}): e2g {cold * scale / 60:.1f} min, git blame -w -M -C "
            f"{line * scale / 60:.1f} min (ratio {cold / line:.2f}x); the warm took "
            f"{full['wall'] / (cold * scale):.1%} of e2g's one-by-one time and "
            f"{full['wall'] / (line * scale):.2f}x git blame's"
        )
        update = warm(repo, data, rev1, options.jobs, options.pathspec)
        print(
            f"warm of REV1: {update['warmed']:,} blamed again, {update['carried']:,} "
            f"carried, {update['cached']:,} cached; {update['wall']:.1f} s wall "
            f"(history walk {update['walk_seconds']:.1f} s) = "
            f"{update['wall'] / full['wall']:.1%} of the full warm (target < "
            f"{TARGET_UPDATE_SHARE:.0%}); peak RSS {update['peak_mb']:.0f} MB"
        )
        after = json.loads(next((data / "token-trees").glob("*.json")).read_text())
        before_tips = {p: entry[1] for p, entry in manifest["files"].items()}
        changed = sorted(
            p for p, entry in after["files"].items() if before_tips.get(p) != entry[1]
        )
        kept = sorted(set(after["files"]) - set(changed))
        check = sorted(rng.sample(changed, min(options.check, len(changed))))
        check += sorted(rng.sample(kept, min(10, len(kept))))
        fresh = spans(repo, scratch / "fresh", rev1, check)
        updated = spans(repo, data, rev1, check)
        differ = sorted({line.split(" ", 1)[0] for line in set(fresh) ^ set(updated)})
        print(
            f"proof: {len(check)} files ({min(options.check, len(changed))} of the "
            f"{len(changed)} blamed again, {len(check) - min(options.check, len(changed))} "
            f"carried): --tokens --json from the updated cache vs a cold run at REV1: "
            f"{len(check) - len(differ)} equal byte for byte, {len(differ)} differ "
            f"{differ[:5]}; {len(fresh) == len(updated)} line counts"
        )
        counts = [len(git_lines(repo, "rev-list", rev0, "--", p)) for p in sample[:20]]
        print(
            f"commits touching each of 20 sampled files: mean "
            f"{statistics.mean(counts):.1f}, median {statistics.median(counts):.0f}, "
            f"most {max(counts)}; commits up to REV0: "
            f"{len(git_lines(repo, 'rev-list', rev0)):,}"
        )
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
