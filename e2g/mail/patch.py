"""The diff side of a mail or commit: find the diff and parse it.

This module owns two things, all pure functions on ``str``:

- *Where the diff is* (`split_body`, `find_patch`): a line scanner that recognises git
  diffs, plain ``diff -u`` and ``--- a``/``+++ b`` diffs, CVS/SVN ``Index:`` diffs,
  renames, mode-only changes, new empty files and ``GIT binary patch`` blocks, and that
  ends a diff where its hunk lines stop (signature, list footer, trailing commentary).
  Quoted diffs in replies (``> +foo``) never start at column 0, so they are not diffs.
- *What the diff changes* (`parse_diff`, `diff_lines`): files with status, +/- counts,
  the changed lines and each file's weight for the matcher.

How a header names a file is `e2g.mail.paths`; the patch-id is `e2g.mail.patch_id`.

Its size (over 500 lines) is one scanner's: the dialects it recognises and the
records it fills are read together.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from e2g.mail import paths
from e2g.mail.patch_id import compute_patch_id
from e2g.model import MAX_BODY, MAX_DIFF, MAX_FILES, FileStatus, lines_weight
from e2g.model.patch import FileChange, Patch

MAX_SCAN = MAX_DIFF + MAX_BODY  # characters of one text part that we look at
MAX_HEADER_LINES = 24  # lines between a file's first header line and its hunks
MAX_SEGMENTS = 1000  # separate diff runs in one text
MAX_PARTS = 64  # text parts of one message that may carry diffs

# Per normalised path: (added lines, removed lines), as diff_lines() gives them.
LinesByFile = dict[str, tuple[list[str], list[str]]]
# The same, read-only: a LinesByFile or ChangedLines.
Lines = Mapping[str, tuple[list[str], list[str]]]

_HUNK = re.compile(r"@@ -(\d{1,10})(?:,(\d{1,10}))? \+(\d{1,10})(?:,(\d{1,10}))? @@")
HUNK_HEADER = _HUNK  # groups: old start, old count, new start, new count
_GIT_EXTENDED = (
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "copy from ",
    "copy to ",
    "rename from ",
    "rename to ",
    "rename old ",
    "rename new ",
    "similarity index ",
    "dissimilarity index ",
    "index ",
)
_DIFFSTAT = re.compile(
    r" +(?:"
    r"\S.*\| +(?:\d+ ?\+*-*|Bin .*)"
    r"|\d+ files? changed.*"
    r"|(?:create|delete) mode \d+ .*"
    r"|mode change \d+ => \d+ .*"
    r"|(?:rename|copy) .* \(\d+%\)"
    r")\s*"
)
_FOOTER = re.compile(r"_{10,}\s*")
_EPOCH = re.compile(r"\t(?:1970-01-01|1969-12-31|Thu Jan  1 )")


# --- the diff scanner -----------------------------------------------------------------


@dataclass(slots=True)
class _FileRecord:
    """One file's diff while it is being scanned (mutable; becomes a FileChange)."""

    git: bool
    header: str
    old_path: str | None = None
    new_path: str | None = None
    status: FileStatus = FileStatus.MODIFIED
    binary: bool = False
    created: bool = False  # non-git diff whose old side is empty (diff -N)
    named: str | None = None  # the Index: line's path (CVS, svn, quilt)
    rcs: str | None = None  # the RCS file: line's path (CVS)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


class _Segment(NamedTuple):
    """A run of diff lines: lines[start:end] of the scanned text."""

    start: int
    end: int
    files: tuple[_FileRecord, ...]


def _scan(lines: list[str]) -> list[_Segment]:
    """Find every diff run in `lines`; lines outside them are commentary."""
    segments: list[_Segment] = []
    file_count = 0
    index = 0
    while (
        index < len(lines) and len(segments) < MAX_SEGMENTS and file_count < MAX_FILES
    ):
        first = lines[index][:1]
        if first in ("d", "I", "-"):
            segment = _read_segment(lines, index, MAX_FILES - file_count)
            if segment is not None:
                segments.append(segment)
                file_count += len(segment.files)
                index = segment.end
                continue
        index += 1
    return segments


def _read_segment(lines: list[str], start: int, max_files: int) -> _Segment | None:
    files: list[_FileRecord] = []
    index = start
    while len(files) < max_files:
        header = _read_header(lines, index)
        if header is None:
            break
        record, index = header
        index, complete = _read_hunks(lines, index, record)
        files.append(record)
        if not complete:
            break
    if not files:
        return None
    return _Segment(start, index, tuple(files))


def _read_header(lines: list[str], start: int) -> tuple[_FileRecord, int] | None:
    """Recognise a file header at `start`; return it and the index of its first hunk."""
    if start >= len(lines):
        return None
    line = lines[start]
    if line.startswith("diff --git "):
        return _read_git_header(lines, start)
    if line.startswith(("diff ", "Index: ")):
        return _read_other_header(lines, start)
    if line.startswith("--- "):
        return _read_unified_pair(lines, start, _FileRecord(git=False, header=line))
    return None


