"""The streaming mbox splitter: bytes in, RawMessage out, no MIME parsing.

Owns cutting an mbox stream (plain or compressed, a file or stdin) into messages, the
mbox dialect rules, and mbox checkpoint tokens. Memory is bounded by the largest message
(capped at MAX_RAW_MESSAGE) plus a chunk, never by the archive size.

Separators. A message starts at a line beginning "From " that is at the start of the
stream or follows a blank line ("\\n" or "\\r\\n"), and whose next line looks like a header
("Name:"). The header test rejects prose such as "From the start, we ..." after a
paragraph break in archives whose writer forgot to quote it.

Dialects. mboxrd quotes body lines matching ">*From " by adding one ">"; mboxo quotes
only "From " lines, so a mboxo ">From " is ambiguous. We undo one level of ">" from every
line matching "^>+From " (the mboxrd rule). For mboxo that turns ">From " back into
"From " (what its writer meant in nearly all real files) and changes only the rare
original ">>From " line; telling the two apart would need the whole file before the
first message. mboxcl2 does not quote at all and gives each body's length in
Content-Length: once a Content-Length header is correct (the next separator or the end
of the stream follows exactly there) where the From rule would have cut the message
short, the stream is mboxcl2 from then on: lengths are used when they are correct, and
nothing is unquoted. Content-Length headers that merely agree with the From rule change
nothing, and wrong ones are ignored.

The blank line before a separator belongs to the format, not to the message: it is
dropped, so writing "From ...\\n" + message + "\\n" round-trips.

Used by archives.detect (mbox files and stdin) and the directory and pipermail readers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import IO, NamedTuple, cast

from e2g.archives.compression import (
    CHUNK_SIZE,
    WINDOW_SIZE,
    ByteReader,
    Fingerprint,
    StreamMark,
    open_file,
    open_stream,
    read_chunks,
    skip_plain,
    skip_stream,
)
from e2g.model.mail import Origin, RawMessage

log = logging.getLogger(__name__)

MAX_RAW_MESSAGE = 64 * 1024 * 1024  # a longer message is kept truncated, with a warning
MAX_FROM_LINE = 1024
RD = "rd"
CL2 = "cl2"
MBOX = "mbox"  # classify_head results
MESSAGE = "message"

_TOKEN_TAG = "mbox1"
_MESSAGE_TAG = "eml1"
_LOOKAHEAD = 8192  # bytes after a "From " candidate needed to judge it
_MAX_HEADER_BLOCK = 256 * 1024
_SEPARATOR = re.compile(rb"From [^\n]{0,4000}\n[\x21-\x39\x3b-\x7e]{1,200}:")
_QUOTED_FROM = re.compile(rb"^>(>*From )", re.MULTILINE)
_FROM = re.compile(rb"^(>*From )", re.MULTILINE)
# The separator public-inbox writes before each message of an mboxrd it serves.
MBOXRD_SEPARATOR = b"From mboxrd@z Thu Jan  1 00:00:00 1970\n"
_CONTENT_LENGTH = re.compile(
    rb"^content-length:[ \t]*(\d{1,12})[ \t]*\r?$", re.MULTILINE | re.IGNORECASE
)
_HEADER_LINE = re.compile(rb"[\x21-\x39\x3b-\x7e]{1,200}:")
_MAIL_HEADER = re.compile(
    rb"^(from|date|subject|message-id|received|return-path|delivered-to|to|cc|"
    rb"mime-version|x-[a-z0-9-]+):",
    re.MULTILINE | re.IGNORECASE,
)


class MboxPart(NamedTuple):
    """One message cut from a stream, with what a checkpoint needs."""

    start: int  # stream offset of its From line (or first byte)
    end: int  # stream offset of the next message (or the end of the stream)
    from_line: bytes | None
    data: bytes  # quoting undone, separator blank line dropped
    window: bytes  # the bytes just before `end`, for the checkpoint fingerprint
    dialect: str  # RD or CL2 as known after this message


def classify_head(head: bytes) -> str | None:
    """MBOX, MESSAGE (one RFC 822 message) or None (not mail) from a file's first bytes."""
    text = head.lstrip(b"\r\n")
    if not text or text.startswith(b"From "):
        return MBOX
    if _HEADER_LINE.match(text) and _MAIL_HEADER.search(text):
        return MESSAGE
    return None


