"""Archive byte streams: compression by magic bytes, decompression, resumable offsets.

Owns how e2g opens an archive file, or stdin, as one stream of decompressed bytes.
Compression is recognised by its magic bytes, never by the file name (archives.detect
compares the two to give a clear error). Concatenated gzip members, xz streams, bz2
streams and zstd frames are read through. Damaged or truncated compressed data ends the
stream with a warning instead of an exception, so every message before the damage is
still read (a cut-off download is the common case).

Also owns StreamMark, the checkpoint the mbox readers hand out: an offset into the
decompressed stream plus two fingerprints, of the first 64 KiB and of the bytes just
before the offset. Size alone cannot tell an appended file from a replaced one. A plain
file seeks to the offset; a compressed one cannot seek, so its prefix is decompressed
and discarded without being split into messages.

No mail parsing here. Used by archives.mbox, archives.detect and the directory readers.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import logging
import lzma
import zlib
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import IO, NamedTuple, Protocol, cast

import zstandard

from e2g.errors import ArchiveUnreadable, notice

log = logging.getLogger(__name__)

GZIP = "gzip"
XZ = "xz"
BZIP2 = "bz2"
ZSTD = "zstd"
SUFFIXES: dict[str, str] = {".gz": GZIP, ".xz": XZ, ".bz2": BZIP2, ".zst": ZSTD}

CHUNK_SIZE = 1 << 20
HEAD_SIZE = 64 * 1024  # the head fingerprint covers this much of the stream
WINDOW_SIZE = 4096  # and the window fingerprint this much before the offset
MAGIC_SIZE = 16

# What a damaged compressed stream raises mid-read (gzip.BadGzipFile and bz2's
# "Invalid data stream" are OSErrors, bad deflate data is zlib.error; a truncated
# stream raises EOFError).
_DAMAGE = (EOFError, OSError, zlib.error, lzma.LZMAError, zstandard.ZstdError)


class ByteReader(Protocol):
    """The one method readers need from a (decompressing) stream."""

    def read(self, size: int = -1, /) -> bytes: ...


def sniff_compression(magic: bytes) -> str | None:
    """The compression named by a stream's first bytes, or None for plain data."""
    if magic.startswith(b"\x1f\x8b"):
        return GZIP
    if magic.startswith(b"\xfd7zXZ\x00"):
        return XZ
    if magic.startswith(b"\x28\xb5\x2f\xfd"):
        return ZSTD
    # "BZh" + level digit + block magic (pi) or end-of-stream magic (sqrt pi): a text
    # file may well start with "BZh".
    level_ok = magic[:3] == b"BZh" and magic[3:4].isdigit()
    if level_ok and magic[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return BZIP2
    return None


def _decompressor(raw: ByteReader, compression: str) -> ByteReader:
    fileobj = cast(IO[bytes], raw)
    if compression == GZIP:
        return gzip.GzipFile(fileobj=fileobj, mode="rb")
    if compression == XZ:
        return lzma.LZMAFile(fileobj)
    if compression == BZIP2:
        return bz2.BZ2File(fileobj)
    return zstandard.ZstdDecompressor().stream_reader(fileobj, read_across_frames=True)


@contextmanager
def open_file(path: Path) -> Iterator[tuple[ByteReader, str | None]]:
    """Open path as decompressed bytes; yields (reader, compression or None)."""
    with path.open("rb") as raw:
        compression = sniff_compression(raw.read(MAGIC_SIZE))
        raw.seek(0)
        if compression is None:
            yield raw, None
            return
        reader = _decompressor(raw, compression)
        with closing(cast(io.IOBase, reader)):
            yield reader, compression


class _Prefixed(io.RawIOBase):
    """Bytes already read from a non-seekable stream, then the rest of it."""

    def __init__(self, prefix: bytes, rest: ByteReader) -> None:
        self._prefix = prefix
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._prefix[: len(buffer)]
        self._prefix = self._prefix[len(data) :]
        if not data:
            data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def open_stream(raw: ByteReader) -> tuple[ByteReader, str | None]:
    """Wrap a non-seekable stream (stdin) so reads return decompressed bytes."""
    magic = read_exactly(raw, MAGIC_SIZE)
    joined = io.BufferedReader(_Prefixed(magic, raw), CHUNK_SIZE)
    compression = sniff_compression(magic)
    if compression is None:
        return joined, None
    return _decompressor(joined, compression), compression


def read_exactly(reader: ByteReader, size: int) -> bytes:
    """Up to size bytes; fewer only at the end of the stream (pipes return short reads)."""
    parts: list[bytes] = []
    remaining = size
    while remaining > 0:
        part = reader.read(remaining)
        if not part:
            break
        parts.append(part)
        remaining -= len(part)
    return b"".join(parts)


def read_chunks(
    reader: ByteReader, *, label: str, compression: str | None
) -> Iterator[bytes]:
    """The stream in CHUNK_SIZE pieces; damaged compressed data ends it with a warning."""
    # read1 returns what one decompression step made: a damaged or cut stream then
    # loses nothing before the damage, where read() would drop its partial result.
    read = getattr(reader, "read1", reader.read)
    offset = 0
    while True:
        try:
            chunk = read(CHUNK_SIZE)
        except _DAMAGE as error:
            if compression is None:
                raise
            notice.warning(
                "%s: damaged or truncated %s data after %s decompressed bytes; "
                "the rest of it was not read (%s)",
                label,
                compression,
                f"{offset:,}",
                error,
            )
            return
        if not chunk:
            return
        offset += len(chunk)
        yield chunk


def read_head(path: Path, size: int = 4096) -> tuple[bytes, str | None]:
    """The first size decompressed bytes of path, and its compression.

    Raises ArchiveUnreadable when the file cannot be opened or its compressed data is
    damaged right at the start.
    """
    try:
        with open_file(path) as (reader, compression):
            try:
                return read_exactly(reader, size), compression
            except _DAMAGE as error:
                if compression is None:
                    raise ArchiveUnreadable(f"cannot read {path}: {error}") from error
                raise ArchiveUnreadable(
                    f"cannot read {path.name}: damaged {compression} data ({error}); "
                    "download or copy it again"
                ) from error
    except PermissionError as error:
        raise ArchiveUnreadable(
            f"cannot read {path}: permission denied; check its permissions"
        ) from error
    except IsADirectoryError as error:
        raise ArchiveUnreadable(f"cannot read {path}: is a directory") from error


def _digest(data: bytes | bytearray | memoryview) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


class StreamMark(NamedTuple):
    """An offset into a decompressed stream, fingerprinted to detect replaced files."""

    offset: int
    window: int  # how many bytes before offset window_digest covers
    head_digest: str  # of the first min(offset, HEAD_SIZE) bytes
    window_digest: str

    def encode(self, tag: str, extra: str = "") -> str:
        fields = (self.offset, self.window, self.head_digest, self.window_digest)
        return ":".join((tag, *map(str, fields), extra))

    @staticmethod
    def decode(token: str | None, tag: str) -> tuple[StreamMark, str] | None:
        """(mark, extra) from encode(tag, extra); None for another tag or a bad token."""
        if token is None:
            return None
        parts = token.split(":")
        if len(parts) != 6 or parts[0] != tag:
            return None
        _, offset, window, head, tail, extra = parts
        if not (offset.isdigit() and window.isdigit()) or int(window) > int(offset):
            return None
        return StreamMark(int(offset), int(window), head, tail), extra


class Fingerprint:
    """The first HEAD_SIZE bytes of a stream, kept to make and check StreamMarks."""

    def __init__(self, head: bytes = b"") -> None:
        self._head = bytearray(head[:HEAD_SIZE])
        self._full_digest: str | None = None

    def feed(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """Pass chunks through, recording the head; chunks must follow the head."""
        for chunk in chunks:
            if len(self._head) < HEAD_SIZE:
                self._head += chunk[: HEAD_SIZE - len(self._head)]
            yield chunk

    def mark(self, offset: int, window: bytes | bytearray | memoryview) -> StreamMark:
        """The mark for offset, given the bytes just before it (at most WINDOW_SIZE)."""
        return StreamMark(
            offset, len(window), self._head_digest(offset), _digest(window)
        )

    def _head_digest(self, offset: int) -> str:
        if offset < HEAD_SIZE:
            return _digest(self._head[:offset])
        if self._full_digest is None:
            self._full_digest = _digest(self._head)
        return self._full_digest


def skip_plain(file: IO[bytes], mark: StreamMark) -> Fingerprint | None:
    """Seek a plain file to mark.offset; its Fingerprint if the mark still matches."""
    head = read_exactly(file, min(mark.offset, HEAD_SIZE))
    file.seek(mark.offset - mark.window)
    window = read_exactly(file, mark.window)
    return _matching(head, window, mark)


def skip_stream(
    reader: ByteReader, mark: StreamMark, *, label: str
) -> Fingerprint | None:
    """Decompress and discard a stream up to mark.offset; Fingerprint if it matches."""
    head = bytearray()
    window = b""
    remaining = mark.offset
    try:
        while remaining > 0:
            chunk = reader.read(min(remaining, CHUNK_SIZE))
            if not chunk:
                return None  # shorter than it was: truncated or replaced
            remaining -= len(chunk)
            if len(head) < HEAD_SIZE:
                head += chunk[: HEAD_SIZE - len(head)]
            window = (window + chunk)[-WINDOW_SIZE:]
    except _DAMAGE as error:
        notice.warning(
            "%s: damaged data before the checkpoint; reading it again (%s)",
            label,
            error,
        )
        return None
    return _matching(bytes(head), window[len(window) - mark.window :], mark)


def _matching(head: bytes, window: bytes, mark: StreamMark) -> Fingerprint | None:
    if len(window) != mark.window or len(head) < min(mark.offset, HEAD_SIZE):
        return None
    fingerprint = Fingerprint(head)
    return fingerprint if fingerprint.mark(mark.offset, window) == mark else None
