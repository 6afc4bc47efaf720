r"""``git patch-id --stable`` of a diff, as git 2.39 computes it, quirks included.

Mail diffs and commit diffs (git.repo feeds ``git log -p --full-index`` text to the
same functions) get ids that compare with each other and with git's own output.
The reader is a line-for-line emulation of git's state machine in
``builtin/patch-id.c`` (get_one_patchid): lines before the first ``diff `` are
skipped, a 40-hex line (after ``commit ``/``From ``) starts the next patch, hunk
headers set how many lines follow, ``index``, ``@@`` and ``\ No newline`` lines
are not hashed, whitespace is dropped, and with --stable each file's hash is summed
into the id so that the order of files does not matter.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

# Stored next to each id: git's own output changed in 2.36, 2.39 and 2.47.
PATCH_ID_ALGORITHM = "git-2.39-stable"
_UTF8 = frozenset({"utf_8", "utf-8", "utf8", "ascii", "us-ascii"})

_WHITESPACE = b" \t\n\r"  # git's isspace(): not \v or \f
_ALPHA = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_NEXT_PATCH = re.compile(rb"(?:commit |From )?[0-9a-fA-F]{40}")
_HUNK_MARKERS = frozenset(b"+- ")
_DIGITS = re.compile(rb"[0-9]*")
_ATOI = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def compute_patch_id(diff: str, *, codec: str = "") -> str | None:
    """Return ``git patch-id --stable`` (git 2.39) of `diff`, or None where git prints none.

    git prints no id when the text has no ``diff `` line. A line of 40 hex digits (after
    ``commit ``/``From ``) starts a new patch in git: before the first diff it is
    skipped, after it the patch ends there. Header-only diffs (renames, mode changes)
    get an id, as in git. `codec`, when the text was decoded from another charset
    (latin-1 mail), gives back the bytes git hashed in the author's tree.
    """
    if codec and codec not in _UTF8:
        try:
            return _PatchIdReader().read(diff.encode(codec))
        except (UnicodeEncodeError, LookupError):
            pass  # not all of it reads back: hash its UTF-8, as for any text
    try:
        data = diff.encode("utf-8")
    except UnicodeEncodeError:
        data = diff.encode(
            "utf-8", "surrogateescape" if _escapable(diff) else "replace"
        )
    return _PatchIdReader().read(data)


# Lines git's patch-id does not hash, in a diff git printed: blob ids, hunk headers,
# "\ No newline at end of file". In such a diff no hunk line starts like these.
_UNHASHED_LINE = re.compile(rb"^(?:index |@@ |\\).*\n?", re.MULTILINE)
_GIT_FILE_START = b"diff --git "


def git_diff_patch_id(data: bytes) -> str | None:
    """compute_patch_id() of a commit's diff as `git log -p` printed it, file by file
    with bytes operations instead of line by line; None for what this shortcut does
    not cover (binary files, NUL bytes, anything not shaped like git's own output),
    which the caller then gives to compute_patch_id().

    In git's output every file starts with ``diff --git``, every line up to the
    first blank one belongs to the patch, and the lines git skips are recognisable
    by their start alone; what remains is hashed without whitespace, one SHA-1 per
    file, summed (the ``--stable`` rule).
    """
    body = data.rstrip(b"\n")
    if (
        not body.startswith(_GIT_FILE_START)
        or b"\n\n" in body
        or b"\0" in body
        or b"\nBinary files " in body
        or b"\nGIT binary patch" in body
    ):
        return None
    total = 0
    pending: list[bytes] = []
    for number, section in enumerate(body.split(b"\n" + _GIT_FILE_START)):
        text = section if number == 0 else _GIT_FILE_START + section
        pending.append(_UNHASHED_LINE.sub(b"", text + b"\n"))
        # git ends a file's hash at the next "diff " only after hunks: the header of
        # a file without any (a pure rename, a mode change) goes into the next one's.
        if b"\n--- " in text:
            total += _file_sum(pending)
            pending = []
    if pending:
        total += _file_sum(pending)
    return (total % (1 << 160)).to_bytes(20, "little").hex()


def _file_sum(texts: list[bytes]) -> int:
    hashed = b"".join(texts).translate(None, _WHITESPACE)
    return int.from_bytes(hashlib.sha1(hashed).digest(), "little")


def _escapable(text: str) -> bool:
    try:
        text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return True


def _c_lines(data: bytes) -> Iterator[tuple[bytes, int]]:
    """Yield (line without newline, 1 if it had one): git reads C strings, cut at NUL."""
    lines = data.split(b"\n")
    last = lines.pop()
    has_nul = b"\0" in data
    for line in lines:
        yield (line.split(b"\0", 1)[0], 0) if has_nul and b"\0" in line else (line, 1)
    if last:
        yield last.split(b"\0", 1)[0], 0


def _lf_lines(data: bytes) -> list[tuple[bytes, int]]:
    """_c_lines() of text without NUL bytes, as one list (the common, faster case)."""
    lines = data.split(b"\n")
    last = lines.pop()
    pairs = [(line, 1) for line in lines]
    if last:
        pairs.append((last, 0))
    return pairs


@dataclass(slots=True)
class _PatchIdReader:
    """git 2.39 builtin/patch-id.c get_one_patchid() with stable=1, as a state machine."""

    before: int = -1
    after: int = -1
    binary: bool = False
    seen_diff: bool = False
    result: int = 0
    old_id: bytes = b""
    new_id: bytes = b""
    pending: list[bytes | _Raw] = field(
        default_factory=list
    )  # hashed once whitespace is gone

    def read(self, data: bytes) -> str | None:  # noqa: C901 - hunk lines inlined for speed
        pending = self.pending
        for line, newline in _c_lines(data) if b"\0" in data else _lf_lines(data):
            first = line[0] if line else -1
            # Inside a hunk body, the common case, without the general checks.
            if (self.before > 0 or self.after > 0) and not self.binary:
                if first == 0x2D:  # "-"
                    self.before -= 1
                    pending.append(line)
                    continue
                if first == 0x2B:  # "+"
                    self.after -= 1
                    pending.append(line)
                    continue
                if first == 0x20:  # " "
                    self.before -= 1
                    self.after -= 1
                    pending.append(line)
                    continue
            if first not in _HUNK_MARKERS:
                if (
                    first == 0x5C
                    and line.startswith(b"\\ ")
                    and len(line) + newline > 12
                ):
                    continue  # "\ No newline at end of file"
                if _NEXT_PATCH.match(line):
                    if self.seen_diff:
                        break
                    continue
            if not self.seen_diff and not line.startswith(b"diff "):
                continue  # the commit message, and the "---" + diffstat of a mail
            if not self._line(line, newline):
                break
        self._flush()
        if not self.seen_diff:
            return None
        return self.result.to_bytes(20, "little").hex()

    def _line(self, line: bytes, newline: int) -> bool:  # noqa: C901 - one state machine, as in git
        """Handle one line after the prefix checks; False ends the patch."""
        if self.before == -1:
            if line.startswith((b"GIT binary patch", b"Binary files")):
                self.binary = True
                self.before = 0
                self.pending.append(_Raw(self.old_id + self.new_id))
                self._flush()
                return True
            if line.startswith(b"index "):
                self._remember_ids(line, newline)
                return True
            if line.startswith(b"--- "):
                self.before = self.after = 1
            elif not line or line[0] not in _ALPHA:
                return False
        if self.binary:
            if line.startswith(b"diff "):
                self.binary = False
                self.before = -1
            return True
        if self.before == 0 and self.after == 0:
            if line.startswith(b"@@ -"):
                self.before, self.after = _scan_hunk_header(
                    line + b"\n" * newline, self.before, self.after
                )
                return True
            if not line.startswith(b"diff "):
                return False
            self._flush()
            self.before = self.after = -1
        first = line[:1]
        if first == b"-" or first == b" ":
            self.before -= 1
        if first == b"+" or first == b" ":
            self.after -= 1
        self.pending.append(line)
        self.seen_diff = True
        return True

    def _remember_ids(self, line: bytes, newline: int) -> None:
        """``index a..b mode``: keep a and b (hashed for binary files), as git cuts them."""
        dots = line.find(b"..")
        if dots < 0:
            return
        space = line.find(b" ", dots)
        end = space if space >= 0 else len(line) + newline - 1
        self.old_id = line[6:dots][:64]
        self.new_id = line[dots + 2 : end][:64]

    def _flush(self) -> None:
        """Finish one file's SHA-1 and add it as a 160-bit little-endian number."""
        sha = hashlib.sha1()
        text: list[bytes] = []
        for piece in self.pending:
            if isinstance(piece, _Raw):
                sha.update(b"".join(text).translate(None, _WHITESPACE))
                sha.update(piece.data)
                text = []
            else:
                text.append(piece)
        sha.update(b"".join(text).translate(None, _WHITESPACE))
        self.pending.clear()
        self.result = (self.result + int.from_bytes(sha.digest(), "little")) % (
            1 << 160
        )


class _Raw(NamedTuple):
    """Bytes git hashes as they are (the blob ids of a binary file)."""

    data: bytes


def _scan_hunk_header(line: bytes, before: int, after: int) -> tuple[int, int]:
    """git's scan_hunk_header(): counts after ``@@ -``; may set one and fail on the other."""
    position = 4
    digits = _digit_run(line, position)
    if line[position + digits : position + digits + 1] == b",":
        position += digits + 1
        before = _atoi(line, position)
        digits = _digit_run(line, position)
    else:
        before = 1
    if digits == 0 or line[position + digits : position + digits + 2] != b" +":
        return before, after
    position += digits + 2
    digits = _digit_run(line, position)
    if line[position + digits : position + digits + 1] == b",":
        position += digits + 1
        after = _atoi(line, position)
    else:
        after = 1
    return before, after


def _digit_run(line: bytes, position: int) -> int:
    match = _DIGITS.match(line, position)
    return match.end() - position if match else 0


def _atoi(line: bytes, position: int) -> int:
    """C atoi() as glibc does it: strtol clamped to long, then cut to a 32-bit int."""
    match = _ATOI.match(line, position)
    if not match:
        return 0
    value = max(-(1 << 63), min((1 << 63) - 1, int(match.group(1))))
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value
