"""The docs stay honest: every command has help and is in the README, and the README's
two set-up commands are the ones .ci/run and the sample use."""

from __future__ import annotations

import re

import typer.main

from e2g.cli.app import app
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands() -> dict[str, object]:
    group = typer.main.get_command(app)
    return dict(group.commands)  # type: ignore[attr-defined]


def test_every_command_has_help_and_is_documented() -> None:
    commands = _commands()
    assert {"ingest", "search", "reindex", "link", "match", "stats", "serve"} <= set(
        commands
    )
    for name, command in commands.items():
        assert (command.help or "").strip(), f"e2g {name} has no help"  # type: ignore[attr-defined]
        assert f"`e2g {name}" in README, f"e2g {name} is missing from README.md"


def test_readme_test_command_is_what_ci_runs() -> None:
    blocks = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)
    assert len(blocks) >= 2
    test_command = blocks[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci


def test_readme_demo_uses_files_that_exist() -> None:
    demo = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)[0]
    for path in re.findall(r"sample-mbox/[\w./-]+", demo):
        assert (ROOT / path).exists(), path