def _read_git_header(lines: list[str], start: int) -> tuple[_FileRecord, int] | None:
    record = _FileRecord(git=True, header=lines[start])
    names = paths.git_header_paths(lines[start][len("diff --git ") :])
    if names is not None:
        record.old_path, record.new_path = names
    index = start + 1
    limit = min(len(lines), start + MAX_HEADER_LINES)
    while index < limit and lines[index].startswith(_GIT_EXTENDED):
        _apply_extended(record, lines[index])
        index += 1
    following = lines[index] if index < len(lines) else ""
    if following.startswith("--- "):
        return _read_unified_pair(lines, index, record)
    if following.startswith("GIT binary patch"):
        record.binary = True
        return record, _skip_binary(lines, index + 1)
    if following.startswith("Binary files "):
        record.binary = True
        return record, index + 1
    if following.startswith("@@ -") or index > start + 1:
        return record, index
    return None


def _apply_extended(record: _FileRecord, line: str) -> None:
    """Take status and names from git's extended header lines."""
    keyword, _, value = line.partition(" ")
    if line.startswith("new file mode "):
        record.status = FileStatus.ADDED
    elif line.startswith("deleted file mode "):
        record.status = FileStatus.DELETED
    elif keyword in ("rename", "copy"):
        direction, _, path = value.partition(" ")
        if record.status is not FileStatus.COPIED:
            record.status = (
                FileStatus.RENAMED if keyword == "rename" else FileStatus.COPIED
            )
        if direction in ("from", "old"):
            record.old_path = path
        elif direction in ("to", "new"):
            record.new_path = path


def _read_other_header(lines: list[str], start: int) -> tuple[_FileRecord, int] | None:
    """``diff -u ...`` or ``Index: path`` + ``====``/``RCS file:``/... up to ``--- ``."""
    record = _FileRecord(git=False, header=lines[start])
    if lines[start].startswith("Index: "):
        record.named = lines[start][len("Index: ") :].strip()
        record.old_path = record.new_path = record.named
    limit = min(len(lines), start + MAX_HEADER_LINES)
    for index in range(start + 1, limit):
        line = lines[index]
        if line.startswith("--- "):
            return _read_unified_pair(lines, index, record)
        if line.startswith("RCS file: "):
            record.rcs = line[len("RCS file: ") :].strip()
            continue
        if line.startswith("Binary files "):
            record.binary = True
            return record, index + 1
        if not line.strip() or line.startswith(("diff --git ", "@@", "+", " ")):
            return None
    return None


def _read_unified_pair(
    lines: list[str], index: int, record: _FileRecord
) -> tuple[_FileRecord, int] | None:
    """``--- old`` + ``+++ new``; outside git headers a hunk header must follow."""
    if index + 1 >= len(lines) or not lines[index + 1].startswith("+++ "):
        return None
    following = lines[index + 2] if index + 2 < len(lines) else ""
    if not record.git and not (following.startswith("@@ -") and _HUNK.match(following)):
        return None
    old = paths.side_path(lines[index][4:])
    new = paths.side_path(lines[index + 1][4:])
    if record.status not in (FileStatus.RENAMED, FileStatus.COPIED):
        record.old_path, record.new_path = old, new
    if not record.git and _EPOCH.search(lines[index]):
        record.created = True
    return record, index + 2


def _skip_binary(lines: list[str], index: int) -> int:
    """Skip the ``literal``/``delta`` blocks of a GIT binary patch (forward, reverse)."""
    for _ in range(2):
        if index >= len(lines) or not lines[index].startswith(("literal ", "delta ")):
            break
        index += 1
        while index < len(lines) and _is_base85_line(lines[index]):
            index += 1
        if index < len(lines) and not lines[index]:
            index += 1  # the blank line that closes a block
    return index


