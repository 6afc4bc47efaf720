"""What a file's throwaway token history never forgets: each view commit's moves
(read from its own diff, e2g.git.tokenmoves) and where a line of a view commit's
view came from (blamed without -M). A view commit is named by its content and
its parents, so neither answer can change; a later revision's blame (an update of
a warmed tree, a token's history) reads them instead of asking git again (git.git's
diff.c: 652 commits' diffs and 37 blames, 7.4 s of its 15 s cold).

Kept beside the history's state (`moves.json`), read when the history is opened
and written whole (a temporary file renamed) by the holder of its lock when it
grew. A damaged or older file is taken as empty. FORMAT changes with the rules of
e2g.git.tokenmoves.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

FORMAT = 1
NAME = "moves.json"

Moved = tuple[str, dict[int, int]]  # the parent, and each moved line's line there


class MoveMemo:
    """The moves and line origins known of one throwaway history."""

    def __init__(self, directory: Path, *, read: bool = True) -> None:
        self._path = directory / NAME
        self.moves: dict[str, Moved | None] = {}  # view sha -> its moves, or none
        self.origins: dict[str, dict[int, tuple[str, int]]] = {}  # view sha -> line
        self._grown = False
        if not read:
            return
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
            if data.get("format") == FORMAT:
                self.moves = {
                    sha: None if item is None else (item[0], _lines(item[1]))
                    for sha, item in data["moves"].items()
                }
                self.origins = {
                    sha: {int(line): (at[0], int(at[1])) for line, at in found.items()}
                    for sha, found in data["origins"].items()
                }
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            self.moves, self.origins = {}, {}

    def add_moves(self, sha: str, moved: Moved | None) -> None:
        self.moves[sha] = moved
        self._grown = True

    def add_origin(self, sha: str, line: int, origin: tuple[str, int]) -> None:
        self.origins.setdefault(sha, {})[line] = origin
        self._grown = True

    def save(self) -> None:
        """Written whole when it grew (the caller holds the history's lock)."""
        if not self._grown:
            return
        data = {
            "format": FORMAT,
            "moves": {
                sha: None if item is None else [item[0], item[1]]
                for sha, item in self.moves.items()
            },
            "origins": {
                sha: {str(line): list(at) for line, at in found.items()}
                for sha, found in self.origins.items()
            },
        }
        temporary = self._path.with_name(f".moves.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(data, separators=(",", ":")), "utf-8")
        temporary.replace(self._path)
        self._grown = False

    def forget(self) -> None:
        """Nothing known (the history is made afresh)."""
        self.moves, self.origins, self._grown = {}, {}, False
        self._path.unlink(missing_ok=True)


def _lines(mapping: dict[str, int]) -> dict[int, int]:
    return {int(line): int(old) for line, old in mapping.items()}
