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

    def settings(self, *, index_bodies: bool | None = None) -> config.Settings:
        return config.resolve(data_dir=self.data_dir, index_bodies=index_bodies)


state = State()