def _is_base85_line(line: str) -> bool:
    """A line of git's base85: a length letter, then 5 characters per 4 bytes."""
    if not line or not ("A" <= line[0] <= "Z" or "a" <= line[0] <= "z"):
        return False
    size = ord(line[0]) - (ord("A") - 1 if line[0] <= "Z" else ord("a") - 27)
    return len(line) == 1 + 5 * ((size + 3) // 4)


def _read_hunks(lines: list[str], index: int, record: _FileRecord) -> tuple[int, bool]:
    """Read hunks; return (index after them, whether the diff may go on)."""
    while index < len(lines) and lines[index].startswith("@@ -"):
        match = _HUNK.match(lines[index])
        if match is None:
            return index, False
        old_count = 1 if match.group(2) is None else int(match.group(2))
        new_count = 1 if match.group(4) is None else int(match.group(4))
        if old_count == 0 and match.group(1) == "0" and not record.git:
            record.created = True
        index, complete = _read_hunk_body(
            lines, index + 1, old_count, new_count, record
        )
        if not complete:
            return index, False
        while index < len(lines) and lines[index].startswith("\\ "):
            index += 1  # "\ No newline at end of file" after the last line
    return index, True


def _read_hunk_body(
    lines: list[str], index: int, old: int, new: int, record: _FileRecord
) -> tuple[int, bool]:
    added, removed, end = record.added.append, record.removed.append, len(lines)
    while (old > 0 or new > 0) and index < end:
        line = lines[index]
        marker = line[:1]
        if marker == "+":
            new -= 1
            added(line[1:])
        elif marker == "-":
            old -= 1
            removed(line[1:])
        elif marker == " " or not line:
            # A blank line is a context line whose space a mailer stripped.
            old -= 1
            new -= 1
        elif marker != "\\":
            return index, False  # mangled or cut short: the diff ends here
        index += 1
    return index, old <= 0 and new <= 0


# --- commentary -----------------------------------------------------------------------


def _clean_commentary(lines: list[str], before_diff: bool) -> str:
    """Drop the signature, a list footer and (before a diff) the ``---`` + diffstat."""
    kept: list[str] = []
    for line in lines:
        if line == "-- " or _FOOTER.fullmatch(line):
            break
        kept.append(line)
    if before_diff:
        end = len(kept)
        while end and (not kept[end - 1].strip() or _DIFFSTAT.fullmatch(kept[end - 1])):
            end -= 1
        if end and kept[end - 1].rstrip() == "---":
            end -= 1
        kept = kept[:end]
    return "\n".join(kept).strip("\n").rstrip()[:MAX_BODY]


# --- public API -----------------------------------------------------------------------


def _split_lines(text: str) -> tuple[list[str], bool]:
    """Lines of `text` (LF only: a body mostly in CRLF is converted), and a final newline."""
    text = text[:MAX_SCAN]
    if "\r" in text and text.count("\r\n") * 2 >= text.count("\n"):
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    final_newline = len(lines) > 1 and lines[-1] == ""
    if final_newline:
        lines.pop()
    return lines, final_newline


def _segments_text(
    lines: list[str], segments: Sequence[_Segment], final_newline: bool
) -> str:
    pieces = []
    for segment in segments:
        piece = "\n".join(lines[segment.start : segment.end])
        if segment.end < len(lines) or final_newline:
            piece += "\n"
        pieces.append(piece)
    return "".join(pieces)[:MAX_DIFF]


def split_body(text: str) -> tuple[str, str | None]:
    """Return (commentary, diff text or None) for one text part of a mail.

    The commentary is the text before the first diff, without a signature, a mailing
    list footer, or (before a diff) the ``---`` line and diffstat. The diff text is the
    diff runs found, joined; text between and after them is not part of it.
    """
    lines, final_newline = _split_lines(text)
    segments = _scan(lines)
    if not segments:
        return _clean_commentary(lines, before_diff=False), None
    commentary = _clean_commentary(lines[: segments[0].start], before_diff=True)
    return commentary, _segments_text(lines, segments, final_newline)


def parse_diff(diff: str) -> Patch | None:
    """Parse the diffs in `diff` into a Patch (files, counts, patch-id), or None."""
    return _parse_diff(diff, None)


def parse_diff_with_lines(
    diff: str, *, patch_id: str | None = None, codec: str = ""
) -> tuple[Patch | None, ChangedLines]:
    """parse_diff() and diff_lines() of the same text, reading it once; `patch_id`,
    when the caller computed it already (git_diff_patch_id()). The lines are
    collapsed when first asked for: about half of all commits never are."""
    changed: list[tuple[str, _FileRecord]] = []
    return _parse_diff(diff, changed, patch_id, codec), ChangedLines(changed)


class ChangedLines(Mapping[str, tuple[list[str], list[str]]]):
    """diff_lines() of a parsed diff, made on first use."""

    __slots__ = ("_lines", "_records")

    def __init__(self, records: Sequence[tuple[str, _FileRecord]]) -> None:
        self._records = records
        self._lines: LinesByFile | None = None

    def _made(self) -> LinesByFile:
        if self._lines is None:
            lines: LinesByFile = {}
            for path, record in self._records:
                _collect_lines(lines, path, record)
            self._lines, self._records = lines, ()
        return self._lines

    def __getitem__(self, path: str) -> tuple[list[str], list[str]]:
        return self._made()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._made())

    def __len__(self) -> int:
        return len(self._made())

    def __repr__(self) -> str:
        return f"ChangedLines({self._made()!r})"


