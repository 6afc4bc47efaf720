"""The commits' changed paths a warm writes for its workers (e2g.git.ancestry):
read back as written, not used when damaged, and whole after a writer is killed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from e2g.git.ancestry import Ancestry
from e2g.git.lineblame import along
from e2g.git.repo import Repo
from e2g.git.treelog import tree_log
from tests import fault_hook
from tests.conftest import git
from tests.test_token_warm import build_tangled


def _facts(ancestry: Ancestry, paths: list[str]) -> object:
    count = len(ancestry.first)
    return (
        ancestry.head,
        [ancestry.sha(n) for n in range(count)],
        [ancestry.parents(n) for n in range(count)],
        [sorted(ancestry.changed([path])) for path in paths],
        [along(ancestry, {path}) for path in paths],
    )


def test_read_back_as_written_and_as_git_tells_it(tmp_path: Path) -> None:
    repo = build_tangled(tmp_path / "repo")
    opened = Repo.open(repo.root)
    head = opened.resolve("HEAD")
    ancestry = Ancestry.of(tree_log(opened, head))
    paths = ["a.c", "lib-b.c", "b.c", "d.c", "x", "x/inner.c", "nothing.c"]
    place = tmp_path / "tree.ancestry"
    ancestry.write(place)
    again = Ancestry.read(place)
    assert again is not None
    assert _facts(again, paths) == _facts(ancestry, paths)
    # The facts are git's: parents in order, and the commits that changed a.c
    # against their first parent (a root: that has it).
    listed = git(repo.root, "rev-list", "--topo-order", "--parents", head).split("\n")
    for n, line in enumerate(row for row in listed if row):
        sha, *parents = line.split()
        assert ancestry.sha(n) == sha
        assert [ancestry.sha(p) for p in ancestry.parents(n)] == parents
    changed = set()
    for line in listed:
        sha, *parents = line.split() or [""]
        against = parents[:1] or ["--root"]
        if (
            sha
            and "a.c"
            in git(
                repo.root,
                "diff-tree",
                "--no-renames",
                "-r",
                "--name-only",
                *against,
                sha,
            ).split()
        ):
            changed.add(sha)
    assert len(changed) > 5
    assert {ancestry.sha(n) for n in ancestry.changed(["a.c"])} == set(changed)


def _written(root: Path, rev: str) -> tuple[Repo, Path]:
    """The tangled history, and its ancestry at `rev` written beside it."""
    opened = Repo.open(build_tangled(root / "repo").root)
    place = root / "tree.ancestry"
    Ancestry.of(tree_log(opened, opened.resolve(rev))).write(place)
    return opened, place


def test_a_damaged_file_is_not_used(tmp_path: Path) -> None:
    _, place = _written(tmp_path, "HEAD")
    whole = place.read_bytes()
    for damage in (whole[: len(whole) // 2], b"", b"not ours at all", whole[:-3]):
        place.write_bytes(damage)
        assert Ancestry.read(place) is None
    assert Ancestry.read(tmp_path / "absent") is None


def test_a_writer_killed_midway_leaves_the_file_before(tmp_path: Path) -> None:
    opened, place = _written(tmp_path, "HEAD~3")
    before = place.read_bytes()
    script = (
        "import sys; from pathlib import Path; from e2g.git.repo import Repo; "
        "from e2g.git.treelog import tree_log; from e2g.git.ancestry import Ancestry; "
        "repo = Repo.open(Path(sys.argv[1])); "
        "Ancestry.of(tree_log(repo, repo.resolve('HEAD'))).write(Path(sys.argv[2]))"
    )
    killed = subprocess.run(
        [sys.executable, "-c", script, str(opened.root), str(place)],
        env={**os.environ, **fault_hook.environment("kill@ancestry.write")},
        capture_output=True,
        check=False,
    )
    assert killed.returncode == -9, killed.stderr
    assert place.read_bytes() == before
    assert list(tmp_path.glob(".tree.ancestry.*.tmp"))
    Ancestry.of(tree_log(opened, opened.resolve("HEAD"))).write(place)
    found = Ancestry.read(place)
    assert found is not None and found.head == opened.resolve("HEAD")
    assert not list(tmp_path.glob(".tree.ancestry.*.tmp"))  # the leftover is gone


def test_moves_are_followed_both_ways_and_a_folder_moved_at_once_is_not(
    tmp_path: Path,
) -> None:
    """x.c moved to y.c on the main line, then y.c to z.c on a topic merged
    later (against its first parent the merge deletes y.c and adds z.c beside the
    topic's other work): each name leads to the others. A file changed in a move's
    commit is no name of the moved one, and a commit that moved more files than
    MOVE_FANOUT pairs none of them."""
    from e2g.git.ancestry import MOVE_FANOUT
    from tests.test_token_warm import Builder, body

    repo = Builder(tmp_path / "repo")
    many = {f"t/t{n:02}.sh": body(f"t{n}", 3) for n in range(MOVE_FANOUT + 1)}
    repo.commit("base", {"x.c": body("x", 8), "other.c": body("o", 4), **many})
    repo.commit("work", {"x.c": body("x", 9)})
    repo.commit("x.c to y.c", {"x.c": None, "y.c": body("x", 9), "other.c": "o\n"})
    git(repo.root, "checkout", "-q", "-b", "topic")
    repo.commit("y.c to z.c", {"y.c": None, "z.c": body("x", 9)})
    repo.commit("topic work", {"new.c": body("n", 3)})
    git(repo.root, "checkout", "-q", "main")
    repo.commit("main work", {"other.c": body("o", 5)})
    git(
        repo.root,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "merge topic",
        "topic",
        env=repo.env(),
    )
    renumbered = {f"t/t{n:02}.sh": None for n in range(MOVE_FANOUT + 1)}
    renumbered |= {f"t/t{n + 50}.sh": body(f"t{n}", 3) for n in range(MOVE_FANOUT + 1)}
    repo.commit("renumber the tests", renumbered)
    opened = Repo.open(repo.root)
    ancestry = Ancestry.of(tree_log(opened, opened.resolve("HEAD")))
    names = {"x.c", "y.c", "z.c"}
    for name in names:
        assert ancestry.moved({name}) == names, name
    assert ancestry.moved({"other.c"}) == {"other.c"}
    assert ancestry.moved({"t/t03.sh"}) == {"t/t03.sh"}
    assert ancestry.moved({"t/t53.sh"}) == {"t/t53.sh"}
    assert ancestry.moved({"new.c", "absent.c"}) == {"new.c", "absent.c"}
    place = tmp_path / "tree.ancestry"
    ancestry.write(place)
    again = Ancestry.read(place)
    assert again is not None and again.moved({"z.c"}) == names
