"""A repository with no named trees: the merge that brought a commit into the
checked-out branch and the first tag that contains it (e2g.git.trees, asked of git;
e2g.api.landing, cached), on repositories built in a temp dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from e2g import config
from e2g.api import core
from e2g.api.link import link
from e2g.errors import UnknownCommit
from e2g.git.repo import Repo
from e2g.git.trees import first_tag, merged_into, walk_notes
from e2g.render import link_json
from tests.conftest import git
from tests.trees.world import build

STAMP = 1_600_000_000


def _commit(repo: Path, name: str, hour: int) -> str:
    when = f"{STAMP + 3600 * hour} +0000"
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    env |= {"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.org"}
    env |= {"GIT_COMMITTER_NAME": "M", "GIT_COMMITTER_EMAIL": "m@example.org"}
    (repo / f"{name}.c").write_text(f"int {name};\n")
    git(repo, "add", f"{name}.c")
    git(repo, "commit", "-q", "-m", name, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


def _merge(repo: Path, branch: str, hour: int) -> str:
    when = f"{STAMP + 3600 * hour} +0000"
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    env |= {"GIT_AUTHOR_NAME": "M", "GIT_AUTHOR_EMAIL": "m@example.org"}
    env |= {"GIT_COMMITTER_NAME": "M", "GIT_COMMITTER_EMAIL": "m@example.org"}
    git(repo, "merge", "-q", "--no-ff", "-m", f"Merge {branch}", branch, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


def test_the_merge_that_brought_each_commit_in(tmp_path: Path) -> None:
    """A topic merged twice (its first commit came with the first merge, though a
    walk from the second reaches it in fewer steps), a topic merged into another
    before that one was merged, and commits of the line itself."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    shas = {"root": _commit(repo, "root", 0)}
    git(repo, "checkout", "-q", "-b", "topic")
    shas["t1"] = _commit(repo, "t1", 1)
    git(repo, "checkout", "-q", "master")
    shas["m1"] = _merge(repo, "topic", 2)
    git(repo, "tag", "v1")
    git(repo, "checkout", "-q", "topic")
    shas["t2"] = _commit(repo, "t2", 3)
    git(repo, "checkout", "-q", "-b", "sub", "master")
    shas["s1"] = _commit(repo, "s1", 4)
    git(repo, "checkout", "-q", "-b", "outer", "master")
    shas["o1"] = _commit(repo, "o1", 5)
    shas["o-merge"] = _merge(repo, "sub", 6)
    git(repo, "checkout", "-q", "master")
    shas["direct"] = _commit(repo, "direct", 7)
    shas["m2"] = _merge(repo, "topic", 8)
    shas["m3"] = _merge(repo, "outer", 9)
    git(repo, "tag", "-a", "-m", "v2", "v2")
    git(repo, "checkout", "-q", "-b", "elsewhere", shas["root"])
    shas["elsewhere"] = _commit(repo, "elsewhere", 10)
    git(repo, "checkout", "-q", "master")
    tip = shas["m3"]
    repository = Repo.open(repo)

    found = merged_into(repository, list(shas.values()), tip=tip)

    assert found == {
        shas["root"]: None,
        shas["t1"]: shas["m1"],
        shas["m1"]: None,
        shas["t2"]: shas["m2"],
        shas["s1"]: shas["m3"],
        shas["o1"]: shas["m3"],
        shas["o-merge"]: shas["m3"],
        shas["direct"]: None,
        shas["m2"]: None,
        shas["m3"]: None,
    }  # "elsewhere" is on no branch master reaches
    for sha in shas.values():  # one at a time: the walk stops at its parents
        alone = merged_into(repository, [sha], tip=tip)
        assert alone == ({sha: found[sha]} if sha in found else {})
    assert first_tag(repository, shas["t1"]) == "v1"
    assert first_tag(repository, shas["root"]) == "v1"
    assert first_tag(repository, shas["t2"]) == "v2"
    assert first_tag(repository, shas["s1"]) == "v2"
    assert first_tag(repository, shas["elsewhere"]) is None


def test_link_in_an_unnamed_repository_says_merge_and_release(tmp_path: Path) -> None:
    """No [trees.*] config: `e2g link` still names the merge and the first tag, and
    keeps them: a tag deleted afterwards does not change a release once found, and
    a commit no tag contained gets its release when a tag is added at the tip."""
    world = build(tmp_path)
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    core.ingest(settings, [world.archive])

    topic = link(settings, world.shas["T1"], repo=world.repo)
    on_line = link(settings, world.shas["C"], repo=world.repo)

    (place,) = topic.trees
    assert (place.merge, place.release) == (world.shas["merge"], "frob-for-1.3")
    (place,) = on_line.trees
    assert (place.merge, place.release) == (None, "v1.1")
    assert link_json(on_line)["trees"] == [
        {
            "repo": str(world.repo.resolve()),
            "tree": None,
            "branch": None,
            "commit": world.shas["C"],
            "how": "applied",
            "release": "v1.1",
            "merge": None,
        }
    ]
    cached = list((settings.data_dir / "landing").rglob("*.json"))
    assert len(cached) == 2

    git(world.repo, "tag", "-d", "v1.1")
    (place,) = link(settings, world.shas["C"], repo=world.repo).trees
    assert place.release == "v1.1"  # cached: a release does not change

    after = _commit(world.repo, "after", 100_000)
    (place,) = link(settings, after, repo=world.repo).trees
    assert (place.merge, place.release) == (None, None)
    git(world.repo, "tag", "v1.3")  # at the tip: the tip does not move
    (place,) = link(settings, after, repo=world.repo).trees
    assert place.release == "v1.3"


def test_one_walk_lists_what_rev_list_lists(tmp_path: Path) -> None:
    """walk_notes (a branch's first match: one `git log`) gives the commits, their
    order and their merges as Repo.dated_rev_list does, for a branch less another
    and for a range; an unknown branch is the same error."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    _commit(repo, "root", 0)
    git(repo, "checkout", "-q", "-b", "topic")
    _commit(repo, "t1", 3)
    git(repo, "checkout", "-q", "master")
    _commit(repo, "m1", 1)
    _merge(repo, "topic", 4)
    _commit(repo, "m2", 2)  # committed before its parent: rev-list's order holds
    repository = Repo.open(repo)
    for revs in (["master", "^topic"], ["master"], ["topic..master"]):
        heads = [head for head, _ in walk_notes(repository, revs)]
        dated = [
            (head.sha, int(head.commit_date.timestamp()))
            for head in heads
            if len(head.parents) < 2
        ]
        merges = sum(len(head.parents) > 1 for head in heads)
        assert (dated, merges) == repository.dated_rev_list(revs)
    with pytest.raises(UnknownCommit, match="nosuch"):
        list(walk_notes(repository, ["nosuch"]))
