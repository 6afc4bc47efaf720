"""`e2g help TOPIC` and shell completion: what a user types, in a new process."""

from __future__ import annotations

import os
import subprocess
import sys

from e2g.cli.manual import QUERY
from e2g.index import query as ql
from tests.conftest import ROOT

# As the installed `e2g` script runs: completion is keyed to the program's name.
AS_E2G = "import sys; sys.argv[0] = 'e2g'; from e2g.cli.app import main; main()"


def e2g(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", AS_E2G, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "E2G_PAGER": "cat", **(env or {})},
        timeout=120,
    )


def test_help_query_prints_the_query_language() -> None:
    shown = e2g("help", "query")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == QUERY.strip()
    topics = e2g("help")
    assert (topics.returncode, topics.stderr) == (0, "")
    assert "query" in topics.stdout


def test_an_unknown_help_topic_is_one_line_and_exit_2() -> None:
    shown = e2g("help", "bogus")
    assert shown.returncode == 2
    assert shown.stdout == ""
    assert shown.stderr.startswith("e2g: error: ")
    assert "no help topic 'bogus'; topics: query" in shown.stderr
    assert shown.stderr.count("\n") == 1


def test_the_query_page_names_every_prefix_and_value() -> None:
    for name in ql.PREFIXES:
        assert f"{name}:" in QUERY, name
    for value in (*ql.KINDS, *ql.FEATURES, "OR", "AND", "NOT"):
        assert value in QUERY, value
    # The query language's table moved from the README to search's reference page.
    page = (ROOT / "docs" / "commands" / "search.md").read_text(encoding="utf-8")
    section = page.split("## Query language", 1)[1].split("\n## ", 1)[0]
    assert "e2g help query" in section
    for name in ("s:", "f:", "file:", "list:", "d:", "is:", "has:", "v:"):
        assert f"`{name}" in section, name


def test_completion_script_and_answers() -> None:
    # The shell is named: typer detects it from the parent processes, which a test
    # runner (CI, a bash tool with no login shell) may not have.
    script = e2g(
        "--show-completion",
        "bash",
        env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"},
    )
    assert script.returncode == 0, script.stderr
    assert "_E2G_COMPLETE" in script.stdout and "e2g" in script.stdout
    assert "--install-completion" in e2g("-h").stdout
    assert _complete("e2g sea") == ["search"]
    assert _complete("e2g search --thr") == ["--thread"]
    assert _complete("e2g he") == ["help"]


def _complete(words: str) -> list[str]:
    """What bash completion offers for the last of `words`, as typer answers it."""
    found = e2g(
        env={
            "_E2G_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - 1),
        }
    )
    return found.stdout.split()