def split_from_line(data: bytes) -> tuple[bytes | None, bytes]:
    """Separate a leading "From " line (some .eml and Maildir files keep one)."""
    if not data.startswith(b"From "):
        return None, data
    newline = data.find(b"\n", 0, MAX_FROM_LINE)
    if newline < 0:
        return None, data
    return data[:newline].rstrip(b"\r"), data[newline + 1 :]


def unquote_from(data: bytes) -> bytes:
    """Undo mboxrd quoting: a line "^>+From " loses one ">"."""
    if b">From " not in data:
        return data
    return _QUOTED_FROM.sub(rb"\1", data)


def quote_from(data: bytes) -> bytes:
    """mboxrd quoting, `unquote_from`'s inverse: a line "^>*From " gains a ">"."""
    if b"From " not in data:
        return data
    return _FROM.sub(rb">\1", data)


def mboxrd_entry(raw: bytes) -> bytes:
    """One message's bytes as an mboxrd entry, as public-inbox serves them: the
    separator, the bytes with their "From " lines quoted, a blank line."""
    body = quote_from(raw)
    if not body.endswith(b"\n"):
        body += b"\n"
    return MBOXRD_SEPARATOR + body + b"\n"


def split_mbox(
    chunks: Iterable[bytes],
    *,
    start: int = 0,
    dialect: str = RD,
    limit: int = MAX_RAW_MESSAGE,
) -> Iterator[MboxPart]:
    """Cut a stream (given as chunks) into messages; pure, never raises on bad bytes."""
    return _Splitter(iter(chunks), start=start, dialect=dialect, limit=limit).parts()


