"""Line blame along a file's own history (e2g.git.lineblame) gives `git blame -w -M
-C`'s answer byte for byte: grafted where the history allows it, the full walk
where lines came from another file's history."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2g import config
from e2g.api import tokens as tokens_api
from e2g.api.token_cache import LINES_FROM, read_lines_from, write_lines_from
from e2g.git import lineblame
from e2g.git.ancestry import Ancestry
from e2g.git.blame import Blame
from e2g.git.filehistory import file_history
from e2g.git.lineblame import along, line_blame
from e2g.git.repo import Repo
from e2g.git.treelog import tree_log
from tests.conftest import file_tokens, git
from tests.test_token_warm import Builder, body, build_tangled


class Spy:
    """Repo.blame's calls: whether each walked grafts."""

    def __init__(self, repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
        self.grafted: list[bool] = []
        real = Repo.blame

        def blame(self_: Repo, rev: str | None, path: str, **options: object) -> Blame:
            self.grafted.append(options.get("ancestry") is not None)
            return real(self_, rev, path, **options)  # type: ignore[arg-type]

        monkeypatch.setattr(Repo, "blame", blame)


def test_every_file_of_a_tangled_history_blames_as_the_full_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Merges (one taking a file from its second parent, `-s ours`, an octopus,
    criss-cross), a rename, a copy, a file deleted and added back: at HEAD and
    before, every file's grafted blame equals git's own, lines, commits and paths;
    and most files never needed the full walk."""
    repo = build_tangled(tmp_path / "repo")
    opened = Repo.open(repo.root)
    spy = Spy(opened, monkeypatch)
    answered = 0
    for rev in ("HEAD", "HEAD~3", "HEAD^2", "HEAD~6"):
        head = opened.resolve(rev)
        names = git(repo.root, "ls-tree", "-r", "--name-only", head).split()
        for path in names:
            history = file_history(opened, head, path)
            spy.grafted.clear()
            found = line_blame(opened, head, path, history)
            answered += spy.grafted == [True]
            assert found == _full(opened, head, path), (rev, path)
    assert answered >= 20


def _full(repo: Repo, head: str, path: str) -> Blame:
    """git's own walk, without grafts (the spy records it, harmlessly)."""
    return Repo.blame(repo, head, path)


def _moved_helper(root: Path) -> tuple[Builder, str, list[str], str]:
    """b.c's helper, edited in b.c, five commits of other files, then the helper
    moved into a.c: (repo, the editor, the other commits, the mover)."""
    repo = Builder(root)
    moved = "static int helper_value(int value)\n{\n\treturn value * 7 + 3;\n}\n"
    repo.commit("base", {"a.c": body("a", 20), "b.c": body("b", 20) + moved})
    repo.commit("a only", {"a.c": body("a", 21)})
    edited = moved.replace("* 7 + 3", "* 7 + 4")
    editor = repo.commit("edit helper in b", {"b.c": body("b", 20) + edited})
    others = [
        repo.commit(f"unrelated {n}", {f"other{n}.c": body(f"o{n}", 3)})
        for n in range(5)
    ]
    mover = repo.commit(
        "move helper to a", {"a.c": body("a", 21) + edited, "b.c": body("b", 20)}
    )
    return repo, editor, others, mover


def test_lines_copied_from_another_file_take_the_full_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A function moved from b.c into a.c, whose lines in b.c an older commit
    edited: -C follows them into b.c's history, which the grafts skip (the commits
    between that changed only b.c): the answer names b.c's own commit, as git's
    full walk does, because the grafted answer is thrown away."""
    repo, editor, _, mover = _moved_helper(tmp_path / "repo")
    opened = Repo.open(repo.root)
    spy = Spy(opened, monkeypatch)
    head = opened.resolve("HEAD")
    found = line_blame(opened, head, "a.c", file_history(opened, head, "a.c"))
    assert spy.grafted == [True, False]  # grafted, thrown away, walked
    assert found == _full(opened, head, "a.c")
    by_text = {line.text: line.sha for line in found.lines}
    assert by_text["\treturn value * 7 + 4;"] == editor
    assert mover not in {by_text["{"], by_text["}"]}
    assert (editor, "b.c") in found.paths


def test_a_file_of_one_revision_walks_two_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file written once, under many later commits that never touched it: the
    blamed commit is grafted onto the file's one revision; the answer is git's."""
    repo = Builder(tmp_path / "repo")
    first = repo.commit("once", {"once.c": body("once", 5)})
    for n in range(30):
        repo.commit(f"later {n}", {"busy.c": body("busy", n + 1)})
    opened = Repo.open(repo.root)
    spy = Spy(opened, monkeypatch)
    head = opened.resolve("HEAD")
    found = line_blame(opened, head, "once.c", file_history(opened, head, "once.c"))
    assert spy.grafted == [True]
    assert {line.sha for line in found.lines} == {first}
    assert found == _full(opened, head, "once.c")


