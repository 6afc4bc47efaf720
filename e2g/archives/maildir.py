"""Readers for archives that are many files: Maildir and plain directories of mail.

Owns listing those files in a stable order and the file-sequence checkpoint shared with
archives.pipermail. Each file is read by archives.mbox (an mbox, or one .eml message).

Checkpoint: {"done": n, "digest": ..., "file": name, "inner": token}. `done` files were
read completely and `digest` hashes their names (and, for directories, sizes); `file`
is the next one, read up to its own mbox `inner` token. On resume the listing must still
start with those same n files, else reading restarts from the first file. A "last name
read" token alone would silently skip a new file whose name sorts before it (Maildir
names from another host or a skewed clock); the digest turns that into a full re-read,
which is safe because ingest is idempotent by Message-ID. Sizes catch an earlier mbox
that grew; Maildir messages never change, and their names are enough.

Maildir: cur/ and new/ (tmp/ holds deliveries in progress and is ignored). A message's
key is its unique name without the ":2,flags" info, so marking it seen or moving it from
new/ to cur/ does not change its place in the order.

Directories: *.eml, *.mbox, *.mbx, *.txt, each optionally .gz/.xz/.bz2/.zst, found by
an explicit-stack walk (hidden entries and symlinked directories are skipped, so a
symlink loop cannot trap it), sorted by relative path. Files that turn out not to be
mail are skipped with a log line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from e2g.archives.compression import SUFFIXES, read_head
from e2g.archives.mbox import (
    MAX_RAW_MESSAGE,
    MESSAGE,
    classify_head,
    read_mbox,
    read_message_file,
    split_from_line,
)
from e2g.errors import ArchiveUnreadable, notice
from e2g.model.mail import Origin, RawMessage

log = logging.getLogger(__name__)

MAIL_SUFFIXES = (".eml", ".mbox", ".mbx", ".txt")
MAILDIR_PARTS = ("cur", "new")
_VERSION = 1


class FileEntry(NamedTuple):
    """One file of a sequence, in reading order."""

    relative: str  # path below the archive root, "/"-separated: Origin.position
    path: Path
    identity: str  # what the checkpoint digest hashes: stable name (+ size)


Reader = Callable[[FileEntry, str | None], Iterator[tuple[RawMessage, str | None]]]


def read_file_sequence(
    entries: Sequence[FileEntry], read_entry: Reader, *, checkpoint: str | None
) -> Iterator[tuple[RawMessage, str]]:
    """Messages of each entry in order; read_entry gets the entry's inner token.

    An inner token of None after a message means the entry is finished.
    """
    done, digest, inner = _resume_point(entries, checkpoint)
    for index in range(done, len(entries)):
        entry = entries[index]
        for message, token in read_entry(entry, inner if index == done else None):
            if token is None:
                finished = digest.copy()
                finished.update(_identity_bytes(entry))
                yield message, _encode(index + 1, finished, None, None)
            else:
                yield message, _encode(index, digest, entry.relative, token)
        digest.update(_identity_bytes(entry))


def _identity_bytes(entry: FileEntry) -> bytes:
    return os.fsencode(entry.identity) + b"\0"


def _new_digest() -> hashlib.blake2b:
    return hashlib.blake2b(digest_size=16)


def _encode(
    done: int, digest: hashlib.blake2b, file: str | None, inner: str | None
) -> str:
    state = {"v": _VERSION, "done": done, "digest": digest.hexdigest()}
    return json.dumps(state | {"file": file, "inner": inner}, separators=(",", ":"))


def _resume_point(
    entries: Sequence[FileEntry], checkpoint: str | None
) -> tuple[int, hashlib.blake2b, str | None]:
    """(files to skip, digest of them, inner token for the next one)."""
    state = _decode(checkpoint)
    if state is None:
        return 0, _new_digest(), None
    done, expected, file, inner = state
    digest = _new_digest()
    for entry in entries[:done]:
        digest.update(_identity_bytes(entry))
    if done <= len(entries) and digest.hexdigest() == expected:
        if file is None:
            return done, digest, None
        if done < len(entries) and entries[done].relative == file:
            return done, digest, inner
    log.info("the file list changed since the checkpoint; reading from the first file")
    return 0, _new_digest(), None


def _decode(checkpoint: str | None) -> tuple[int, str, str | None, str | None] | None:
    if checkpoint is None:
        return None
    try:
        state = json.loads(checkpoint)
        done, digest = state["done"], state["digest"]
        file, inner = state.get("file"), state.get("inner")
    except (ValueError, TypeError, KeyError):
        return None
    typed = isinstance(done, int) and isinstance(digest, str)
    optional = all(value is None or isinstance(value, str) for value in (file, inner))
    if state.get("v") != _VERSION or not typed or not optional or done < 0:
        return None
    return done, digest, file, inner


def is_maildir(path: Path) -> bool:
    return any((path / part).is_dir() for part in MAILDIR_PARTS)


def list_maildir(path: Path) -> list[FileEntry]:
    """Messages of cur/ and new/, ordered by unique name (without the info part)."""
    found: dict[str, FileEntry] = {}
    for part in MAILDIR_PARTS:
        folder = path / part
        if not folder.is_dir():
            continue
        with os.scandir(folder) as scan:
            for item in scan:
                if item.name.startswith(".") or not item.is_file():
                    continue
                key = _maildir_key(item.name)
                found.setdefault(
                    key, FileEntry(f"{part}/{item.name}", Path(item.path), key)
                )
    return [found[key] for key in sorted(found)]


def _maildir_key(name: str) -> str:
    # "1700000000.M1P2.host:2,S": the info after ":" (or "!" where ":" is not allowed
    # in file names) changes with flags; the part before it is the message.
    for separator in (":", "!"):
        if separator in name:
            return name.partition(separator)[0]
    return name


def read_maildir(
    path: Path, *, source: str, list_hint: str | None = None, checkpoint: str | None
) -> Iterator[tuple[RawMessage, str]]:
    """Messages of a Maildir, each with the checkpoint token after it."""

    def read_entry(
        entry: FileEntry, inner: str | None
    ) -> Iterator[tuple[RawMessage, None]]:
        data = _read_moved(path, entry)
        if data is None:
            log.warning(
                "%s: %s vanished while reading; skipped", path.name, entry.relative
            )
            return
        from_line, data = split_from_line(data)
        yield (
            RawMessage(data, Origin(source, entry.relative, list_hint), from_line),
            None,
        )

    return read_file_sequence(list_maildir(path), read_entry, checkpoint=checkpoint)


def _read_moved(root: Path, entry: FileEntry) -> bytes | None:
    """A Maildir file's bytes (bounded), found again if a mail client renamed it."""
    for candidate in _candidates(root, entry):
        try:
            with candidate.open("rb") as file:
                data = file.read(MAX_RAW_MESSAGE)
                if file.read(1):
                    log.warning("%s is too long: keeping its start only", candidate)
                return data
        except FileNotFoundError:
            continue
    return None


