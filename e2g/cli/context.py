"""The global options every command sees: set by the app callback on click's context
(`ctx.obj`), so that nothing outlives the command that parsed them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from e2g import config


class State:
    """Global options, resolved once per command (STYLE habit 5)."""

    def __init__(
        self, *, data_dir: Path | None = None, quiet: bool = False, verbose: int = 0
    ) -> None:
        self.data_dir = data_dir
        self.quiet = quiet
        self.verbose = verbose
        self._settings: dict[bool | None, config.Settings] = {}

    def settings(self, *, index_bodies: bool | None = None) -> config.Settings:
        """The resolved settings: the environment and config file are read once."""
        if index_bodies not in self._settings:
            self._settings[index_bodies] = config.resolve(
                data_dir=self.data_dir, index_bodies=index_bodies
            )
        return self._settings[index_bodies]


def options(ctx: typer.Context) -> State:
    """The global options of the command running in `ctx`."""
    found = ctx.find_object(State)
    return found if found is not None else ctx.ensure_object(State)


# `--exit-code` (as in `git diff`): the command ran, and found nothing.
NOTHING_FOUND = 4
ExitCode = Annotated[
    bool,
    typer.Option(
        "--exit-code",
        help=f"Exit with {NOTHING_FOUND} when nothing is found (for scripts).",
    ),
]

# `-C REPO` of the commands that read a repository (git's own `-C`).
RepoOption = Annotated[
    Path,
    typer.Option(
        "--repo",
        "-C",
        help="The git repository (default: the current directory).",
        show_default=False,
    ),
]
# The commits a command walks, as `git rev-list` takes them (match, audit).
RevsArgument = Annotated[
    list[str] | None,
    typer.Argument(
        help="Revision ranges as for git rev-list (default: HEAD).",
        show_default=False,
    ),
]
AllRefsOption = Annotated[
    bool, typer.Option("--all", help="Every commit reachable from any ref.")
]
# The worker processes of a command that matches or ingests (match, sync).
JobsOption = Annotated[
    int,
    typer.Option(
        "--jobs", "-j", min=0, max=64, help="Worker processes (0: one per core)."
    ),
]