def _ancestry(repo: Repo, head: str) -> Ancestry:
    return Ancestry.of(tree_log(repo, head))


def test_along_the_paths_of_a_tangled_history_every_file_blames_as_the_full_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the tree's changed paths (a warm's walk read them): every file of the
    tangled history, at HEAD and before, gets git's own answer, and nearly all
    from grafted blames alone."""
    repo = build_tangled(tmp_path / "repo")
    opened = Repo.open(repo.root)
    spy = Spy(opened, monkeypatch)
    asked: list[set[str]] = []
    real = lineblame.along

    def spied(ancestry: Ancestry, paths: set[str]) -> list[list[str]]:
        asked.append(set(paths))
        return real(ancestry, paths)

    monkeypatch.setattr(lineblame, "along", spied)
    monkeypatch.setattr(lineblame, "WALK_PER_COMMIT", 60.0)  # try as on a big one
    answered = files = 0
    for rev in ("HEAD", "HEAD~3", "HEAD^2", "HEAD~6"):
        head = opened.resolve(rev)
        ancestry = _ancestry(opened, head)
        names = git(repo.root, "ls-tree", "-r", "--name-only", head).split()
        for path in names:
            history = file_history(opened, head, path)
            spy.grafted.clear()
            found = line_blame(opened, head, path, history, ancestry)
            files += 1
            answered += False not in spy.grafted
            assert found == _full(opened, head, path), (rev, path)
    assert answered >= files - 2
    assert len(asked) >= files  # every answer from the paths' grafts
    assert {"b.c", "lib-b.c"} in asked  # a renamed file's history has both names


def test_lines_copied_from_another_file_follow_that_file_along_its_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The function moved from b.c into a.c again, now with the tree's changed
    paths: the first grafted blame names b.c; where the walk of every commit is
    cheaper than a try (this small history) the full walk answers at once, else the
    second try follows a.c and b.c through the commits that changed either (the
    commits that changed neither skipped); with one try allowed, the full walk
    answers. The answer is the full walk's every time."""
    repo, editor, others, _ = _moved_helper(tmp_path / "repo")
    repo.commit("later", {"other0.c": body("o0", 4)})
    opened = Repo.open(repo.root)
    head = opened.resolve("HEAD")
    ancestry = _ancestry(opened, head)
    grafts = along(ancestry, {"a.c", "b.c"})
    assert not {sha for line in grafts for sha in line[1:]} & set(others)
    spy = Spy(opened, monkeypatch)
    history = file_history(opened, head, "a.c")
    # A walk of these few commits costs less than a try: tries stop at once.
    found = line_blame(opened, head, "a.c", history, ancestry)
    assert spy.grafted == [True, False]
    assert found == _full(opened, head, "a.c")
    # Had the walk cost more, the second try follows b.c.
    monkeypatch.setattr(lineblame, "WALK_PER_COMMIT", 60.0)
    spy.grafted.clear()
    found = line_blame(opened, head, "a.c", history, ancestry)
    assert spy.grafted == [True, True]
    assert found == _full(opened, head, "a.c")
    by_text = {line.text: line.sha for line in found.lines}
    assert by_text["\treturn value * 7 + 4;"] == editor
    assert (editor, "b.c") in found.paths
    spy.grafted.clear()
    monkeypatch.setattr(lineblame, "UNION_TRIES", 1)
    assert line_blame(opened, head, "a.c", history, ancestry) == found
    assert spy.grafted == [True, False]


def test_an_ancestry_of_another_head_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = build_tangled(tmp_path / "repo")
    opened = Repo.open(repo.root)
    older = _ancestry(opened, opened.resolve("HEAD~3"))
    head = opened.resolve("HEAD")

    def unused(ancestry: Ancestry, paths: set[str]) -> list[list[str]]:
        raise AssertionError(paths)

    monkeypatch.setattr(lineblame, "along", unused)
    found = line_blame(opened, head, "a.c", file_history(opened, head, "a.c"), older)
    assert found == _full(opened, head, "a.c")