def _parse_diff(
    diff: str,
    changed: list[tuple[str, _FileRecord]] | None,
    patch_id: str | None = None,
    codec: str = "",
) -> Patch | None:
    lines, final_newline = _split_lines(diff)
    segments = _scan(lines)
    if not segments:
        return None
    text = _segments_text(lines, segments, final_newline)
    files_list: list[FileChange] = []
    for change, record in _changes(segments):
        files_list.append(change)
        if changed is not None:
            changed.append((change.path, record))
    files = tuple(files_list)
    return Patch(
        diff=text,
        files=files,
        added=sum(change.added for change in files),
        removed=sum(change.removed for change in files),
        patch_id=compute_patch_id(text, codec=codec) if patch_id is None else patch_id,
    )


def _file_change(record: _FileRecord) -> FileChange | None:
    old, new = paths.pair_paths(
        record.old_path,
        record.new_path,
        record.git,
        named=record.named,
        rcs=record.rcs,
    )
    status = record.status
    if status is FileStatus.MODIFIED and (old == "/dev/null" or record.created):
        status = FileStatus.ADDED
    elif status is FileStatus.MODIFIED and new == "/dev/null":
        status = FileStatus.DELETED
    path = old if status is FileStatus.DELETED else new
    if not path or path == "/dev/null":
        path = new if old in (None, "/dev/null") else old
    if not path or path == "/dev/null":
        return None
    return FileChange(
        path=path,
        old_path=old if status in (FileStatus.RENAMED, FileStatus.COPIED) else None,
        status=status,
        binary=record.binary,
        added=len(record.added),
        removed=len(record.removed),
    )


def diff_lines(diff: str) -> LinesByFile:
    """Per normalised path: (added lines, removed lines), whitespace-collapsed.

    Markers are dropped and lines that are blank after collapsing are left out, so the
    matcher's multiset similarity is not driven by blank lines.
    """
    lines, _ = _split_lines(diff)
    changes: LinesByFile = {}
    for change, record in _changes(_scan(lines)):
        _collect_lines(changes, change.path, record)
    return changes


def _changes(segments: Sequence[_Segment]) -> Iterator[tuple[FileChange, _FileRecord]]:
    """Each file a diff changes (with a path), and the record it was read into."""
    for segment in segments:
        for record in segment.files:
            change = _file_change(record)
            if change is not None:
                yield change, record


def _collect_lines(changes: LinesByFile, path: str, record: _FileRecord) -> None:
    added, removed = changes.setdefault(path, ([], []))
    added.extend(filter(None, map(_collapse, record.added)))
    removed.extend(filter(None, map(_collapse, record.removed)))


def _collapse(line: str) -> str:
    """Runs of whitespace as one space, none at the ends."""
    return " ".join(line.split())


def find_patch(
    texts: Sequence[str], *, codecs: Sequence[str] = ()
) -> tuple[str, Patch | None]:
    """Return (commentary of the first part, the Patch of all parts' diffs combined).

    `texts` are a message's text parts in order: the inline body first, then
    ``text/x-patch``/``.diff`` attachments, already decoded. The same diff carried by two
    parts (an inline copy and an attachment) is counted once. `codecs`, per text, is
    the codec that decoded it: the patch-id is taken on the diff in the codec of the
    first part that carries one, as git takes it on the bytes the files hold.
    """
    if not texts:
        return "", None
    commentary = ""
    diffs: list[str] = []
    codec = ""
    for position, text in enumerate(texts[:MAX_PARTS]):
        part_commentary, diff = split_body(text)
        if position == 0:
            commentary = part_commentary
        if diff is not None:
            diff = diff if diff.endswith("\n") else diff + "\n"
            if diff not in diffs:
                if not diffs and position < len(codecs):
                    codec = codecs[position]
                diffs.append(diff)
    if not diffs:
        return commentary, None
    patch, lines = parse_diff_with_lines("".join(diffs), codec=codec)
    return commentary, _weighed(patch, lines)


def file_weights(diff: str) -> dict[str, float]:
    """Per path of diff_lines(diff): the lines_weight() of its added and removed
    lines, summed side by side as the matcher sums them."""
    return {
        path: lines_weight(added)[1] + lines_weight(removed)[1]
        for path, (added, removed) in diff_lines(diff).items()
    }


def _weighed(patch: Patch | None, lines: Lines) -> Patch | None:
    """`patch` with each file's weight: the lines_weight() of its lines as the
    matcher will read them from the stored diff (diff_lines() of patch.diff, which
    gives what the one scan of the mail gave), so that it can bound a mail's
    similarity before reading its diff."""
    if patch is None:
        return None
    weights = {
        path: lines_weight(added)[1] + lines_weight(removed)[1]
        for path, (added, removed) in lines.items()
    }
    files = tuple(
        replace(change, weight=weights.get(change.path, 0.0)) for change in patch.files
    )
    return replace(patch, files=files)
