"""The diff side of a mail or commit: find the diff, parse it, compute its patch-id.

This module owns three things, all pure functions on ``str``:

- *Where the diff is* (`split_body`, `find_patch`): a line scanner that recognises git
  diffs, plain ``diff -u`` and ``--- a``/``+++ b`` diffs, CVS/SVN ``Index:`` diffs,
  renames, mode-only changes, new empty files and ``GIT binary patch`` blocks, and that
  ends a diff where its hunk lines stop (signature, list footer, trailing commentary).
  Quoted diffs in replies (``> +foo``) never start at column 0, so they are not diffs.
- *What the diff changes* (`parse_diff`, `diff_lines`, `normalise_path`): files with
  normalised paths, status, +/- counts, and the changed lines for the matcher.
- *Its patch-id* (`compute_patch_id`): a line-for-line emulation of
  ``git patch-id --stable`` as git 2.39 computes it, quirks included, so that ids of
  mails and of commits (git.repo feeds ``git log -p --full-index`` text to the
  same function) compare with each other and with git's own output.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from e2g.model import (
    MAX_BODY,
    MAX_DIFF,
    MAX_FILES,
    FileChange,
    FileStatus,
    Patch,
    lines_weight,
)

# Stored next to each id: git's own output changed in 2.36, 2.39 and 2.47.
PATCH_ID_ALGORITHM = "git-2.39-stable"

MAX_SCAN = MAX_DIFF + MAX_BODY  # characters of one text part that we look at
MAX_PATH = 4096
MAX_HEADER_LINES = 24  # lines between a file's first header line and its hunks
MAX_SEGMENTS = 1000  # separate diff runs in one text
MAX_PARTS = 64  # text parts of one message that may carry diffs

# Per normalised path: (added lines, removed lines), as diff_lines() gives them.
LinesByFile = dict[str, tuple[list[str], list[str]]]
# The same, read-only: a LinesByFile or ChangedLines.
Lines = Mapping[str, tuple[list[str], list[str]]]

_HUNK = re.compile(r"@@ -(\d{1,10})(?:,(\d{1,10}))? \+(\d{1,10})(?:,(\d{1,10}))? @@")
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
_VERSIONED_DIR = re.compile(
    r"[A-Za-z][\w+]*(?:[-_][A-Za-z]\w*)*[-_]v?\d+(?:\.\d+)+[\w.+~-]*"
)
_BACKUP_DIR = re.compile(r"[\w+.-]*\w[._-](?:orig|old|new|vanilla|pristine|patched)")
_PATH_SUFFIX = re.compile(
    r"\s+(?:\((?:revision \d+|working copy|nonexistent)\)"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?: ?[+-]\d{4})?)\s*$"
)
_EPOCH = re.compile(r"\t(?:1970-01-01|1969-12-31|Thu Jan  1 )")
_C_ESCAPES = {
    "a": 7,
    "b": 8,
    "t": 9,
    "n": 10,
    "v": 11,
    "f": 12,
    "r": 13,
    '"': 34,
    "\\": 92,
}


# --- paths ----------------------------------------------------------------------------


def normalise_path(path: str) -> str:
    """Return the repository-relative form of a path from a diff header.

    Unquotes git's C-style quoted paths, strips ``a/``/``b/`` and ``./`` prefixes and an
    old-style tree directory (``linux-2.6.10/``, ``linux.orig/``); ``/dev/null`` stays.
    The result is a fixed point, so the function is idempotent.
    """
    current = path[:MAX_PATH]
    # Each step makes the path shorter, so this ends within len(current) steps.
    for _ in range(len(current) + 1):
        shorter = _normalise_step(current)
        if shorter == current:
            break
        current = shorter
    return current


def unquote_path(name: str) -> str:
    """A path as git prints it outside a diff (`--numstat`, `--name-only`): C-quoted
    when it holds unusual bytes, never with an ``a/``/``b/`` prefix."""
    name = name[:MAX_PATH]
    if len(name) >= 2 and name[0] == '"' and name[-1] == '"':
        return _unquote(name[1:-1])
    return name


def _normalise_step(path: str) -> str:
    stripped = path.strip()
    if stripped != path or stripped == "/dev/null":
        return stripped
    if len(path) >= 2 and path[0] == '"' and path[-1] == '"':
        return _unquote(path[1:-1])
    if path.startswith(("a/", "b/", "./")):
        return path[2:]
    top, slash, rest = path.partition("/")
    if slash and rest and looks_like_tree_dir(top):
        return rest
    return path


def looks_like_tree_dir(name: str) -> bool:
    """True for a top directory of an unpacked tree: linux-2.6.10, linux.orig, foo-new."""
    return bool(_VERSIONED_DIR.fullmatch(name) or _BACKUP_DIR.fullmatch(name))


def _unquote(quoted: str) -> str:
    """Undo git's C-style quoting; octal escapes are UTF-8 bytes."""
    if "\\" not in quoted:
        return quoted
    data = bytearray()
    index = 0
    while index < len(quoted):
        char = quoted[index]
        following = quoted[index + 1 : index + 2]
        if char != "\\" or not following:
            data += char.encode("utf-8", "surrogatepass")
            index += 1
        elif following in _C_ESCAPES:
            data.append(_C_ESCAPES[following])
            index += 2
        elif re.fullmatch(r"[0-3][0-7]{2}", quoted[index + 1 : index + 4]):
            data.append(int(quoted[index + 1 : index + 4], 8))
            index += 4
        else:
            data += following.encode("utf-8", "surrogatepass")
            index += 2
    return data.decode("utf-8", "replace")


