"""The docs stay honest: every command has help and is in the README, and the README's
two set-up commands are the ones .ci/run and the sample use."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import typer.main

from e2g.cli.app import app
from tests.conftest import ROOT, sample_repo

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


def test_readme_is_short_and_links_every_commands_page() -> None:
    assert len(README.split()) < 1200
    for name in _commands():
        assert f"(docs/commands/{name}.md)" in README, name
        assert (ROOT / "docs" / "commands" / f"{name}.md").is_file(), name
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README):
        assert (ROOT / image).is_file(), image  # taken by tests/web/test_browser.py
    # Every link to a page of the repository leads somewhere.
    for target in re.findall(r"\]\(((?:docs|sample-mbox)/[^)#]+)", README):
        assert (ROOT / target).exists(), target


def _normal(text: str, repo: Path) -> str:
    """Output with what differs from run to run made equal: timings, the clone's path."""
    text = text.replace(str(repo), "/tmp/e2g-sample-repo")
    text = re.sub(r"in \d+(\.\d+)? s\b", "in N s", text)
    text = re.sub(r"\(\d+ commits/s\)", "(N commits/s)", text)
    return " ".join(text.split())


def test_readme_tour_shows_real_output(tmp_path: Path) -> None:
    """Each `$ e2g ...` of the tour, run in order on the sample: every line the README
    shows of its output is a line the command prints (the README trims, never invents)."""
    tour = README.split("## A tour on the sample", 1)[1].split("\n## ", 1)[0]
    shown = re.findall(r"```\n\$ (e2g [^\n]*)\n(.*?)```", tour, flags=re.S)
    assert len(shown) >= 6
    repo = sample_repo(tmp_path / "repo")
    env = {
        **{k: v for k, v in os.environ.items() if k != "E2G_DEBUG"},
        "E2G_PAGER": "cat",
        "E2G_DATA_DIR": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "COLUMNS": "100",
    }
    for number, (command, lines) in enumerate(shown):
        done = subprocess.run(
            [sys.executable, "-m", "e2g", *shlex.split(command)[1:]],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT if number == 0 else repo,
            timeout=300,
        )
        assert done.returncode == 0, (command, done.stderr)
        printed = {
            _normal(line, repo) for line in (done.stdout + done.stderr).splitlines()
        }
        for line in lines.splitlines():
            if line.strip() and line.strip() != "...":
                assert _normal(line, repo) in printed, (command, line)
