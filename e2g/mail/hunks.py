"""The hunks of a diff: the one wrapper around unidiff, with a tolerant scanner behind it.

Who reads hunks here: e2g.mail.interdiff (a posted patch against the commit that
applied it: `link --diff`, the audit, the queue's range-diff between versions) and
the web's diff view (e2g.web.render.diff_lines). Files, +/- lines and the patch-id
stay with e2g.mail.patch's scanner, 19x faster than unidiff and with no hunk objects.

unidiff (PACKAGES.md: 4,009 patches/s) reads hunks by their counts. What it cannot
read is kept from it:

- line ends: mail comes in CRLF, and str.splitlines(), which every other reader of a
  diff in e2g uses, also cuts at a lone CR, a form feed and the Unicode line
  breaks. unidiff reads those lines joined with LF, so a position here is a
  position in `diff.splitlines()` for every caller;
- paths: unidiff keeps git's C-quoted paths escaped and reads `linux-2.6.20.orig/`
  against `linux/` as a rename. A hunk's path is read from the headers before it by
  e2g.mail.paths, as the scanner reads it, whichever parser found the hunk;
- a patch it rejects (a hunk whose counts are wrong, a line no hunk may hold, a
  header it does not know: UnidiffParseError), or one it would read otherwise than
  the scanner (text after a hunk's counted end that the scanner takes into the
  hunk, an `@@` line it passes over), is read by `_scanned`: hunk lines from an
  `@@` to the next header, with no counting.

Both give the same shapes and, for every diff unidiff accepts, the same hunks
(tests/mail/test_hunks.py: generated diffs, and the real ones of tests/data and
the shared corpus). One divergence is unidiff's right: a removed line starting
`-- ` just before an added one starting `++ ` is a file header to the scanner,
which counts nothing; unidiff's counts say otherwise, and the diff is read by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from e2g.mail import paths
from e2g.mail.patch import HUNK_HEADER

_HUNK_LINE = (" ", "+", "-", "")  # first characters of a hunk's lines ("": a blank
# context line whose space a mailer stripped); `\ No newline` lines are left out


class Hunk(NamedTuple):
    header: str  # the `@@ -a,b +c,d @@ context` line as written
    old_start: int  # the header's numbers (0 when it has none that parse)
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[str, ...]  # the body as written, markers kept; no `\ No newline`
    at: int  # index of the header in diff.splitlines()
    end: int  # index after the hunk's last line


class FileHunks(NamedTuple):
    path: str  # as the store's paths are: `a/linux-2.6.20/mm/x.c` is `mm/x.c`
    hunks: tuple[Hunk, ...]


def line_kind(line: str) -> str:
    """A hunk line's kind: "add", "del" or "ctx"."""
    first = line[:1]
    return "add" if first == "+" else "del" if first == "-" else "ctx"


def hunks_of(diff: str) -> list[FileHunks]:
    """The hunks of `diff`, per file, in order; files with no hunk are left out."""
    lines = diff.splitlines()
    spans = _counted(lines)
    if spans is None:
        spans = _scanned(lines)
    return _files(lines, spans)


# A span is (at, end): the header's index and the index after the hunk's last line.
Span = tuple[int, int]


def _counted(lines: list[str]) -> list[Span] | None:
    """The hunks as unidiff reads them, or None when it rejects the diff or would
    read it otherwise than `_scanned`."""
    if not lines:
        return []
    try:
        patch = PatchSet("\n".join(lines) + "\n")
    except (UnidiffParseError, ValueError):  # ValueError: a number int() refuses
        return None
    spans: list[Span] = []
    for patched in patch:
        for hunk in patched:
            numbered = [line.diff_line_no for line in hunk if line.diff_line_no]
            if not numbered:
                return None
            # Blank lines and `\ No newline` after the counted end come unnumbered.
            last = max(i for i, line in enumerate(hunk) if line.diff_line_no)
            spans.append((numbered[0] - 2, numbered[-1] + len(hunk) - 1 - last))
    return spans if _agrees(lines, spans) else None


def _agrees(lines: list[str], spans: Sequence[Span]) -> bool:
    """Whether `_scanned` would find these hunks too: every `@@` line is a hunk's,
    no hunk holds a file header, and no line the scanner would add to a hunk
    follows one before the next header."""
    if sum(line.startswith("@@ ") for line in lines) != len(spans):
        return False
    for at, end in spans:
        if any(
            _file_header(lines, index)
            for index in range(at + 1, end)
            if lines[index].startswith("--- ")
        ):
            return False
        for index in range(end, len(lines)):
            line = lines[index]
            if _resets(lines, index) or line.startswith("@@ "):
                break
            if line[:1] in _HUNK_LINE:
                return False
    return True


def _scanned(lines: list[str]) -> list[Span]:
    """The tolerant reading: a hunk runs from its `@@` line to the next `@@`, `diff
    --git` or `---`/`+++` pair, whatever its counts say."""
    spans: list[Span] = []
    start: int | None = None
    for index, line in enumerate(lines):
        first = line[:1]
        if start is not None and (
            first in (" ", "+") or (first == "-" and not _file_header(lines, index))
        ):
            continue  # most lines: one test
        if _resets(lines, index):
            if start is not None:
                spans.append((start, index))
            start = None
        elif line.startswith("@@ "):
            if start is not None:
                spans.append((start, index))
            start = index
    if start is not None:
        spans.append((start, len(lines)))
    return spans


def _files(lines: list[str], spans: Sequence[Span]) -> list[FileHunks]:
    """Group the hunks by file, each with the path its headers name."""
    files: list[FileHunks] = []
    path = ""
    position = 0
    for at, end in spans:
        new_file = not files
        for index in range(position, at):
            line = lines[index]
            if line.startswith("diff --git "):
                new_file = True
                names = paths.git_header_paths(line[len("diff --git ") :])
                path = _strip_side(names[1]) if names else path
            elif _file_header(lines, index):
                new_file = True
            elif line.startswith("+++ "):
                named = paths.side_path(line[4:])
                path = paths.normalise_path(named) if named != "/dev/null" else path
        hunk = _hunk(lines, at, end)
        if new_file or path != files[-1].path:
            files.append(FileHunks(path, (hunk,)))
        else:
            files[-1] = FileHunks(path, (*files[-1].hunks, hunk))
        position = end
    return files


def _hunk(lines: list[str], at: int, end: int) -> Hunk:
    match = HUNK_HEADER.match(lines[at])
    old_start, old_count, new_start, new_count = (
        match.groups() if match is not None else ("0", "0", "0", "0")
    )
    return Hunk(
        lines[at],
        old_start=int(old_start),
        old_count=1 if old_count is None else int(old_count),
        new_start=int(new_start),
        new_count=1 if new_count is None else int(new_count),
        lines=tuple(line for line in lines[at + 1 : end] if line[:1] in _HUNK_LINE),
        at=at,
        end=end,
    )


def _resets(lines: list[str], index: int) -> bool:
    """Whether lines[index] starts a file: `diff --git` or a `---`/`+++` pair."""
    return lines[index].startswith("diff --git ") or _file_header(lines, index)


def _file_header(lines: list[str], index: int) -> bool:
    """Whether lines[index] starts a `--- old` / `+++ new` file header."""
    return (
        lines[index].startswith("--- ")
        and index + 1 < len(lines)
        and lines[index + 1].startswith("+++ ")
    )


def _strip_side(name: str) -> str:
    name = paths.unquote_path(name) if name.startswith('"') else name
    return name.split("/", 1)[1] if name[:2] in ("a/", "b/") else name
