"""first_tags (one walk of the tags' history) gives each commit the first tag, in the
tags' order, that contains it: the answer of one `git rev-list` per tag leaving out
the tags before it, on random histories with merges, tags out of topological
order, two tags on one commit, and tags of an earlier run."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from e2g.git.repo import Repo
from e2g.git.trees import Tag, first_tags


def _history(root: Path, seed: int) -> tuple[Repo, list[Tag]]:
    """A repository of 60 commits on 3 branches merged into each other at random,
    and 12 tags on random commits, in a random order."""
    chance = random.Random(seed)
    repo = root / f"repo-{seed}"
    stream: list[str] = []
    tips: dict[str, int] = {}
    for mark in range(1, 61):
        branch = chance.choice(["main", "next", "topic"])
        parents = [tips[branch]] if branch in tips else []
        others = [tip for name, tip in tips.items() if name != branch]
        if parents and others and chance.random() < 0.25:
            parents.append(chance.choice(others))
        when = 1_600_000_000 + mark * 60
        stream.append(
            f"commit refs/heads/{branch}\nmark :{mark}\n"
            f"committer C <c@example.org> {when} +0000\ndata 3\nc{mark}\n"
            + "".join(
                f"{'from' if n == 0 else 'merge'} :{p}\n" for n, p in enumerate(parents)
            )
            + f"M 644 inline f{mark}\ndata 2\n{mark % 10}\n\n"
        )
        tips[branch] = mark
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet"],
        input="".join(stream).encode(),
        check=True,
    )
    marks = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--all"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    targets = [chance.choice(marks) for _ in range(11)]
    targets.append(targets[0])  # two tags of one commit
    return Repo.open(repo), [Tag(f"t{n}", sha) for n, sha in enumerate(targets)]


def _one_walk_per_tag(
    repo: Repo, ordered: list[Tag], before: list[Tag]
) -> dict[str, str]:
    seen = [f"^{tag.target}" for tag in before]
    found: dict[str, str] = {}
    for tag in ordered:
        listed = subprocess.run(
            ["git", "-C", str(repo.root), "rev-list", tag.target, *seen],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        for sha in listed:
            found.setdefault(sha, tag.name)
        seen.append(f"^{tag.target}")
    return found


@pytest.mark.parametrize("seed", range(6))
def test_one_walk_answers_as_a_walk_per_tag(tmp_path: Path, seed: int) -> None:
    repo, tags = _history(tmp_path, seed)
    for cut in (0, 4):  # no earlier run; an earlier run that did the first 4 tags
        before, ordered = tags[:cut], tags[cut:]
        pairs = list(first_tags(repo, ordered, before=before))
        assert len(pairs) == len(dict(pairs))  # each commit once
        expected = _one_walk_per_tag(repo, ordered, before)
        assert dict(pairs) == expected
        assert expected or cut  # with no earlier run the tags bring commits in


def test_no_new_tags_walk_nothing(tmp_path: Path) -> None:
    repo, tags = _history(tmp_path, 7)
    assert list(first_tags(repo, [], before=tags)) == []
