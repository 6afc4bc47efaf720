"""Token blame of a short function moved within its file (issue 34, case 4).

A history built here: commit 1 writes a file with two functions, f (three lines)
and g (several), commit 2 changes something else, commit 3 moves f below g
unchanged. git's -M pairs a moved block only when it holds 20 letters and digits;
f holds fewer, so git blame, by lines or on the one-token-a-line view, gives the
move all of f. The tokens of f are commit 1's: `e2g blame --tokens --json` must
say so, in Python and in C alike.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from e2g import config
from e2g.api import core
from e2g.tokens.lex import lexer_for
from tests.conftest import git, mail

PYTHON = (
    "m.py",
    "import os\n\n\n",
    "def f(x):\n    y = x + 1\n    return y\n",
    "def g(a, b):\n    total = a + b\n    for item in range(b):\n"
    "        total += item\n    if total > 10:\n        return total\n    return 0\n",
    ("import os", "import sys"),
)
C = (
    "m.c",
    "#include <stdio.h>\n\n",
    "int f(int x)\n{\n\treturn x;\n}\n",
    "int g(int a, int b)\n{\n\tint total = a + b;\n\tfor (int i = 0; i < b; i++)\n"
    "\t\ttotal += i;\n\tif (total > 10)\n\t\treturn total;\n\treturn 0;\n}\n",
    ("stdio.h", "stdlib.h"),
)


def _commit(root: Path, name: str, day: int) -> str:
    stamp = f"2020-01-{day:02d}T12:00:00+00:00"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/nonexistent",
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": f"{name}@example.org",
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": f"{name}@example.org",
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
    }
    git(root, "commit", "-q", "-a", "-m", f"{name}: change", env=env)
    return git(root, "rev-parse", "HEAD").strip()


def _moved(
    tmp_path: Path, case: tuple[str, str, str, str, tuple[str, str]]
) -> tuple[Path, tuple[str, str, str]]:
    """The three commits: f and g written, something else changed, f moved below g."""
    path, head, f, g, (old, new) = case
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    file = root / path
    file.write_text(f"{head}{f}\n\n{g}")
    git(root, "add", path)
    first = _commit(root, "one", 1)
    file.write_text(file.read_text().replace(old, new))
    second = _commit(root, "two", 2)
    file.write_text(f"{head.replace(old, new)}{g}\n\n{f}")
    return root, (first, second, _commit(root, "three", 3))


@pytest.mark.parametrize("case", [PYTHON, C], ids=["python", "c"])
def test_a_short_function_moved_below_the_next_keeps_its_tokens(
    tmp_path: Path, case: tuple[str, str, str, str, tuple[str, str]]
) -> None:
    path, _, f, _, _ = case
    root, (first, second, third) = _moved(tmp_path, case)
    file = root / path
    archive = tmp_path / "list.mbox"
    archive.write_bytes(mail(1, date=datetime(2020, 1, 2, 13, tzinfo=UTC)))
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    core.ingest(settings, [archive])
    done = subprocess.run(
        [sys.executable, "-m", "e2g", "--data-dir", str(settings.data_dir)]
        + ["blame", path, "HEAD", "--tokens", "--json"],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "E2G_PAGER": "cat"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    spans = [json.loads(line) for line in done.stdout.splitlines()]
    # Each token of the final file, with the commit its span names.
    owner = {
        (span["line"], span["column"] + offset): span["commit"]
        for span in spans
        for offset in range(len(span["text"]))
    }
    text = file.read_text()
    start = text.count("\n", 0, text.index(f)) + 1
    moved = [
        (token.line, token.text, owner[token.line, token.column])
        for token in lexer_for(path).tokens(text)
        if token.line >= start
    ]
    assert moved and all(sha == first for _, _, sha in moved), moved
    assert set(owner.values()) == {first, second}, (first, second, third)


def test_a_later_revision_reads_the_moves_it_knows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memo (e2g.git.tokenmemo): a later revision of the same file (an update
    of a warmed tree) asks git neither for the diff of a commit whose moves it
    read before nor for the origin of a moved line it blamed before; its answer
    is a fresh cache's, byte for byte."""
    from e2g.api.tokens import token_blame
    from e2g.git import tokenview

    path = C[0]
    root, _ = _moved(tmp_path, C)
    file = root / path
    archive = tmp_path / "list.mbox"
    archive.write_bytes(mail(1, date=datetime(2020, 1, 2, 13, tzinfo=UTC)))
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    fresh = config.resolve(data_dir=tmp_path / "fresh", env={}, home=tmp_path)
    for each in (settings, fresh):
        core.ingest(each, [archive])
    token_blame(settings, path, "HEAD", repo=root, match=False)
    memo = json.loads(next((tmp_path / "data").glob("tokens/*/moves.json")).read_text())
    assert memo["origins"] and any(memo["moves"].values())
    file.write_text(file.read_text().replace("return 0;", "return -1;"))
    _commit(root, "four", 4)
    diffs: list[list[str]] = []
    blamed: list[object] = []
    real_at_once = tokenview.view_git_at_once
    real_origins = tokenview.TokenHistory._origins_at_once

    def spy_input(
        git_dir: Path, commands: list[list[str]], inputs: list[bytes] | None = None
    ) -> list[bytes]:
        diffs.extend(data.decode().split() for data in inputs or ())
        return real_at_once(git_dir, commands, inputs)

    def spy_origins(self: object, asked: list, *, context: int) -> list:
        blamed.extend(mapped for _, mapped in asked if mapped)
        return real_origins(self, asked, context=context)  # type: ignore[arg-type]

    monkeypatch.setattr(tokenview, "view_git_at_once", spy_input)
    monkeypatch.setattr(tokenview.TokenHistory, "_origins_at_once", spy_origins)
    later = token_blame(settings, path, "HEAD", repo=root, match=False)
    known = set(memo["moves"])
    assert all(not set(asked) & known for asked in diffs), (diffs, known)
    assert not blamed
    monkeypatch.undo()
    again = token_blame(fresh, path, "HEAD", repo=root, match=False)
    assert later.spans == again.spans


