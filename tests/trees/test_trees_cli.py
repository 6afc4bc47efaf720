"""The CLI of trees: `e2g match --tree`, `e2g link` of a backport and a merge,
`e2g stats --by tree`, and an unknown tree (exit codes, streams, text)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.trees.world import World, build


def e2g(world: World, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "E2G_DEBUG"}
    env |= {"XDG_CONFIG_HOME": str(world.config.parent.parent), "E2G_PAGER": "cat"}
    return subprocess.run(
        [sys.executable, "-m", "e2g", "--data-dir", str(data), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=data.parent,
        timeout=120,
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Path]:
    root = tmp_path_factory.mktemp("trees-cli")
    world = build(root)
    data = root / "data"
    assert e2g(world, data, "ingest", "-q", str(world.archive)).returncode == 0
    return world, data


def test_match_link_and_stats(world: tuple[World, Path]) -> None:
    built, data = world
    matched = e2g(built, data, "match", "--tree", "mainline", "--tree", "stable")
    assert matched.returncode == 0, matched.stderr
    assert matched.stdout == ""
    lines = matched.stderr.splitlines()
    assert lines[0].endswith("[mainline/master]")
    assert (
        "4 backports answered from their upstream commits [stable/linux-1.0.y]"
        in lines[1]
    )
    text = e2g(built, data, "link", "-C", str(built.repo), built.shas["B-1.0"])
    assert text.returncode == 0, text.stderr
    assert (
        f"backport of {built.shas['B']} (mainline), found by commit-upstream"
        in text.stdout
    )
    assert "first released in v1.1; backported to linux-1.0.y in v1.0.1" in text.stdout
    assert "the backport's own mails:" in text.stdout
    merge = e2g(built, data, "link", "-C", str(built.repo), built.shas["merge"])
    assert "pull request:" in merge.stdout and "brought in 2 commits:" in merge.stdout
    stats = e2g(built, data, "stats", "-C", str(built.repo), "--by", "tree", "--json")
    assert stats.returncode == 0, stats.stderr
    keys = {row["key"] for row in json.loads(stats.stdout)["rows"]}
    assert keys == {"mainline/master", "stable/linux-1.0.y", "stable/linux-1.1.y"}


def test_an_unknown_tree_is_a_usage_error(world: tuple[World, Path]) -> None:
    built, data = world
    found = e2g(built, data, "match", "--tree", "nope")
    assert found.returncode == 2
    assert found.stderr.startswith(
        "e2g: error: no tree named 'nope' in the config file"
    )
    assert "mainline, stable, next" in found.stderr


def test_audit_names_the_trees_of_each_commit(world: tuple[World, Path]) -> None:
    # "A tree's name shows wherever a commit is shown": the audit's lines too.
    built, data = world
    assert (
        e2g(built, data, "match", "--tree", "mainline", "--tree", "stable").returncode
        == 0
    )
    rev = built.shas["B-1.0"]
    found = e2g(
        built, data, "audit", "-C", str(built.repo), "--json", "--no-match",
        f"{rev}^!", built.shas["B"] + "^!",
    )  # fmt: skip
    assert found.returncode in (0, 4), found.stderr
    trees = {
        line["commit"]: line["trees"]
        for line in map(json.loads, found.stdout.splitlines())
        if "commit" in line
    }
    assert trees == {rev: ["stable/linux-1.0.y"], built.shas["B"]: ["mainline/master"]}
    text = e2g(built, data, "audit", "-C", str(built.repo), "--no-match", f"{rev}^!")
    (line,) = [line for line in text.stdout.splitlines() if line.startswith(rev[:12])]
    assert "[stable/linux-1.0.y] · " in line