def test_the_paths_an_earlier_blame_named_are_followed_from_the_first_try(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`seen` (what the file's last line blame named, kept in its cache): the first
    try follows b.c too and settles; a long history (GRAFTED_REVISIONS or more),
    walked in full without them, is tried once along them; a stale record (a path
    the lines no longer come from) still gets the full walk's answer."""
    repo, editor, _, _ = _moved_helper(tmp_path / "repo")
    opened = Repo.open(repo.root)
    head = opened.resolve("HEAD")
    ancestry = _ancestry(opened, head)
    history = file_history(opened, head, "a.c")
    full = _full(opened, head, "a.c")
    spy = Spy(opened, monkeypatch)
    monkeypatch.setattr(lineblame, "WALK_PER_COMMIT", 60.0)
    assert line_blame(opened, head, "a.c", history, ancestry, {"b.c"}) == full
    assert spy.grafted == [True]
    monkeypatch.setattr(lineblame, "GRAFTED_REVISIONS", 1)
    for seen, calls in (
        ((), [False]),
        ({"b.c"}, [True]),
        ({"other0.c"}, [True, False]),
    ):
        spy.grafted.clear()
        assert line_blame(opened, head, "a.c", history, ancestry, seen) == full, seen
        assert spy.grafted == calls, seen
    assert (editor, "b.c") in full.paths


def test_a_token_blame_keeps_the_paths_its_lines_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record a later warm seeds line blame with: written by a token blame,
    read back; a damaged or oversized one is none."""
    repo, _, _, _ = _moved_helper(tmp_path / "repo")
    opened = Repo.open(repo.root)
    head = opened.resolve("HEAD")
    settings = config.Settings(data_dir=tmp_path / "data")
    ancestry = _ancestry(opened, head)
    directory = tmp_path / "data" / "tokens" / "a"
    seen: list[object] = []
    real = tokens_api.line_blame

    def spied(*arguments: object) -> Blame:
        seen.append(arguments[-1])
        return real(*arguments)  # type: ignore[arg-type]

    monkeypatch.setattr(tokens_api, "line_blame", spied)
    for _ in range(2):
        file_tokens(
            settings,
            opened,
            head,
            "a.c",
            directory=directory,
            walked=file_history(opened, head, "a.c"),
            ancestry=ancestry,
            prune=False,
        )
        for answer in (directory / "results").glob("*.json"):
            answer.unlink()  # blamed again, not read from the cache
    assert seen == [frozenset(), frozenset({"a.c", "b.c"})]
    assert read_lines_from(directory) == {"a.c", "b.c"}
    (directory / LINES_FROM).write_bytes(b'{"paths": ["a.c", 3]}')
    assert read_lines_from(directory) == frozenset()
    (directory / LINES_FROM).write_bytes(b"not json")
    assert read_lines_from(directory) == frozenset()
    write_lines_from(directory, [f"{n:09}.c" for n in range(200_000)])
    assert (directory / LINES_FROM).read_bytes() == b"not json"  # not written


def test_the_first_try_follows_the_names_between_those_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """b.c's helper moved into a.c after b.c was renamed to c.c and back to b.c's
    old contents in d.c: an earlier blame named b.c, the name the helper was last
    edited under; the paths followed from the first try hold c.c and d.c too (git
    passes the lines through them), and the answer is the full walk's."""
    repo = Builder(tmp_path / "repo")
    helper = "static int helper_value(int value)\n{\n\treturn value * 7 + 3;\n}\n"
    repo.commit("base", {"a.c": body("a", 20), "b.c": body("b", 20) + helper})
    repo.commit("b.c to c.c", {"b.c": None, "c.c": body("b", 20) + helper})
    repo.commit("c.c to d.c", {"c.c": None, "d.c": body("b", 21) + helper})
    repo.commit(
        "move helper to a", {"a.c": body("a", 20) + helper, "d.c": body("b", 21)}
    )
    opened = Repo.open(repo.root)
    head = opened.resolve("HEAD")
    ancestry = _ancestry(opened, head)
    asked: list[set[str]] = []

    def spied(ancestry_: Ancestry, paths: set[str]) -> list[list[str]]:
        asked.append(set(paths))
        return along(ancestry_, paths)

    monkeypatch.setattr(lineblame, "along", spied)
    monkeypatch.setattr(lineblame, "WALK_PER_COMMIT", 60.0)
    history = file_history(opened, head, "a.c")
    found = line_blame(opened, head, "a.c", history, ancestry, {"b.c"})
    assert asked[0] >= {"a.c", "b.c", "c.c", "d.c"}
    assert found == _full(opened, head, "a.c")
