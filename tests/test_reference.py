"""The reference cannot drift: every option a command's `--help` lists is on its page
(docs/commands/COMMAND.md), every JSON key a page lists is in the command's real
`--json` output on the bundled sample, and every top-level key of that output is on
the page. `e2g help COMMAND` prints the page, and the package finds the pages."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer.main

# typer (0.26 to 0.28, as pinned) carries its own click, whose commands these are.
from typer._click.core import Command, Context

from e2g import reference
from e2g.cli.app import app
from tests.conftest import ROOT, SAMPLE_ARCHIVES, sample_repo

PAGES = ROOT / "docs" / "commands"
DEMO = json.loads((ROOT / "sample-mbox" / "expected.json").read_text())["demo_commit"]


def _group() -> Command:
    return typer.main.get_command(app)


def _commands() -> dict[str, Command]:
    return dict(_group().commands)  # type: ignore[attr-defined]


def section(page: str, title: str) -> str:
    """The text of the page's `## title` section ('' when it has none)."""
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", page, re.M | re.S)
    return found.group(1) if found else ""


def option_strings(command: Command) -> list[str]:
    """Every option string `COMMAND --help` lists (`-C`, `--repo`, ...), but help's;
    a command group's (`e2g tokens`) with every subcommand's (`tokens warm --help`),
    whose options its one page lists (e2g's own page lists its global options only)."""
    own = [
        name
        for param in command.get_params(Context(command))
        if param.param_type_name == "option" and param.name != "help"
        for name in (*param.opts, *param.secondary_opts)
    ]
    subcommands = {} if command.name == "e2g" else getattr(command, "commands", {})
    found = [
        *own,
        *(name for sub in subcommands.values() for name in option_strings(sub)),
    ]
    return list(dict.fromkeys(found))


def missing_options(page: str, command: Command) -> list[str]:
    """The options of `command` that no line of the page's Options section names."""
    options = section(page, "Options")
    lines = [line for line in options.splitlines() if line.lstrip().startswith("- `")]
    listed = "\n".join(lines)
    return [
        name
        for name in option_strings(command)
        if not re.search(rf"`{re.escape(name)}(?![\w-])", listed)
    ]


def listed_keys(page: str) -> list[str]:
    """The keys the page's JSON keys section lists: each bullet's first `code`."""
    keys = re.findall(r"^\s*- `([^`]+)`", section(page, "JSON keys"), re.M)
    return list(dict.fromkeys(keys))


def named_keys(page: str) -> set[str]:
    """Every `code` of the JSON keys section, bullets' or prose's."""
    return set(re.findall(r"`([^`]+)`", section(page, "JSON keys")))


def _page(name: str) -> str:
    return (PAGES / f"{name}.md").read_text(encoding="utf-8")


# -- options ---------------------------------------------------------------------------


def test_every_command_has_its_page_and_the_index_links_it() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for name in ("e2g", *_commands()):
        assert (PAGES / f"{name}.md").is_file(), f"docs/commands/{name}.md is missing"
        assert f"(commands/{name}.md)" in index, name
        assert _page(name).startswith(
            f"# {'e2g' if name == 'e2g' else 'e2g ' + name}\n"
        )
        for title in ("Synopsis", "Options", "Exit codes"):
            assert section(_page(name), title).strip(), f"{name}.md: no {title}"


@pytest.mark.parametrize("name", ["e2g", *sorted(_commands())])
def test_every_option_of_help_is_on_its_page(name: str) -> None:
    command = _group() if name == "e2g" else _commands()[name]
    assert missing_options(_page(name), command) == []


def test_the_checker_fails_a_page_missing_an_option() -> None:
    audit = _commands()["audit"]
    page = _page("audit")
    assert missing_options(page, audit) == []
    without = "\n".join(
        line for line in page.splitlines() if not line.startswith("- `--strict`")
    )
    assert missing_options(without, audit) == ["--strict"]
    # An option mentioned in prose only is not listed: it needs its own line.
    assert "--strict" in without
    # And an option added to the command without its line is caught.
    strict = next(param for param in audit.params if param.name == "strict")
    since = copy.copy(strict)
    since.name, since.opts, since.secondary_opts = "since", ["--since"], []
    added = copy.copy(audit)
    added.params = [*audit.params, since]
    assert missing_options(page, added) == ["--since"]


def test_a_groups_page_lists_its_subcommands_options() -> None:
    tokens = _commands()["tokens"]
    assert {"--max-bytes", "--json", "-j", "--jobs"} <= set(option_strings(tokens))
    page = _page("tokens")
    without = "\n".join(
        line for line in page.splitlines() if not line.startswith("- `--max-bytes")
    )
    assert missing_options(without, tokens) == ["--max-bytes"]


# -- JSON keys -------------------------------------------------------------------------


