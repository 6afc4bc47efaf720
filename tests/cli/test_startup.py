"""Start-up stays light: what each path imports, checked in a fresh interpreter.

Deterministic stand-ins for the wall-time targets of benchmarks/startup.py: a module
that is not imported costs nothing, whatever the machine's load.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from e2g import __version__
from e2g.cli.commands import COMMANDS, build

# Never needed to print the version or to build the command line parser.
HEAVY = ("typer", "whoosh", "git", "e2g.api", "e2g.index", "e2g.matcher", "e2g.model")


def _imported_by(code: str, *args: str, status: int = 0) -> set[str]:
    """The modules loaded after `code` runs (with sys.argv[1:] = args) in a child.

    Listed by an exit function: main() ends the process without returning."""
    listing = "print('\\n'.join(sys.modules), file=sys.stderr)"
    script = f"import atexit, sys\natexit.register(lambda: {listing})\n{code}"
    result = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == status, result.stderr
    return set(result.stderr.split())


def _heavy(modules: set[str], names: tuple[str, ...] = HEAVY) -> set[str]:
    return {m for m in modules if any(m == n or m.startswith(f"{n}.") for n in names)}


def test_importing_the_entry_point_loads_nothing_heavy() -> None:
    modules = _imported_by("import e2g.cli.app")
    assert not _heavy(modules, (*HEAVY, "logging", "e2g.cli.commands"))


def _version(*args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "e2g", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout


def test_version_answers_without_typer_as_typer_would() -> None:
    # `-q --version` still goes through typer's eager option.
    assert (
        _version("--version") == _version("-q", "--version") == f"e2g {__version__}\n"
    )
    code = (
        "from e2g.cli.app import main\ntry:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert not _heavy(_imported_by(code, "--version"), (*HEAVY, "logging"))


def test_the_command_table_loads_no_store_index_or_matcher() -> None:
    # typer, yes; the modules one command needs come with that command.
    modules = _imported_by("from e2g.cli.commands import build\nbuild()")
    assert "typer" in modules
    assert not _heavy(modules, tuple(name for name in HEAVY if name != "typer"))


def test_the_table_names_every_registered_command() -> None:
    # reorder() and the one-module app rely on COMMANDS: a command registered
    # without its line there would be found only by `e2g -h`.
    app = build()
    registered = {command.name for command in app.registered_commands}
    registered |= {group.name for group in app.registered_groups}  # e2g tokens ...
    assert registered == set(COMMANDS)
    # A named command registers its own module's commands only.
    assert {command.name for command in build("match").registered_commands} == {"match"}


def test_a_named_command_loads_its_module_alone(tmp_path: Path) -> None:
    code = (
        "from e2g.cli.app import main\ntry:\n    main()\nexcept SystemExit:\n    pass"
    )
    args = ("--data-dir", str(tmp_path), "link", "-C", str(tmp_path / "none"), "HEAD")
    modules = _imported_by(code, *args, status=1)  # the repository is missing
    assert "e2g.cli.link" in modules
    assert not _heavy(modules, ("whoosh", "e2g.cli.search", "e2g.cli.ingest"))


def test_help_before_a_command_is_the_help_of_e2g() -> None:
    whole = subprocess.run(
        [sys.executable, "-m", "e2g", "-h"], capture_output=True, text=True, check=True
    ).stdout
    before = subprocess.run(
        [sys.executable, "-m", "e2g", "-h", "link"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert before == whole
    assert all(name in whole for name in COMMANDS)