def _side_path(text: str) -> str:
    """The path on a ``--- ``/``+++ `` line: without timestamps or svn revisions."""
    if text.startswith('"'):
        end = _closing_quote(text)
        if end > 0:
            return text[: end + 1]
    path = text.split("\t", 1)[0]
    return _PATH_SUFFIX.sub("", path).rstrip()


def _closing_quote(text: str) -> int:
    index = 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return index
        index += 1
    return -1


def _git_header_paths(rest: str) -> tuple[str, str] | None:
    """Split the names on a ``diff --git`` line (quoted, or two equal names)."""
    if rest.startswith('"'):
        end = _closing_quote(rest)
        if end > 0 and rest[end + 1 : end + 2] == " ":
            return rest[: end + 1], rest[end + 2 :]
        return None
    if rest.endswith('"'):
        start = rest.rfind(' "')
        if start > 0:
            return rest[:start], rest[start + 1 :]
    # Without a rename both names are equal after their first component.
    middle = len(rest) // 2
    if rest[middle : middle + 1] == " ":
        old, new = rest[:middle], rest[middle + 1 :]
        if old.partition("/")[2] == new.partition("/")[2] or old == new:
            return old, new
    for separator in (" b/", " "):
        position = rest.find(separator)
        if position > 0:
            return rest[:position], rest[position + 1 :]
    return None


def _pair_paths(
    old: str | None, new: str | None, git: bool
) -> tuple[str | None, str | None]:
    """Normalise both sides; in non-git diffs drop the tree directories first (-p1)."""
    if old is not None and new is not None and not git and _tree_pair(old, new):
        old, new = old.partition("/")[2], new.partition("/")[2]
    return (
        None if old is None else normalise_path(old),
        None if new is None else normalise_path(new),
    )


def _tree_pair(old: str, new: str) -> bool:
    """A diff of two unpacked trees: linux-2.6.10/x vs linux/x, or linux/x.orig vs linux/x."""
    if "/dev/null" in (old, new):
        return False
    old_top, old_slash, old_rest = old.partition("/")
    new_top, new_slash, new_rest = new.partition("/")
    if not (old_slash and new_slash and old_rest and new_rest):
        return False
    if old_top != new_top:
        return old_rest == new_rest
    return old_top == "linux"  # a kernel tree has no top-level linux/ directory