def _keys(value: object, found: set[str]) -> set[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            found.add(key)
            _keys(item, found)
    elif isinstance(value, list):
        for item in value:
            _keys(item, found)
    return found


class Outputs:
    """What each command's `--json` printed on the sample: its objects, per command."""

    def __init__(self) -> None:
        self.objects: dict[str, list[dict[str, object]]] = {}

    def add(self, name: str, stdout: str) -> None:
        lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
        if len(lines) == 1 and isinstance(lines[0], list):
            lines = lines[0]
        self.objects.setdefault(name, []).extend(lines)

    def all_keys(self, name: str) -> set[str]:
        return _keys(self.objects[name], set())

    def top_keys(self, name: str) -> set[str]:
        return {key for item in self.objects[name] for key in item}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outputs]:
    from tests.ingest.inbox_server import Site

    root = tmp_path_factory.mktemp("reference")
    repo = sample_repo(root / "repo")
    site = Site(root / "site")
    site.add_epoch("frob", 3)
    env = {
        **{k: v for k, v in os.environ.items() if k != "E2G_DEBUG"},
        "E2G_PAGER": "cat",
        "E2G_DATA_DIR": str(root / "data"),
        "XDG_CONFIG_HOME": str(root / "config"),
    }
    found = Outputs()

    def run(name: str, *args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "e2g", "-q", name, *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=root,
            timeout=300,
        )
        assert done.returncode == 0, (name, args, done.stderr)
        found.add(name, done.stdout)

    run("ingest", "--json", "-j", "1", *map(str, SAMPLE_ARCHIVES))
    run("ingest", "--json", f"file://{site.root}/frob/")
    run("match", "--json", "-j", "1", "-C", str(repo))
    run("tokens", "warm", "--json", "-j", "1", "-C", str(repo))
    run("sync", "--json", "-j", "1")  # brings the warmed tree up too: `tokens`
    run("search", "--json", "f:alice is:patch")
    run("link", "--json", "-C", str(repo), DEMO)
    run("link", "--json", "20220912120000.2302-3-keiko@example.com")
    run("stats", "--json", "-C", str(repo))
    run("stats", "--json", "--tokens", "-C", str(repo))  # the tree warmed above
    run("metrics", "--json")
    run("audit", "--json", "--no-match", "-C", str(repo))
    run("blame", "--json", "-C", str(repo), "net/frob_stats.c")
    run("blame", "--json", "--tokens", "-C", str(repo), "net/frob_stats.c")
    run(
        "blame", "--json", "--history", "-L", "1,5", "-C", str(repo), "net/frob_stats.c"
    )
    run("patches", "--json", "--state", "all")
    run("events", "--json")
    # Keiko's v1 and v2, whose second part changed a hunk between them.
    run("series", "--json", "20220912120000.2302-3-keiko@example.com")
    yield found


JSON_PAGES = (
    "ingest",
    "sync",
    "search",
    "link",
    "match",
    "stats",
    "audit",
    "blame",
    "patches",
    "events",
    "series",
    "metrics",
    "tokens",
)


@pytest.mark.parametrize("name", JSON_PAGES)
def test_every_json_key_a_page_lists_is_in_real_output(
    outputs: Outputs, name: str
) -> None:
    page = _page(name)
    listed = listed_keys(page)
    assert listed, f"{name}.md lists no JSON keys"
    assert "--json" in option_strings(_commands()[name])
    missing = [key for key in listed if key not in outputs.all_keys(name)]
    assert missing == [], f"{name}.md lists keys its --json never gives: {missing}"
    # The other way: a key the command prints at the top is named on its page.
    unnamed = sorted(outputs.top_keys(name) - named_keys(page))
    assert unnamed == [], f"{name} --json gives keys {name}.md does not name: {unnamed}"


def test_pages_with_a_json_section_are_the_commands_with_json() -> None:
    with_json = {
        name for name in _commands() if "--json" in option_strings(_commands()[name])
    }
    assert with_json == set(JSON_PAGES)
    for name in _commands():
        assert bool(listed_keys(_page(name))) == (name in with_json), name


def test_the_key_checker_reads_bullets_only() -> None:
    page = "# e2g x\n\n## JSON keys\n\n- `a`: one, with `b` in prose.\n  - `c`: nested.\n\n## Exit codes\n\n- `d`\n"
    assert listed_keys(page) == ["a", "c"]
    assert named_keys(page) == {"a", "b", "c"}


# -- where the pages are read ----------------------------------------------------------


def test_the_package_reads_the_pages_of_docs_commands() -> None:
    assert reference.names()[0] == "e2g"
    assert set(reference.names()) == {path.stem for path in PAGES.glob("*.md")}
    for name in reference.names():
        assert reference.text(name) == _page(name)
    assert reference.text("../README") is None
    assert reference.text("nothing") is None
    # The package data pyproject ships: the pages through e2g/docs.
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"docs/*.md"' in pyproject
    assert (ROOT / "e2g" / "docs").resolve() == PAGES.resolve()


@pytest.mark.parametrize("name", ["audit", "link", "e2g"])
def test_help_command_prints_its_page(name: str) -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "e2g", "help", name],
        capture_output=True,
        text=True,
        env={**os.environ, "E2G_PAGER": "cat"},
        timeout=120,
    )
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout.strip() == _page(name).strip()


@pytest.mark.slow
def test_a_wheel_carries_the_pages(tmp_path: Path) -> None:
    """`pip wheel` of a copy of this tree (the build writes beside the sources): the
    wheel holds every page under e2g/docs/, the link's target copied in."""
    import shutil
    import zipfile

    source = tmp_path / "src"
    shutil.copytree(
        ROOT,
        source,
        symlinks=True,
        ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__"),
    )
    out = tmp_path / "wheels"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if built.returncode != 0:
        pytest.skip(f"pip wheel failed here: {built.stderr[-300:]}")
    (wheel,) = out.glob("e2g-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for page in PAGES.glob("*.md"):
        assert f"e2g/docs/{page.name}" in names, page.name