class _Splitter:
    """States: at a message start (skip blank lines, read the From line) -> scanning
    ("\\nFrom " hits after a blank line whose next line is a header) -> Content-Length
    check (mboxcl2) -> emit -> at a message start. Indices are into self._buffer, which
    is compacted only between messages, or mid-message once a message is too long."""

    def __init__(
        self, chunks: Iterator[bytes], *, start: int, dialect: str, limit: int
    ) -> None:
        self._chunks = chunks
        self._buffer = bytearray()
        self._base = start  # stream offset of self._buffer[0]
        self._start = 0  # current message start
        self._body = 0  # first byte after the From line
        self._eof = False
        self._kept: bytes | None = None  # head of an oversized message
        self._dialect = dialect
        self._limit = limit

    def parts(self) -> Iterator[MboxPart]:
        while self._at_message_start():
            yield self._cut()

    def _grow(self) -> bool:
        if self._eof:
            return False
        chunk = next(self._chunks, b"")
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    def _ensure(self, end: int) -> None:
        while len(self._buffer) < end and self._grow():
            pass

    def _at_message_start(self) -> bool:
        if self._start >= CHUNK_SIZE:
            del self._buffer[: self._start]
            self._base += self._start
            self._start = 0
        while True:
            self._ensure(self._start + _LOOKAHEAD)
            while self._buffer.startswith((b"\n", b"\r"), self._start):
                self._start += 1
            if self._start < len(self._buffer) or not self._grow():
                return self._start < len(self._buffer)

    def _cut(self) -> MboxPart:
        start = self._base + self._start
        from_line = self._read_from_line()
        self._kept = None
        data_end, next_start = self._find_separator()
        if self._kept is None:
            data_end, next_start = self._apply_content_length(data_end, next_start)
            with memoryview(self._buffer) as view:
                data = bytes(view[self._body : data_end])
        else:
            data = self._kept
        if self._dialect == RD:
            data = unquote_from(data)
        window = bytes(
            self._buffer[max(self._start, next_start - WINDOW_SIZE) : next_start]
        )
        self._start = next_start
        return MboxPart(
            start, self._base + next_start, from_line, data, window, self._dialect
        )

    def _read_from_line(self) -> bytes | None:
        self._body = self._start
        if not self._buffer.startswith(b"From ", self._start):
            return None
        newline = self._buffer.find(b"\n", self._start, self._start + _LOOKAHEAD)
        if newline < 0:
            if len(self._buffer) - self._start >= _LOOKAHEAD:
                return None  # not a real From line: keep the bytes as message data
            newline = len(self._buffer)
        self._body = min(newline + 1, len(self._buffer))
        line = bytes(
            self._buffer[self._start : min(newline, self._start + MAX_FROM_LINE)]
        )
        return line.rstrip(b"\r")

    def _find_separator(self) -> tuple[int, int]:
        """(end of this message's data, start of the next message)."""
        search = self._body
        while True:
            hit = self._buffer.find(b"\nFrom ", search)
            if hit < 0:
                if self._eof:
                    return self._end_of_stream()
                search = max(search, len(self._buffer) - 6)
                search -= self._grow_message(search)
                continue
            if len(self._buffer) - hit < _LOOKAHEAD and not self._eof:
                search = hit - self._grow_message(hit)
                continue
            blank = self._blank_before(hit)
            if blank is not None and _SEPARATOR.match(self._buffer, hit + 1):
                return blank, hit + 1
            search = hit + 1

    def _blank_before(self, hit: int) -> int | None:
        """Where the blank line ending at hit starts, if the line before hit is blank."""
        if hit >= 1 and self._buffer[hit - 1] == 0x0A:
            return hit
        if hit >= 2 and self._buffer[hit - 1] == 0x0D and self._buffer[hit - 2] == 0x0A:
            return hit - 1
        return None

    def _end_of_stream(self) -> tuple[int, int]:
        end = len(self._buffer)
        data_end = end
        if self._buffer.endswith(b"\n\n"):
            data_end = end - 1
        elif self._buffer.endswith(b"\n\r\n"):
            data_end = end - 2
        return max(data_end, self._body if self._kept is None else 0), end

    def _grow_message(self, keep: int) -> int:
        """Read more of the current message; past the limit, keep its head and drop the
        rest so memory stays bounded. Returns how far indices shifted left."""
        if not self._grow():
            return 0
        if self._kept is None:
            if keep - self._body <= self._limit:
                return 0  # everything before `keep` is this message: still short enough
            self._kept = bytes(self._buffer[self._body : self._body + self._limit])
            log.warning(
                "message at offset %d is longer than %d bytes: keeping its start only",
                self._base + self._start,
                self._limit,
            )
        drop = max(0, keep - 8)  # keep a few bytes for the blank-line test
        del self._buffer[:drop]
        self._base += drop
        self._start = 0
        return drop

    def _apply_content_length(self, data_end: int, next_start: int) -> tuple[int, int]:
        """Use a correct Content-Length when the stream is (or just proved) mboxcl2."""
        candidate = self._content_end(data_end)
        if candidate is None or candidate == data_end:
            return data_end, next_start
        if candidate < data_end and self._dialect != CL2:
            return data_end, next_start
        if candidate - self._body > self._limit:
            return data_end, next_start
        self._ensure(candidate + _LOOKAHEAD)
        after = self._separator_at(candidate)
        if after is None:
            return data_end, next_start
        if self._dialect != CL2:
            log.debug(
                "offset %d: Content-Length proves mboxcl2", self._base + candidate
            )
            self._dialect = CL2
        return candidate, after

    def _content_end(self, data_end: int) -> int | None:
        """Where the body ends by its Content-Length header, if it has one."""
        limit = min(data_end, self._body + _MAX_HEADER_BLOCK)
        header_end = self._buffer.find(b"\n\n", self._body, limit)
        blank = 2
        if header_end < 0:
            header_end = self._buffer.find(b"\r\n\r\n", self._body, limit)
            blank = 4
        if header_end < 0:
            return None
        # A plain find first: the regex alone costs more than the rest of the split.
        found = self._buffer.find(b"ength:", self._body, header_end)
        if found < 0 and self._buffer.find(b"ENGTH:", self._body, header_end) < 0:
            return None
        match = _CONTENT_LENGTH.search(self._buffer, self._body, header_end + 1)
        if match is None:
            return None
        return header_end + blank + int(match.group(1))

    def _separator_at(self, candidate: int) -> int | None:
        """The next message's start if a blank line and a separator (or EOF) follow."""
        end = len(self._buffer)
        if candidate > end:
            return None
        if candidate == end:
            return candidate if self._eof else None
        for blank in (b"\n", b"\r\n"):
            if self._buffer.startswith(blank, candidate):
                after = candidate + len(blank)
                if (after == end and self._eof) or _SEPARATOR.match(
                    self._buffer, after
                ):
                    return after
        return None


class _Naming(NamedTuple):
    """How a reader names the messages it yields."""

    source: str
    list_hint: str | None
    prefix: str  # before the offset in Origin.position (a file inside a directory)


