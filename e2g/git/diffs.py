"""A commit's diff as git streams it: bounded (MAX_DIFF, MAX_FILES), its files and
counts, and its patch-id (`git patch-id --stable`, e2g.mail.patch_id), or its
files alone from `--name-only`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from e2g.mail.patch import (
    Lines,
    parse_diff,
    parse_diff_with_lines,
)
from e2g.mail.patch_id import compute_patch_id, git_diff_patch_id
from e2g.mail.paths import unquote_path
from e2g.model import MAX_DIFF, MAX_FILES
from e2g.model.patch import FileChange, Patch

EMPTY_PATCH = Patch(diff="", files=(), added=0, removed=0, patch_id=None)


def split_lines(data: bytes) -> list[bytes]:
    """Lines with their newlines, cut at LF only (a CR belongs to its line)."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


class DiffBuffer:
    """A commit's diff lines, kept up to MAX_DIFF bytes of whole file sections.

    Past the limit, later files keep only their header lines and +/- counts, so a
    huge commit still lists every file it touches without holding all of it.
    """

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.size = 0
        self.section_start = 0
        self.overflow: _Overflow | None = None

    @property
    def started(self) -> bool:
        return bool(self.lines) or self.overflow is not None

    def feed_block(self, block: bytes) -> None:
        """Whole lines at once. Below MAX_DIFF they stay one block; past it, every
        line is replayed through feed(), which keeps whole file sections."""
        if self.overflow is None and self.size + len(block) <= MAX_DIFF:
            self.lines.append(block)
            self.size += len(block)
            return
        if self.overflow is None:
            block = b"".join([*self.lines, block])
            self.lines, self.size, self.section_start = [], 0, 0
        for line in split_lines(block):
            self.feed(line)

    def feed(self, line: bytes) -> None:
        if self.overflow is not None:
            self.overflow.feed(line)
            return
        if line.startswith(b"diff "):
            self.section_start = len(self.lines)
        self.lines.append(line)
        self.size += len(line)
        if self.size > MAX_DIFF:
            tail = self.lines[self.section_start :]
            del self.lines[self.section_start :]
            self.overflow = _Overflow()
            for held in tail:
                self.overflow.feed(held)


@dataclass(slots=True)
class _Section:
    header: list[bytes]
    added: int = 0
    removed: int = 0


class _Overflow:
    """Header lines and +/- counts of the file sections past MAX_DIFF."""

    def __init__(self) -> None:
        self.sections: list[_Section] = []
        self.old_left = 0
        self.new_left = 0

    def feed(self, line: bytes) -> None:
        if self.old_left > 0 or self.new_left > 0:
            self._count(line)
        elif line.startswith(b"@@ "):
            self.old_left, self.new_left = _hunk_counts(line)
        elif line.startswith(b"diff "):
            if len(self.sections) < MAX_FILES:
                self.sections.append(_Section(header=[line]))
        elif self.sections and len(self.sections[-1].header) < 32:
            self.sections[-1].header.append(line)

    def _count(self, line: bytes) -> None:
        marker = line[:1]
        if marker == b"\\":  # "\ No newline at end of file"
            return
        section = self.sections[-1] if self.sections else None
        if marker == b"+":
            self.new_left -= 1
            if section is not None:
                section.added += 1
        elif marker == b"-":
            self.old_left -= 1
            if section is not None:
                section.removed += 1
        else:
            self.old_left -= 1
            self.new_left -= 1


_HUNK = re.compile(rb"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _hunk_counts(line: bytes) -> tuple[int, int]:
    match = _HUNK.match(line)
    if match is None:
        return 0, 0
    old, new = match.group(1), match.group(2)
    return (1 if old is None else int(old)), (1 if new is None else int(new))


def build_patch(buffer: DiffBuffer) -> tuple[Patch, Lines | None]:
    data = b"".join(buffer.lines)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _non_utf8_patch(data, buffer.overflow), None
    if buffer.overflow is None:
        patch, lines = parse_diff_with_lines(text, patch_id=git_diff_patch_id(data))
        return patch or EMPTY_PATCH, lines
    return _truncated_patch(text, buffer.overflow), None


def paths_patch(lines: Sequence[bytes]) -> Patch:
    """The files alone, from `--name-only` lines (no counts: every reader of a
    commit without its diff shows its files only, and git then compares trees
    without reading a file: `--numstat`'s counts made git.git's 3,000 newest
    commits 1.9 s to read, against 0.3 s)."""
    files: list[FileChange] = []
    for line in lines:
        name = line.decode("utf-8", errors="replace").rstrip("\n")
        if not name:
            continue
        files.append(
            FileChange(
                path=unquote_path(name), old_path=None, binary=False, added=0, removed=0
            )
        )
        if len(files) == MAX_FILES:
            break
    return Patch(diff="", files=tuple(files), added=0, removed=0, patch_id=None)


def _non_utf8_patch(data: bytes, overflow: _Overflow | None) -> Patch:
    """A diff of non-UTF-8 file content (a latin-1 source file, say).

    The text kept is decoded with U+FFFD replacements, so it can be stored; the
    patch-id is computed on the surrogate-escaped text, which compute_patch_id
    encodes back to git's exact bytes, so it still equals git's own.
    """
    text = data.decode("utf-8", errors="replace")
    if overflow is not None:
        return _truncated_patch(text, overflow)
    patch = parse_diff(text)
    if patch is None:
        return EMPTY_PATCH
    exact = compute_patch_id(data.decode("utf-8", errors="surrogateescape"))
    return replace(patch, patch_id=exact)


def _truncated_patch(kept: str, overflow: _Overflow) -> Patch:
    """A huge commit: the kept diff, every file, and no patch-id (the diff is cut)."""
    skeleton = "".join(
        line.decode("utf-8", errors="replace")
        for section in overflow.sections
        for line in section.header
    )
    kept_files = (parse_diff(kept) or EMPTY_PATCH).files if kept else ()
    all_files = (parse_diff(kept + skeleton) or EMPTY_PATCH).files
    late_files = list(all_files[len(kept_files) :])
    if len(late_files) == len(overflow.sections):
        late_files = [
            replace(change, added=section.added, removed=section.removed)
            for change, section in zip(late_files, overflow.sections, strict=True)
        ]
    files = (*kept_files, *late_files)
    return Patch(
        diff=kept,
        files=files,
        added=sum(change.added for change in files),
        removed=sum(change.removed for change in files),
        patch_id=None,
    )
