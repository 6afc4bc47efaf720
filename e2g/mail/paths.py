"""Paths in diffs: the one home of how a diff header names a file.

A diff names each file twice (``--- old`` and ``+++ new``), in the dialect of the
tool that made it: git's ``a/``/``b/`` prefixes and C-style quoting, ``diff -urN``
of two unpacked trees (``linux-2.6.10/`` vs ``linux/``), backup trees
(``linux.orig/``), absolute paths into a checkout (``/usr/src/linux-2.4.18/``),
BitKeeper's ``bk diffs`` (``1.24/fs/ufs/namei.c`` vs ``edited/namei.c``), CVS's
``Index:`` and ``RCS file:`` lines, timestamps and revisions after the name (even
when a mailer turned the tab before them into spaces). This module turns each into
the repository-relative path a kernel developer would name.

Outside git a diff cannot express a rename, so both sides name one file: which side
(or the ``Index:`` line) names it best is decided here, in `file_path`.
"""

from __future__ import annotations

import re

MAX_PATH = 4096

_VERSIONED_DIR = re.compile(
    r"[A-Za-z][\w+]*(?:[-_][A-Za-z]\w*)*[-_]v?\d+(?:\.\d+)+[\w.+~-]*"
)
_BACKUP_DIR = re.compile(r"[\w+.-]*\w[._-](?:orig|old|new|vanilla|pristine|patched)")
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_TIME = r"\d\d?:\d\d(?::\d\d(?:\.\d+)?)?"
_ZONE = r"(?:[+-]\d\d:?\d\d|[A-Z]{3,5})"
# The date stamps diff tools write after a path: diff's ctime style ("Thu Feb  7
# 19:25:52 2002"), CVS/RCS ("29 Jul 2003 17:02:27 -0000", then the file's revision),
# ISO ("2005-01-07 12:00:00.000000000 +0100"; bk writes the zone as "+01:00"). The
# tab before a stamp is where a path ends, but mailers turn tabs into spaces, so a
# stamp is recognised by its shape: a path never ends in one.
_STAMP = (
    rf"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),?\s+{_MONTH}\s+\d\d?\s+{_TIME}"
    rf"(?:\s+{_ZONE})?\s+\d{{4}}(?:\s+{_ZONE})?"
    rf"|\d\d?\s+{_MONTH}\s+\d{{4}}\s+{_TIME}(?:\s+{_ZONE})?(?:\s+\d+(?:\.\d+)+)?"
    rf"|\d{{4}}[-/]\d\d[-/]\d\d[ T]{_TIME}(?:\s*{_ZONE})?"
)
_PATH_SUFFIX = re.compile(
    rf"\s+(?:\((?:revision \d+|working copy|nonexistent)\)|{_STAMP})\s*$"
)
# bk diffs writes the old side as REV/path ("1.24/fs/ufs/namei.c", the file at
# revision 1.24); a tree unpacked under its bare version ("2.4.5/", "v2.4.5/") looks
# the same. Either is a prefix, never a directory of the repository.
_REVISION_DIR = re.compile(r"v?\d+(?:\.\d+)+")
# Where people put the copy they edited or compared against: BitKeeper's edited/,
# scratch directories, and backup suffixes on the file itself.
_SCRATCH_DIRS = frozenset({"edited", "new", "old", "tmp", "temp", "orig"})
_BACKUP_SUFFIXES = ("~", ".orig", ".old", ".new", ".bak", ".save", ".tmp")
# A kernel checkout is often just "linux" (/usr/src/linux): in an absolute path it
# marks the tree's root as surely as linux-2.4.18 does.
_KERNEL_TREE = "linux"
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
    if "/./" in path:
        return path.replace("/./", "/")  # bk diffs run in a subdirectory: edited/./x.c
    if path.startswith("/"):
        return _below_tree(path)
    top, slash, rest = path.partition("/")
    if slash and rest and looks_like_tree_dir(top):
        return rest
    return path


def _below_tree(path: str) -> str:
    """An absolute path into someone's checkout (/usr/src/linux-2.4.18/mm/slab.c):
    the repository path starts below its tree directory. Without one (/tmp/slab.c)
    the path stays absolute, and `is_scratch` says it names no file of the tree."""
    parts = path.split("/")
    for position, part in enumerate(parts[1:-1], start=1):
        if part == _KERNEL_TREE or looks_like_tree_dir(part):
            return "/".join(parts[position + 1 :])
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


def side_path(text: str) -> str:
    """The path on a ``--- ``/``+++ `` line: without timestamps or svn revisions."""
    if text.startswith('"'):
        end = closing_quote(text)
        if end > 0:
            return text[: end + 1]
    path = text.split("\t", 1)[0]
    return _PATH_SUFFIX.sub("", path).rstrip()


def closing_quote(text: str) -> int:
    index = 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return index
        index += 1
    return -1


def git_header_paths(rest: str) -> tuple[str, str] | None:
    """Split the names on a ``diff --git`` line (quoted, or two equal names)."""
    if rest.startswith('"'):
        end = closing_quote(rest)
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


def pair_paths(
    old: str | None,
    new: str | None,
    git: bool,
    *,
    named: str | None = None,
    rcs: str | None = None,
) -> tuple[str | None, str | None]:
    """Normalise both sides of one file's header.

    A git diff's sides may differ (renames, copies), so each is normalised alone.
    Other diffs have no renames: both sides get the one path `file_path` chooses
    (`named` is the ``Index:`` line's path, `rcs` the ``RCS file:`` line's), and a
    /dev/null side stays /dev/null, as it says the file was added or deleted.
    """
    if git:
        return _normalised(old), _normalised(new)
    path = file_path(old, new, named=named, rcs=rcs)
    if path is None:
        return _normalised(old), _normalised(new)
    return _one_path(old, path), _one_path(new, path)


