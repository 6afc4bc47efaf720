"""The floor for reading commits: how fast git alone computes every commit's patch-id.

`git log -p --no-merges | git patch-id --stable` is the least work any matcher must
do per commit; Repo.commits() does that plus parsing files, lines, trailers and
subject keys in Python. This prints both rates and their ratio.

    python benchmarks/match_floor.py REPO [REV ...]

REPO may be a work tree or a bare git directory (a /work/.mirror/*/repo mirror).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from e2g.git.repo import Repo


def git_dir(repo: Path) -> Path:
    output = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--absolute-git-dir"],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    return Path(output.strip())


def floor_seconds(repo: Path, revs: Sequence[str] = ()) -> tuple[int, float]:
    """(commits, seconds) for `git log -p --no-merges REVS | git patch-id --stable`."""
    ids, seconds = floor_patch_ids(repo, revs)
    return len(ids), seconds


def floor_patch_ids(
    repo: Path, revs: Sequence[str] = ()
) -> tuple[dict[str, str], float]:
    """The floor's run: each commit's `git patch-id --stable` (commit -> id), and
    the seconds it took."""
    base = ["git", f"--git-dir={git_dir(repo)}"]
    started = time.perf_counter()
    log = subprocess.Popen(
        [*base, "log", "-p", "--no-merges", *(revs or ["HEAD"]), "--"],
        stdout=subprocess.PIPE,
    )
    ids = subprocess.run(
        [*base, "patch-id", "--stable"],
        stdin=log.stdout,
        capture_output=True,
        check=True,
    )
    assert log.stdout is not None
    log.stdout.close()
    log.wait()
    seconds = time.perf_counter() - started
    pairs = (line.split() for line in ids.stdout.decode("ascii").splitlines())
    return {commit: patch_id for patch_id, commit in pairs}, seconds


def commits_seconds(repo: Path, revs: Sequence[str] = ()) -> tuple[int, float, int]:
    """(commits, seconds, commits with a patch-id) for rev_list() + Repo.commits()."""
    started = time.perf_counter()
    opened = Repo.open(repo)
    with_id = 0
    count = 0
    for commit in opened.commits(opened.rev_list(revs)):
        count += 1
        with_id += commit.patch.patch_id is not None
    return count, time.perf_counter() - started, with_id


def main(arguments: Sequence[str]) -> int:
    if not arguments:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    repo, revs = Path(arguments[0]), list(arguments[1:])
    floor_count, floor_time = floor_seconds(repo, revs)
    count, seconds, with_id = commits_seconds(repo, revs)
    floor_rate = floor_count / floor_time
    rate = count / seconds
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"floor (git log -p | git patch-id --stable): {floor_count} commits in {floor_time:.2f} s = {floor_rate:,.0f} commits/s"
    )
    print(
        f"Repo.commits():                             {count} commits in {seconds:.2f} s = {rate:,.0f} commits/s ({with_id} with a patch-id)"
    )
    print(
        f"ratio Repo.commits() / floor: {rate / floor_rate:.2f}  (peak RSS {peak:.0f} MiB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