def _messages(
    parts: Iterator[MboxPart], fingerprint: Fingerprint | None, naming: _Naming
) -> Iterator[tuple[RawMessage, str | None]]:
    for part in parts:
        position = f"{naming.prefix}{part.start}"
        origin = Origin(naming.source, position, naming.list_hint)
        token = None
        if fingerprint is not None:
            mark = fingerprint.mark(part.end, part.window)
            token = mark.encode(_TOKEN_TAG, part.dialect)
        yield RawMessage(part.data, origin, part.from_line), token


def read_mbox(
    path: Path,
    *,
    source: str,
    list_hint: str | None = None,
    checkpoint: str | None = None,
    position_prefix: str = "",
) -> Iterator[tuple[RawMessage, str | None]]:
    """Messages of an mbox file (plain or compressed), each with the token after it.

    Origin.position is position_prefix + the message's offset in the decompressed
    stream. A token from an earlier read resumes after its message when the file still
    starts the same and has a separator there; otherwise reading restarts at 0.
    """
    naming = _Naming(source, list_hint, position_prefix)
    decoded = StreamMark.decode(checkpoint, _TOKEN_TAG)
    if decoded is not None:
        mark, dialect = decoded
        with open_file(path) as (reader, compression):
            resumed = _resume(reader, compression, mark, label=path.name)
            if resumed is not None:
                fingerprint, first = resumed
                rest = read_chunks(reader, label=path.name, compression=compression)
                chunks = fingerprint.feed(chain((first,), rest))
                parts = split_mbox(chunks, start=mark.offset, dialect=dialect)
                yield from _messages(parts, fingerprint, naming)
                return
        log.info(
            "%s: checkpoint does not match the file any more; reading it from the start",
            path.name,
        )
    with open_file(path) as (reader, compression):
        fingerprint = Fingerprint()
        chunks = read_chunks(reader, label=path.name, compression=compression)
        yield from _messages(split_mbox(fingerprint.feed(chunks)), fingerprint, naming)


def _resume(
    reader: ByteReader, compression: str | None, mark: StreamMark, *, label: str
) -> tuple[Fingerprint, bytes] | None:
    """Skip to the mark; (fingerprint, first chunk there) if the mark is still valid."""
    if compression is None:
        fingerprint = skip_plain(cast(IO[bytes], reader), mark)
    else:
        fingerprint = skip_stream(reader, mark, label=label)
    if fingerprint is None:
        return None
    first = next(read_chunks(reader, label=label, compression=compression), b"")
    if first.lstrip(b"\r\n") and not first.lstrip(b"\r\n").startswith(b"From "):
        return None  # the mark is not at a message boundary any more
    return fingerprint, first


def read_mbox_stream(
    stream: ByteReader, *, source: str = "-", list_hint: str | None = None
) -> Iterator[tuple[RawMessage, None]]:
    """Messages of a non-seekable stream such as stdin (compression sniffed too).

    Tokens are None: a stream cannot be read again. A stream that starts with headers
    instead of a From line is taken as its first message.
    """
    reader, compression = open_stream(stream)
    chunks = read_chunks(reader, label=source, compression=compression)
    naming = _Naming(source, list_hint, "")
    for message, _ in _messages(split_mbox(chunks), None, naming):
        yield message, None


def read_message_file(
    path: Path,
    *,
    source: str,
    position: str,
    list_hint: str | None = None,
    checkpoint: str | None = None,
) -> Iterator[tuple[RawMessage, str]]:
    """The one message of an .eml file (plain or compressed), with its token.

    The token fingerprints the whole file: given it back, an unchanged file yields
    nothing. A leading "From " line goes to RawMessage.from_line.
    """
    fingerprint = Fingerprint()
    kept = bytearray()
    tail = b""
    size = 0
    with open_file(path) as (reader, compression):
        for chunk in fingerprint.feed(
            read_chunks(reader, label=path.name, compression=compression)
        ):
            size += len(chunk)
            kept += chunk[: MAX_RAW_MESSAGE - len(kept)]
            tail = (tail + chunk)[-WINDOW_SIZE:]
    if size > MAX_RAW_MESSAGE:
        log.warning(
            "%s is longer than %d bytes: keeping its start only",
            path.name,
            MAX_RAW_MESSAGE,
        )
    token = fingerprint.mark(size, tail).encode(_MESSAGE_TAG)
    if token == checkpoint:
        return
    from_line, data = split_from_line(bytes(kept))
    yield RawMessage(data, Origin(source, position, list_hint), from_line), token