def _candidates(root: Path, entry: FileEntry) -> Iterator[Path]:
    yield entry.path
    for part in MAILDIR_PARTS:
        folder = root / part
        if folder.is_dir():
            for item in sorted(folder.iterdir()):
                if _maildir_key(item.name) == entry.identity:
                    yield item


def list_directory(path: Path) -> list[FileEntry]:
    """Mail files below path, sorted by relative path; identity includes the size."""
    entries = []
    for file in walk_files(path):
        if is_mail_name(file.name):
            relative = file.relative_to(path).as_posix()
            entries.append(
                FileEntry(relative, file, f"{relative}\0{file.stat().st_size}")
            )
    return sorted(entries, key=lambda entry: entry.relative)


def is_mail_name(name: str) -> bool:
    lowered = name.lower()
    for suffix in SUFFIXES:
        lowered = lowered.removesuffix(suffix)
    return lowered.endswith(MAIL_SUFFIXES)


def walk_files(root: Path) -> Iterator[Path]:
    """Regular files below root, depth first, without recursion or symlinked dirs."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as scan:
                items = sorted(scan, key=lambda item: item.name, reverse=True)
        except PermissionError:
            notice.warning("%s: permission denied; skipped", folder)
            continue
        for item in items:
            if item.name.startswith("."):
                continue
            if item.is_dir(follow_symlinks=False):
                stack.append(Path(item.path))
            elif item.is_file():
                yield Path(item.path)


def read_directory(
    path: Path,
    *,
    source: str,
    list_hint: str | None = None,
    checkpoint: str | None,
    hint_for: Callable[[Path], str | None] = lambda _: None,
) -> Iterator[tuple[RawMessage, str]]:
    """Messages of every mail file below path, each with the token after it.

    `hint_for(file)` names the list of a file whose place says it (a pipermail
    month file in its list's folder); else `list_hint` does."""

    def read_entry(
        entry: FileEntry, inner: str | None
    ) -> Iterator[tuple[RawMessage, str | None]]:
        hint = hint_for(entry.path) or list_hint
        return read_mail_file(entry, source=source, list_hint=hint, checkpoint=inner)

    return read_file_sequence(list_directory(path), read_entry, checkpoint=checkpoint)


def read_mail_file(
    entry: FileEntry, *, source: str, list_hint: str | None, checkpoint: str | None
) -> Iterator[tuple[RawMessage, str | None]]:
    """One file of a directory: an .eml or headers-first file is one message, else an
    mbox. Positions are "relative" or "relative:offset"."""
    try:
        head, _ = read_head(entry.path)
    except ArchiveUnreadable as error:
        notice.warning("%s; skipped", error)
        return iter(())
    layout = classify_head(head)
    if layout is None:
        log.info("%s: not mail; skipped", entry.relative)
        return iter(())
    single = layout == MESSAGE or _base_suffix(entry.path.name) == ".eml"
    if single:
        return read_message_file(
            entry.path,
            source=source,
            position=entry.relative,
            list_hint=list_hint,
            checkpoint=checkpoint,
        )
    return read_mbox(
        entry.path,
        source=source,
        list_hint=list_hint,
        checkpoint=checkpoint,
        position_prefix=f"{entry.relative}:",
    )


def _base_suffix(name: str) -> str:
    lowered = name.lower()
    for suffix in SUFFIXES:
        lowered = lowered.removesuffix(suffix)
    return Path(lowered).suffix
