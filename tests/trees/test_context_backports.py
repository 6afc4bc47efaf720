"""Backports whose context changed (issue 34): plain cherry-picks onto an older
stable branch, with no upstream note, whose `git patch-id --stable` differs from
their upstream's because the lines around them changed on the branch first.

master: base (frob.c, frob.h), then A (with a `Link:` trailer to its posting), B and
C, each posted. linux-1.0.y (from the base): a commit of its own changing the lines
around A's, B's and C's, then A picked with its `Link:` and a line of frob.h the
branch needed (found by the posting its trailer names), B picked with the same
frob.h line and no trailer (found by the mail search: same posting), C picked as it
is (same author, subject, files and changed lines: found without mail), and a decoy
titled as C by the same author, changing frob.c otherwise: no backport.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from e2g import config
from e2g.api import core
from e2g.api.link import link
from e2g.api.match import match_tree
from e2g.render import link_json
from tests.conftest import git
from tests.trees.world import LINES, World, _env, _post, _tick

HEADER = [f"#define FROB_{n} {n}" for n in range(10)]


def _commit(world: World, edits: dict[str, dict[int, str]], message: str) -> str:
    for name, changes in edits.items():
        path = world.repo / name
        lines = path.read_text().splitlines()
        for number, text in changes.items():
            lines[number] = text
        path.write_text("\n".join(lines) + "\n")
    when = _tick(world)
    git(world.repo, "add", *edits, env=_env(when))
    git(world.repo, "commit", "-q", "-m", message, env=_env(when))
    return git(world.repo, "rev-parse", "HEAD").strip()


def _pick(world: World, name: str, *, header: str | None = None) -> None:
    """Cherry-pick master's `name` (no -x), with a line of frob.h added to it."""
    when = _tick(world)
    git(world.repo, "cherry-pick", world.shas[name], env=_env(when))
    if header is not None:
        path = world.repo / "frob.h"
        path.write_text(path.read_text() + header + "\n")
        git(world.repo, "add", "frob.h")
        git(world.repo, "commit", "-q", "--amend", "--no-edit", env=_env(when))
    world.shas[f"{name}-1.0"] = git(world.repo, "rev-parse", "HEAD").strip()


def build(root: Path) -> World:
    repo = root / "linux"
    repo.mkdir()
    world = World(repo, root / "list.mbox", root / "xdg" / "e2g" / "config.toml")
    git(repo, "init", "-q", "-b", "master")
    (repo / "frob.c").write_text("\n".join(LINES) + "\n")
    (repo / "frob.h").write_text("\n".join(HEADER) + "\n")
    git(repo, "add", "frob.c", "frob.h")
    git(repo, "commit", "-q", "-m", "frob: base", env=_env(_tick(world)))
    git(repo, "tag", "v1.0")
    trailer = "\n\nLink: https://lore.kernel.org/r/A@example.org\n"
    for number, name in enumerate("ABC"):
        body = f"frob: {name}\n\nChange line {10 * number + 5} for {name}."
        world.shas[name] = _commit(
            world,
            {"frob.c": {10 * number + 5: f"int {name.lower()} = {number};"}},
            body + (trailer if name == "A" else "\n"),
        )
        _post(world, name)
    git(repo, "checkout", "-q", "-b", "linux-1.0.y", "v1.0")
    world.shas["S-1.0"] = _commit(
        world,
        {"frob.c": {n: f"int stable{n} = {n};" for n in (3, 13, 23)}},
        "frob: prepare the stable branch\n",
    )
    _pick(world, "A", header="#define FROB_A 1")
    _pick(world, "B", header="#define FROB_B 1")
    _pick(world, "C")
    world.shas["decoy-1.0"] = _commit(
        world,
        {"frob.c": {50: "int decoy = 50;", 51: "int other = 51;"}},
        "frob: C\n\nAnother change under the same title.\n",
    )
    git(repo, "checkout", "-q", "master")
    world.archive.write_bytes(b"".join(world.mails))
    world.config.parent.mkdir(parents=True)
    world.config.write_text(
        f'[trees.mainline]\nrepo = "{repo}"\nbranches = ["master"]\n\n'
        f'[trees.stable]\nrepo = "{repo}"\nbranches = ["v1.0..linux-1.0.y"]\n'
    )
    return world


def _patch_id(world: World, sha: str) -> str:
    shown = subprocess.run(
        ["git", "-C", str(world.repo), "show", sha], capture_output=True, check=True
    ).stdout
    found = subprocess.run(
        ["git", "patch-id", "--stable"], input=shown, capture_output=True, check=True
    )
    return found.stdout.decode().split()[0]


@pytest.fixture(scope="module")
def matched(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, config.Settings]:
    root = tmp_path_factory.mktemp("context")
    world = build(root)
    for name in "ABC":  # the premise: context changed, so patch-ids differ
        ids = {_patch_id(world, world.shas[sha]) for sha in (name, f"{name}-1.0")}
        assert len(ids) == 2
    settings = config.resolve(
        data_dir=root / "data",
        env={"XDG_CONFIG_HOME": str(world.config.parent.parent)},
        home=root,
    )
    core.ingest(settings, [world.archive])
    for name in ("mainline", "stable"):
        match_tree(settings, name, jobs=1)
    return world, settings


@pytest.mark.parametrize(
    ("name", "how"),
    [("A", "same-posting"), ("B", "same-posting"), ("C", "same-change")],
)
def test_a_pick_with_changed_context_is_a_backport(
    matched: tuple[World, config.Settings], name: str, how: str
) -> None:
    world, settings = matched
    result = link(settings, world.shas[f"{name}-1.0"], repo=world.repo)
    shown = link_json(result)
    assert shown["upstream"] is not None
    assert (shown["upstream"]["commit"], shown["upstream"]["how"]) == (
        world.shas[name],
        how,
    )
    assert [p.message_id for p in result.postings if p.applied] == [
        f"{name}@example.org"
    ]
    upstream = link(settings, world.shas[name], repo=world.repo)
    assert [(p.commit, p.tree, p.branch, p.how) for p in upstream.trees] == [
        (world.shas[name], "mainline", "master", "applied"),
        (world.shas[f"{name}-1.0"], "stable", "linux-1.0.y", how),
    ]


def test_the_same_title_with_another_change_is_no_backport(
    matched: tuple[World, config.Settings],
) -> None:
    world, settings = matched
    decoy = link(settings, world.shas["decoy-1.0"], repo=world.repo)
    assert decoy.upstream is None
    assert all(p.message_id != "C@example.org" for p in decoy.postings if p.applied)
    upstream = link(settings, world.shas["C"], repo=world.repo)
    assert world.shas["decoy-1.0"] not in {p.commit for p in upstream.trees}


def test_the_summary_counts_them_as_backports(
    tmp_path: Path,
) -> None:
    world = build(tmp_path)
    settings = config.resolve(
        data_dir=tmp_path / "data",
        env={"XDG_CONFIG_HOME": str(world.config.parent.parent)},
        home=tmp_path,
    )
    core.ingest(settings, [world.archive])
    match_tree(settings, "mainline", jobs=1)
    [stable] = match_tree(settings, "stable", jobs=1)
    assert (stable.commits, stable.backports) == (5, 3)
    assert stable.by_method["backport"] == 3
