"""Paths in diffs: the one home of how a diff header names a file.

A diff names each file twice (``--- old`` and ``+++ new``), in the dialect of the
tool that made it: git's ``a/``/``b/`` prefixes and C-style quoting, ``diff -urN``
of two unpacked trees (``linux-2.6.10/`` vs ``linux/``), backup trees
(``linux.orig/``), timestamps and svn revisions after the name. This module turns
each into the repository-relative path a kernel developer would name.
"""

from __future__ import annotations

import re

MAX_PATH = 4096

_VERSIONED_DIR = re.compile(
    r"[A-Za-z][\w+]*(?:[-_][A-Za-z]\w*)*[-_]v?\d+(?:\.\d+)+[\w.+~-]*"
)
_BACKUP_DIR = re.compile(r"[\w+.-]*\w[._-](?:orig|old|new|vanilla|pristine|patched)")
_PATH_SUFFIX = re.compile(
    r"\s+(?:\((?:revision \d+|working copy|nonexistent)\)"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?: ?[+-]\d{4})?)\s*$"
)
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
