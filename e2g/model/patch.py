"""The diff a message or a commit carries, file by file.

Apart from the messages (e2g.model.mail): `e2g link` reads diffs of commits and of
stored mail and builds no Message, so it loads none of their classes (each frozen
dataclass costs about half a millisecond of every start, benchmarks/startup.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from e2g.model import FileStatus


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's part of a diff."""

    path: str  # normalised: new path, or old path for a deletion
    old_path: str | None  # normalised; differs from path for renames/copies
    status: FileStatus = FileStatus.MODIFIED
    binary: bool = False
    added: int = 0
    removed: int = 0
    # lines_weight() of the path's collapsed added and removed lines, all its diffs
    # in the text together; set for mail (which the store keeps), None otherwise.
    weight: float | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Patch:
    """The diff a message (or commit) carries."""

    diff: str  # the diff text, from the first diff header to the end of the last hunk
    files: tuple[FileChange, ...]
    added: int
    removed: int
    patch_id: str | None  # equal to `git patch-id --stable` of the same diff
    # The files' paths, kept: the matcher asks for them once per candidate.
    paths: tuple[str, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "paths", tuple(change.path for change in self.files))