def _normalised(path: str | None) -> str | None:
    return None if path is None else normalise_path(path)


def _one_path(side: str | None, path: str) -> str | None:
    if side is None:
        return None
    return "/dev/null" if side.strip() == "/dev/null" else path


def file_path(
    old: str | None,
    new: str | None,
    *,
    named: str | None = None,
    rcs: str | None = None,
) -> str | None:
    """The path of the file a non-git diff changes, from its two sides and, for CVS,
    svn and quilt diffs, the ``Index:`` and ``RCS file:`` lines; None without any.

    In order (each rule says why next to it): a side that is the Index: name plus
    junk is the Index: name; a bk revision prefix goes; a scratch copy (/tmp/x.c,
    edited/x.c, x.c.orig) loses to a tree path; two trees (-p1) leave the path
    below them; of x.c and x.c.fixed the shorter wins; the Index: name stands in
    when no side is a tree path; the new side wins a tie, as patch(1) would create
    it; a fuller RCS file: path wins last.
    """
    sides = [
        _without_revision(_as_named(side, named))
        for side in (new, old)
        if side is not None and side.strip() != "/dev/null"
    ]
    path = _chosen(sides, named)
    return _fuller_from_rcs(path, rcs) if path is not None and rcs else path


def _as_named(side: str, named: str | None) -> str:
    """``Index:`` names the file (CVS, svn, quilt write it whole on its own line), so
    a side that reads as that name plus more, after whitespace, is that name: the
    more is a date or revision that lost its tab."""
    if named and side.startswith(named) and side[len(named) : len(named) + 1].isspace():
        return named
    return side


def _without_revision(side: str) -> str:
    top, slash, rest = side.partition("/")
    if slash and rest and _REVISION_DIR.fullmatch(top):
        return rest
    return side


def _chosen(sides: list[str], named: str | None) -> str | None:
    """`sides` are [new, old] without /dev/null (new first: it wins a tie)."""
    normalised = [normalise_path(side) for side in sides]
    scratch = [is_scratch(path) for path in normalised]
    if len(sides) == 2 and scratch[0] != scratch[1]:
        # One side is a copy (/tmp/x.c, edited/x.c), the other names the tree's file.
        return _below_kernel_tree(normalised[scratch.index(False)])
    if len(sides) == 2 and _tree_pair(sides[1], sides[0]):
        # Two unpacked trees, diffed with diff -urN: strip both (patch -p1).
        return normalise_path(sides[0].partition("/")[2])
    candidates = list(dict.fromkeys(normalised))
    real = [path for path in candidates if not is_scratch(path)]
    index = normalise_path(named) if named else None
    if len(real) == 2 and (copied := _copy_of(real[0], real[1])) is not None:
        return copied
    if real:
        # Both sides are tree paths and disagree: the one Index: names, else new.
        return index if index in real else real[0]
    if index and not is_scratch(index):
        return index
    return candidates[0] if candidates else index


def _below_kernel_tree(path: str) -> str:
    """A lone tree path beside a scratch copy (linux/fs/x.c vs /tmp/x.c): no second
    tree path shows where its tree starts, but a kernel tree has no top-level
    linux/ directory (see _tree_pair), so one is the tree itself."""
    top, slash, rest = path.partition("/")
    return rest if slash and rest and top == _KERNEL_TREE else path


def _copy_of(first: str, second: str) -> str | None:
    """Of x.c and x.c.fixed (x.c.mine, and akpm's patch-scripts' x.c~patch-name:
    any suffix past the backup names is_scratch knows), the shorter is the file and
    the longer a copy of it."""
    short, long = sorted((first, second), key=len)
    suffix = long[len(short) :]
    if long.startswith(short) and suffix[:1] in (".", "~") and "/" not in suffix:
        return short
    return None


def is_scratch(path: str) -> bool:
    """A path that names a copy, not the file in the tree: an absolute path outside
    any recognisable tree (/tmp/x.c), BitKeeper's edited/ or another scratch
    directory, or a backup suffix (x.c.orig, x.c~). When one side of a diff is such
    a copy and the other is a tree path, the tree path names the file."""
    if path.startswith("/") and path != "/dev/null":
        return True
    top, slash, _ = path.partition("/")
    return bool(slash and top in _SCRATCH_DIRS) or path.endswith(_BACKUP_SUFFIXES)


def _fuller_from_rcs(path: str, rcs: str) -> str:
    """CVS's ``RCS file: /cvsroot/linux-2.5/arch/s390/kernel/ptrace.c,v`` names the
    file in the repository even when ``cvs diff`` ran in a subdirectory and the
    diff says only ``ptrace.c``. Below the module's tree directory it is the path,
    if it ends with the one the diff gives. Files removed on CVS's trunk live in an
    Attic/ directory that is not part of their path."""
    name = rcs.strip().removesuffix(",v")
    directory, _, base = name.rpartition("/")
    if directory.endswith("/Attic"):
        name = f"{directory.removesuffix('/Attic')}/{base}"
    fuller = normalise_path(name)
    if fuller.startswith("/") or not (fuller == path or fuller.endswith("/" + path)):
        return path
    return fuller


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
