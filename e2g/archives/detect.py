"""Archive detection and dispatch: paths in, Sources out, messages read from each.

Owns deciding what a path is (by its layout and magic bytes, never by its name alone),
the one-line errors for paths that are missing, unreadable or not mail, and sending
each Source to its reader. Readers yield RawMessage bytes and parse nothing.

Kinds: "mbox" (plain or gzip/xz/bz2/zstd, any mbox dialect), "eml" (a file holding one
RFC 822 message; an extension of the kinds the pipeline knows, read like the rest),
"maildir", "directory" (mail files below a folder, recursively), "public-inbox" (a v2
inbox or one epoch / v1 git repository), "pipermail" (a Mailman period file or its
folder) and "stdin" ("-").

Checkpoints are opaque strings, one per Source.key: each yielded message comes with the
token that resumes right after it, or None when the source cannot resume (stdin). A
token that does not match the archive any more (truncated, replaced, rewritten) makes
the reader start again from the beginning: ingest is idempotent by Message-ID.

Used by ingest.pipeline and api. Only the readers below open archive files.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, NamedTuple

from e2g.archives import maildir, pipermail, public_inbox
from e2g.archives.compression import SUFFIXES, read_head
from e2g.archives.mbox import (
    MESSAGE,
    classify_head,
    read_mbox,
    read_mbox_stream,
    read_message_file,
)
from e2g.errors import ArchiveUnreadable
from e2g.model.mail import RawMessage

log = logging.getLogger(__name__)

MBOX = "mbox"
EML = "eml"
MAILDIR = "maildir"
DIRECTORY = "directory"
PUBLIC_INBOX = "public-inbox"
PIPERMAIL = "pipermail"
STDIN = "stdin"

_EXPECTED = (
    "expected an mbox, an .eml message, a Maildir, a folder of mail files, a "
    "public-inbox git repository or a pipermail archive, optionally compressed "
    "with gzip, xz, bzip2 or zstd"
)
_SUFFIX_OF = {compression: suffix for suffix, compression in SUFFIXES.items()}


class Source(NamedTuple):
    """One archive to read."""

    key: str  # stable identity for checkpoints: absolute resolved path, or "-"
    kind: str  # one of the kinds above
    path: Path | None
    list_hint: str | None  # list name guessed from the layout, or None


def detect_sources(paths: Sequence[str]) -> list[Source]:
    """A Source for each path ("-" is stdin), in order, without duplicates.

    Raises ArchiveUnreadable (what, why, what to do) for the first path that is
    missing, unreadable, or not an archive.
    """
    sources: list[Source] = []
    for text in paths:
        source = detect_source(text)
        if all(source.key != known.key for known in sources):
            sources.append(source)
    return sources


def detect_source(text: str) -> Source:
    """What one path is; see detect_sources."""
    if text == "-":
        return Source("-", STDIN, None, None)
    try:
        path = Path(text).resolve(strict=True)
    except FileNotFoundError as error:
        raise ArchiveUnreadable(
            f"cannot read {text}: no such file or directory"
        ) from error
    except (OSError, RuntimeError) as error:
        raise ArchiveUnreadable(f"cannot read {text}: {error}") from error
    if not os.access(path, os.R_OK):
        raise ArchiveUnreadable(
            f"cannot read {text}: permission denied; check its permissions"
        )
    if path.is_dir():
        return _detect_directory(text, path)
    if path.is_file():
        return _detect_file(text, path)
    raise ArchiveUnreadable(f"cannot read {text}: not a regular file or directory")


def _detect_directory(text: str, path: Path) -> Source:
    key = str(path)
    epochs = public_inbox.find_epochs(path)
    if epochs:
        if public_inbox.is_inbox(epochs, label=text):
            return Source(key, PUBLIC_INBOX, path, public_inbox.list_name(path))
        if epochs[0].git_dir == path:  # a bare repository: certainly not a mail folder
            raise ArchiveUnreadable(
                f"cannot read {text}: a git repository but not a public-inbox archive "
                "(its last commit has no 'm' or 'd' file); point at an inbox, or give "
                "a code repository with --repo"
            )
    if maildir.is_maildir(path):
        return Source(key, MAILDIR, path, None)
    if any(pipermail.is_pipermail_file(item) for item in path.iterdir()):
        return Source(key, PIPERMAIL, path, pipermail.list_name(path))
    if any(maildir.is_mail_name(file.name) for file in maildir.walk_files(path)):
        return Source(key, DIRECTORY, path, None)
    raise ArchiveUnreadable(
        f"cannot read {text}: no mail found in this directory (no Maildir cur/ or new/, "
        "no public-inbox git/N.git, no .eml, .mbox, .mbx or .txt files); "
        "point at an archive or a folder that holds one"
    )


def _detect_file(text: str, path: Path) -> Source:
    head, compression = read_head(path)
    _check_suffix(path, compression, head)
    layout = classify_head(head)
    if layout is None:
        raise ArchiveUnreadable(
            f"cannot read {path.name}: not a mail archive (starts with "
            f"{_preview(head)}); {_EXPECTED}"
        )
    key = str(path)
    if pipermail.period_key(path.name) is not None:
        return Source(key, PIPERMAIL, path, pipermail.list_name(path))
    if layout == MESSAGE or _base_suffix(path) == ".eml":
        return Source(key, EML, path, None)
    return Source(key, MBOX, path, None)


def _check_suffix(path: Path, actual: str | None, head: bytes) -> None:
    """Refuse a file whose compression suffix contradicts its magic bytes."""
    expected = SUFFIXES.get(path.suffix.lower())
    if expected is None or expected == actual:
        return
    if pipermail.period_key(path.name) is not None:
        return  # web servers decompress .txt.gz downloads and keep the name
    stem = path.name[: -len(path.suffix)]
    if actual is None:
        found, rename = f"starts with {_preview(head)}", stem
    else:
        found, rename = f"it is {actual} data", stem + _SUFFIX_OF[actual]
    article = "an" if expected == "xz" else "a"
    raise ArchiveUnreadable(
        f"cannot read {path.name}: not {article} {expected} file ({found}); "
        f"rename it to {rename}"
    )


def _preview(head: bytes) -> str:
    """The first bytes of a file, as a user can recognise them."""
    if head.startswith(b"From "):
        return "'From '"
    sample = head[:8]
    if sample and all(0x20 <= byte < 0x7F for byte in sample):
        return repr(sample.decode("ascii"))
    return repr(sample) if sample else "nothing: it is empty"


def _base_suffix(path: Path) -> str:
    name = path.name.lower()
    for suffix in SUFFIXES:
        name = name.removesuffix(suffix)
    return Path(name).suffix


def read_source(
    source: Source, *, checkpoint: str | None, stdin: BinaryIO | None = None
) -> Iterator[tuple[RawMessage, str | None]]:
    """Yield each message with the checkpoint token valid after it.

    The token is an opaque str to store per Source.key once the message is committed,
    or None when the source cannot resume (stdin). Passing the last token back resumes
    right after that message without reading the earlier ones again (a compressed
    file is still decompressed up to there). A token that no longer matches the
    archive restarts it from the beginning. stdin defaults to sys.stdin's bytes.
    """
    if source.kind == STDIN:
        stream = stdin if stdin is not None else sys.stdin.buffer
        return _guarded(read_mbox_stream(stream, source=source.key), source)
    return _guarded(_read_path(source, checkpoint), source)


def _read_path(
    source: Source, checkpoint: str | None
) -> Iterator[tuple[RawMessage, str | None]]:
    """A generator, so that listing a folder happens inside _guarded."""
    path, key, hint = source.path, source.key, source.list_hint
    if path is None:
        raise ArchiveUnreadable(f"cannot read {key}: the source has no path")
    if source.kind == MBOX:
        yield from read_mbox(path, source=key, list_hint=hint, checkpoint=checkpoint)
    elif source.kind == EML:
        yield from read_message_file(
            path, source=key, position="0", list_hint=hint, checkpoint=checkpoint
        )
    elif source.kind == MAILDIR:
        yield from maildir.read_maildir(
            path, source=key, list_hint=hint, checkpoint=checkpoint
        )
    elif source.kind == DIRECTORY:
        yield from maildir.read_directory(
            path,
            source=key,
            list_hint=hint,
            checkpoint=checkpoint,
            hint_for=_pipermail_list,
        )
    elif source.kind == PUBLIC_INBOX:
        yield from public_inbox.read_inbox(
            path, source=key, list_hint=hint, checkpoint=checkpoint
        )
    elif source.kind == PIPERMAIL:
        yield from pipermail.read_pipermail(
            path, source=key, list_hint=hint, checkpoint=checkpoint
        )
    else:
        raise ArchiveUnreadable(
            f"cannot read {key}: unknown archive kind {source.kind!r}"
        )


def _pipermail_list(file: Path) -> str | None:
    """A pipermail month file's list is its folder (`frob-users/2007-March.txt.gz`),
    wherever the folder lies below the directory being read."""
    return pipermail.list_name(file) if pipermail.period_key(file.name) else None


def _guarded(
    messages: Iterator[tuple[RawMessage, str | None]], source: Source
) -> Iterator[tuple[RawMessage, str | None]]:
    """Turn a file vanishing or locked mid-read into ArchiveUnreadable."""
    try:
        yield from messages
    except FileNotFoundError as error:
        raise ArchiveUnreadable(
            f"cannot read {error.filename or source.key}: it disappeared while reading"
        ) from error
    except PermissionError as error:
        raise ArchiveUnreadable(
            f"cannot read {error.filename or source.key}: permission denied"
        ) from error
