"""The commit-graph e2g keeps beside a repository (e2g.git.lens): git's log reads it
(its Bloom filters rule out commits), histories through it are the repository's
own, it grows with the history, and a killed writer's leftovers do not stop the
next one."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from e2g.api import tokens as token_api
from e2g.api.token_cache import LENSES, cache_root
from e2g.config import Settings
from e2g.git.filehistory import file_history
from e2g.git.lens import OBJECTS, lens_directory, open_lens, write_lens
from e2g.git.lineblame import line_blame
from e2g.git.repo import Repo
from tests.conftest import file_tokens, git
from tests.test_token_warm import _shape, body, build_tangled


def bloom_ruled_out(repo: Repo, path: str, tmp_path: Path) -> int:
    """How many commits git's log of `path` ruled out by a Bloom filter."""
    trace = tmp_path / "trace.json"
    trace.unlink(missing_ok=True)
    env = {**(repo._env or os.environ), "GIT_TRACE2_EVENT": str(trace)}  # noqa: SLF001
    subprocess.run(
        ["git", "-C", str(repo.root), "log", "--format=%H", "HEAD", "--", path],
        env=env,
        check=True,
        capture_output=True,
    )
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event.get("category") == "bloom" and event.get("key") == "statistics":
            return int(event["value"]["definitely_not"])
    return 0


def test_histories_through_the_graph_are_the_repository_own(tmp_path: Path) -> None:
    repo = build_tangled(tmp_path / "repo")
    opened = Repo.open(repo.root)
    head = opened.resolve("HEAD")
    lens = tmp_path / "lens"
    assert open_lens(lens, opened) is opened  # none written yet
    assert bloom_ruled_out(opened, "a.c", tmp_path) == 0
    assert write_lens(lens, opened, [head])
    through = open_lens(lens, opened)
    assert through is not opened
    assert bloom_ruled_out(through, "a.c", tmp_path) > 0
    assert not list((repo.root / ".git" / "objects" / "info").glob("commit-graph*"))
    for path in git(repo.root, "ls-tree", "-r", "--name-only", head).split():
        assert _shape(file_history(through, head, path)) == _shape(
            file_history(opened, head, path)
        ), path
    # The history grows: a layer for the new commits; answers still the same.
    repo.commit("later", {"a.c": body("a", 50, "later")})
    head = opened.resolve("HEAD")
    assert write_lens(lens, opened, [head])
    chain = lens / OBJECTS / "info" / "commit-graphs" / "commit-graph-chain"
    assert chain.is_file()
    through = open_lens(lens, opened)
    assert _shape(file_history(through, head, "a.c")) == _shape(
        file_history(opened, head, "a.c")
    )


def test_a_killed_writer_leaves_nothing_that_stops_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer killed midway leaves its scratch directory, or git's lock on the
    graph's chain: the next write makes the graph again, whole."""
    repo = build_tangled(tmp_path / "repo")
    opened = Repo.open(repo.root)
    lens = tmp_path / "lens"
    assert write_lens(lens, opened, [opened.resolve("HEAD~2")])
    (lens / ".lens.x1").mkdir()
    (lens / ".lens.x1" / "half").write_text("half a graph")
    graphs = lens / OBJECTS / "info" / "commit-graphs"
    graphs.mkdir(exist_ok=True)
    (graphs / "commit-graph-chain.lock").write_text("")
    assert write_lens(lens, opened, [opened.resolve("HEAD")])
    assert not list(lens.glob(".lens.*"))
    through = open_lens(lens, opened)
    assert bloom_ruled_out(through, "a.c", tmp_path) > 0
    head = opened.resolve("HEAD")
    assert _shape(file_history(through, head, "d.c")) == _shape(
        file_history(opened, head, "d.c")
    )


def test_line_blames_read_through_the_graph_and_answer_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Token blame's line blame reads the commits from the graph where a warm or a
    sync wrote one (its walk of every commit cannot use the Bloom filters, but
    parses no commit object), and answers what the repository alone answers."""

    repo = build_tangled(tmp_path / "repo")
    opened = Repo.open(repo.root)
    head = opened.resolve("HEAD")
    settings = Settings(data_dir=tmp_path / "data")
    assert token_api.history_reader(settings, opened) is opened  # no graph yet
    directory = lens_directory(cache_root(settings).parent / LENSES, opened)
    assert write_lens(directory, opened, [head])
    through = token_api.history_reader(settings, opened)
    assert through is not opened
    for path in git(repo.root, "ls-tree", "-r", "--name-only", head).split():
        history = file_history(opened, head, path)
        assert line_blame(through, head, path, history) == line_blame(
            opened, head, path, history
        ), path
    seen: list[dict[str, str] | None] = []

    def spy(reader: Repo, *arguments: object) -> object:
        seen.append(reader._env)  # noqa: SLF001
        return line_blame(reader, *arguments)  # type: ignore[arg-type]

    monkeypatch.setattr(token_api, "line_blame", spy)
    file_tokens(settings, opened, head, "a.c")
    assert seen and seen[0] is not None
    assert (
        str(directory.absolute() / OBJECTS)
        in seen[0]["GIT_ALTERNATE_OBJECT_DIRECTORIES"]
    )