def test_the_diffs_of_many_moves_read_by_two_gits_answer_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two commits each move a short function (f below g, then h below k): the
    diffs of the commits owning short runs are read by two gits at once past
    SPLIT_MOVES commits; the answer is the one git's, and both functions keep
    the first commit's tokens."""
    from e2g.api.tokens import token_blame
    from e2g.git import tokenview

    head, f, g = C[1], C[2], C[3]
    h = "int h(int y)\n{\n\treturn y;\n}\n"
    k = g.replace("int g(", "int k(")
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    file = root / "m.c"
    file.write_text(f"{head}{f}\n\n{g}\n\n{h}\n\n{k}")
    git(root, "add", "m.c")
    first = _commit(root, "one", 1)
    file.write_text(f"{head}{g}\n\n{f}\n\n{h}\n\n{k}")
    _commit(root, "two", 2)
    file.write_text(f"{head}{g}\n\n{f}\n\n{k}\n\n{h}")
    _commit(root, "three", 3)
    archive = tmp_path / "list.mbox"
    archive.write_bytes(mail(1, date=datetime(2020, 1, 2, 13, tzinfo=UTC)))
    answers = []
    logs: list[int] = []
    real = tokenview.view_git_at_once

    def spy(
        git_dir: Path, commands: list[list[str]], inputs: list[bytes] | None = None
    ) -> list[bytes]:
        if commands[0][0] == "log":
            logs.append(len(commands))
        return real(git_dir, commands, inputs)

    monkeypatch.setattr(tokenview, "view_git_at_once", spy)
    for split in (2, 10**6):
        monkeypatch.setattr(tokenview, "SPLIT_MOVES", split)
        settings = config.resolve(
            data_dir=tmp_path / f"data{split}", env={}, home=tmp_path
        )
        core.ingest(settings, [archive])
        answers.append(token_blame(settings, "m.c", "HEAD", repo=root, match=False))
    assert logs[0] == 2 and logs[-1] == 1, logs
    assert answers[0].spans == answers[1].spans
    text = file.read_text()
    moved = set()
    for body in (f, h):  # the lines of f and of h, where they are now
        start = text.count("\n", 0, text.index(body)) + 1
        moved |= set(range(start, start + body.count("\n")))
    owners = {span.sha for span in answers[0].spans if span.line in moved}
    assert owners == {first}, owners
