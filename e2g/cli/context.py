"""The global options every command sees, set once by the app callback."""

from __future__ import annotations

from pathlib import Path

from e2g import config


class State:
    """Global options, resolved once (STYLE habit 5)."""

    def __init__(self) -> None:
        self.data_dir: Path | None = None
        self.quiet = False
        self.verbose = 0
        self._settings: dict[tuple[Path | None, bool | None], config.Settings] = {}

    def start(self, *, data_dir: Path | None, quiet: bool, verbose: int) -> None:
        """A command begins (the app callback): its options, and settings resolved
        anew (tests run many commands in one process, with their own environment)."""
        self.data_dir, self.quiet, self.verbose = data_dir, quiet, verbose
        self._settings.clear()

    def settings(self, *, index_bodies: bool | None = None) -> config.Settings:
        """The resolved settings: the environment and config file are read once."""
        key = (self.data_dir, index_bodies)
        if key not in self._settings:
            self._settings[key] = config.resolve(
                data_dir=self.data_dir, index_bodies=index_bodies
            )
        return self._settings[key]


state = State()