# --- patch-id -------------------------------------------------------------------------

_WHITESPACE = b" \t\n\r"  # git's isspace(): not \v or \f
_ALPHA = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_NEXT_PATCH = re.compile(rb"(?:commit |From )?[0-9a-fA-F]{40}")
_HUNK_MARKERS = frozenset(b"+- ")
_DIGITS = re.compile(rb"[0-9]*")
_ATOI = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def compute_patch_id(diff: str) -> str | None:
    """Return ``git patch-id --stable`` (git 2.39) of `diff`, or None where git prints none.

    git prints no id when the text has no ``diff `` line. A line of 40 hex digits (after
    ``commit ``/``From ``) starts a new patch in git: before the first diff it is
    skipped, after it the patch ends there. Header-only diffs (renames, mode changes)
    get an id, as in git.
    """
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


@dataclass(frozen=True, slots=True)
class _Raw:
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
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Segment:
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
    names = _git_header_paths(lines[start][len("diff --git ") :])
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
        record.old_path = record.new_path = lines[start][len("Index: ") :].strip()
    limit = min(len(lines), start + MAX_HEADER_LINES)
    for index in range(start + 1, limit):
        line = lines[index]
        if line.startswith("--- "):
            return _read_unified_pair(lines, index, record)
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
    old = _side_path(lines[index][4:])
    new = _side_path(lines[index + 1][4:])
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
    diff: str, *, patch_id: str | None = None
) -> tuple[Patch | None, ChangedLines]:
    """parse_diff() and diff_lines() of the same text, reading it once; `patch_id`,
    when the caller computed it already (git_diff_patch_id()). The lines are
    collapsed when first asked for: about half of all commits never are."""
    changed: list[tuple[str, _FileRecord]] = []
    return _parse_diff(diff, changed, patch_id), ChangedLines(changed)


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
        patch_id=compute_patch_id(text) if patch_id is None else patch_id,
    )


def _file_change(record: _FileRecord) -> FileChange | None:
    old, new = _pair_paths(record.old_path, record.new_path, record.git)
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


def find_patch(texts: Sequence[str]) -> tuple[str, Patch | None]:
    """Return (commentary of the first part, the Patch of all parts' diffs combined).

    `texts` are a message's text parts in order: the inline body first, then
    ``text/x-patch``/``.diff`` attachments, already decoded. The same diff carried by two
    parts (an inline copy and an attachment) is counted once.
    """
    if not texts:
        return "", None
    commentary = ""
    diffs: list[str] = []
    for position, text in enumerate(texts[:MAX_PARTS]):
        part_commentary, diff = split_body(text)
        if position == 0:
            commentary = part_commentary
        if diff is not None:
            diff = diff if diff.endswith("\n") else diff + "\n"
            if diff not in diffs:
                diffs.append(diff)
    if not diffs:
        return commentary, None
    return commentary, _weighed(parse_diff("".join(diffs)))


def file_weights(diff: str) -> dict[str, float]:
    """Per path of diff_lines(diff): the lines_weight() of its added and removed
    lines, summed side by side as the matcher sums them."""
    return {
        path: lines_weight(added)[1] + lines_weight(removed)[1]
        for path, (added, removed) in diff_lines(diff).items()
    }


def _weighed(patch: Patch | None) -> Patch | None:
    """`patch` with each file's weight: the lines_weight() of its lines as the
    matcher will read them from the stored diff (diff_lines() of patch.diff), so
    that it can bound a mail's similarity before reading its diff."""
    if patch is None:
        return None
    weights = file_weights(patch.diff)
    files = tuple(
        replace(change, weight=weights.get(change.path, 0.0)) for change in patch.files
    )
    return replace(patch, files=files)
