"""Wrapped patches: uuencode, gzip and bzip2 undone, within bounds.

Old list mail often carries a patch not as text but wrapped: uuencoded in the body
(``begin 644 fix.diff.gz`` ... ``end``), as a MIME part with a uuencode transfer
encoding, or as a gzip or bzip2 attachment (``application/x-gzip``, base64). This
module undoes those wrappings. Pure functions on bytes and str, no IO; used by
e2g.mail.message, which decides which parts to unwrap and what to do with a defect.

The bytes come from anyone, so every step is bounded, and a step that cannot finish
within its bound gives a Defect (a short, stable reason and a detail) instead of data:

- ``attachment too large``: compressed input over MAX_ENCODED bytes, or output that
  would pass MAX_DECODED bytes (a decompression bomb, or far more text than the diff
  scanner reads) or the message's Budget;
- ``attachment nested``: a compressed stream that holds another one. A patch is
  compressed once (and uuencoded at most once around that); archive-in-archive is the
  zip-bomb pattern, not a patch, so it is not unpacked further;
- ``attachment truncated``: a stream, or a uuencoded block, that stops before its end;
- ``attachment corrupt``: bytes that are not what their header says.

Nothing here raises on bad input.
"""

from __future__ import annotations

import binascii
import bz2
import itertools
import re
import zlib
from collections.abc import Iterator
from typing import NamedTuple

from e2g.model import MAX_BODY, MAX_DIFF

MAX_ENCODED = MAX_DIFF  # bytes of compressed input we agree to decompress
MAX_DECODED = MAX_DIFF + MAX_BODY  # bytes of output: what patch.split_body reads
MAX_MESSAGE_DECODED = 2 * MAX_DECODED  # all of one message's parts together
MAX_UU_BLOCKS = 16  # uuencoded blocks read from one text
MAX_STREAMS = 64  # concatenated gzip members or bzip2 streams in one part

TOO_LARGE = "attachment too large"
NESTED = "attachment nested"
TRUNCATED = "attachment truncated"
CORRUPT = "attachment corrupt"

_GZIP = b"\x1f\x8b\x08"  # magic and the deflate method: all gzip in the wild
_BZIP2_BLOCK = (b"1AY&SY", b"\x17rE8P\x90")  # first block, or an empty stream's end
# "begin MODE NAME" (uuencode) or "begin-base64 MODE NAME" (uuencode -m), at column 0:
# a quoted block ("> begin 644 ...") is someone else's and never decoded.
_BEGIN = re.compile(r"^begin(-base64)? [0-7]{3,4} ([^\n]*)$", re.MULTILINE)
_UU_LINE = re.compile(r"[ -`]+")
_BASE64_LINE = re.compile(r"[A-Za-z0-9+/]+=*")


class Defect(NamedTuple):
    """Why a wrapped part could not be read: `reason` is one of the four above."""

    reason: str
    detail: str


class Unwrapped(NamedTuple):
    """Bytes with their wrapping undone, or the defect that stopped it."""

    data: bytes
    defect: Defect | None = None
    changed: bool = False  # something was decoded or decompressed


class UuBlock(NamedTuple):
    """One uuencoded block of a text: where its ``begin`` line starts, the file
    name on that line, and its bytes (decompressed) or the defect that stopped it."""

    start: int
    name: str
    result: Unwrapped


class Budget:
    """What one message may still decode: its parts share one bound, so that many
    parts each just under MAX_DECODED cannot add up to gigabytes."""

    __slots__ = ("remaining",)

    def __init__(self, total: int = MAX_MESSAGE_DECODED) -> None:
        self.remaining = total

    def limit(self) -> int:
        return min(MAX_DECODED, self.remaining)

    def spend(self, size: int) -> None:
        self.remaining = max(0, self.remaining - size)


# --- compression ----------------------------------------------------------------------


def compression(data: bytes) -> str | None:
    """ "gzip" or "bzip2" when `data` starts like one (magic bytes, not the part's
    declared type: mailers label gzip as application/octet-stream or text/plain)."""
    if data.startswith(_GZIP):
        return "gzip"
    level = data[3:4]
    if (
        data[:3] == b"BZh"
        and level
        and level in b"123456789"
        and data[4:10] in _BZIP2_BLOCK
    ):
        return "bzip2"
    return None


_EXPLAIN = {
    TOO_LARGE: "expands past {limit} bytes",
    TRUNCATED: "stream ends early",
    CORRUPT: "invalid stream",
}


def unwrap(data: bytes, budget: Budget, *, name: str = "") -> Unwrapped:
    """`data` decompressed if it is gzip or bzip2 (once: see NESTED); else as it is."""
    kind = compression(data)
    if kind is None:
        return Unwrapped(data)
    label = f"{name or 'part'}: {kind}"
    if len(data) > MAX_ENCODED:
        return _failed(TOO_LARGE, f"{label}: {len(data)} bytes compressed")
    limit = budget.limit()
    out, defect = _decompress(kind, data, limit)
    budget.spend(len(out))
    if defect is not None:
        return _failed(defect, f"{label}: {_EXPLAIN[defect].format(limit=limit)}")
    inner = compression(out)
    if inner is not None:
        return _failed(NESTED, f"{label} holds {inner}")
    return Unwrapped(out, changed=True)


def _failed(reason: str, detail: str) -> Unwrapped:
    return Unwrapped(b"", Defect(reason, detail[:500]))


def _decompress(kind: str, data: bytes, limit: int) -> tuple[bytes, str | None]:
    """All streams of `data` (gzip members, bzip2 streams) up to `limit` bytes out.

    Each call to the decompressor asks for at most one byte past what is left of the
    limit: getting it means the output would not fit, so a bomb costs `limit` bytes
    of work and memory, never its full size.
    """
    out = bytearray()
    rest = data
    for _ in range(MAX_STREAMS):
        decompressor = (
            zlib.decompressobj(16 + zlib.MAX_WBITS)
            if kind == "gzip"
            else bz2.BZ2Decompressor()
        )
        room = limit - len(out) + 1
        try:
            chunk = decompressor.decompress(rest, room)
        except (zlib.error, OSError, EOFError, ValueError):
            return bytes(out), CORRUPT
        out += chunk
        if len(chunk) >= room:
            return bytes(out), TOO_LARGE
        if not decompressor.eof:
            return bytes(out), TRUNCATED
        rest = decompressor.unused_data
        # What follows the last stream is padding (tar and some mailers add NULs)
        # unless it starts another stream, as `cat a.gz b.gz` makes.
        if compression(rest) != kind:
            break
    return bytes(out), None


# --- uuencode -------------------------------------------------------------------------


def uudecode_blocks(text: str, budget: Budget) -> list[UuBlock]:
    """Each uuencoded block of `text` (at most MAX_UU_BLOCKS), its bytes decompressed
    when they are gzip or bzip2.

    A ``begin`` line not followed by a whole encoded line is prose about uuencode, not
    a block, and is skipped; a block that stops before its ``end`` is TRUNCATED.
    """
    found: list[UuBlock] = []
    for match in _BEGIN.finditer(text):
        if len(found) >= MAX_UU_BLOCKS:
            break
        name = match.group(2).strip()[:256]
        lines = _lines_from(text, match.end() + 1)
        base64 = match.group(1) is not None
        decoded = _block(lines, base64=base64, name=name, limit=budget.limit())
        if decoded is None:
            continue
        budget.spend(len(decoded.data))
        if decoded.defect is None:
            inner = unwrap(decoded.data, budget, name=name)
            decoded = inner if inner.changed or inner.defect else decoded
        found.append(UuBlock(match.start(), name, decoded))
    return found


def _lines_from(text: str, start: int) -> Iterator[str]:
    """The lines of `text` from `start` on, without copying the rest of it."""
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:].rstrip("\r")
            return
        yield text[start:end].rstrip("\r")
        start = end + 1


def _block(
    lines: Iterator[str], *, base64: bool, name: str, limit: int
) -> Unwrapped | None:
    """Decode the lines after a ``begin`` line; None when they are not a block."""
    first = next(lines, "")
    if not (_whole_base64_line(first) if base64 else _whole_uu_line(first)):
        return None
    decode_line = _base64_line if base64 else _uu_line
    closing = "====" if base64 else "end"
    out = bytearray()
    for line in itertools.chain((first,), lines):
        if line == closing:
            return Unwrapped(bytes(out), changed=True)
        data = decode_line(line)
        if data is None:
            break
        out += data
        if len(out) > limit:
            return _failed(TOO_LARGE, f"{name}: uuencoded past {limit} bytes")
    return _failed(TRUNCATED, f"{name}: uuencoded block has no end line")


def _whole_uu_line(line: str) -> bool:
    """A line as an encoder writes it: its length character's worth of characters
    (give or take the padding of the last group). Prose never is one."""
    if not line or not _UU_LINE.fullmatch(line):
        return False
    needed = _uu_chars(line)
    return needed > 1 and needed <= len(line) <= needed + 3


def _uu_chars(line: str) -> int:
    """Characters a uuencoded line needs: its length character and 4 per 3 bytes."""
    return (((ord(line[0]) - 32) & 63) * 4 + 5) // 3


def _uu_line(line: str) -> bytes | None:
    """One uuencoded line: a length character, then four characters per three bytes.

    Encoders pad the last group differently and mailers strip trailing spaces, so
    only the characters the length calls for are decoded, as the uu module did.
    """
    if not line or not _UU_LINE.fullmatch(line):
        return None
    needed = _uu_chars(line)
    try:
        return binascii.a2b_uu(line.ljust(needed)[:needed])
    except binascii.Error:
        return None


def _whole_base64_line(line: str) -> bool:
    return len(line) >= 4 and _base64_line(line) is not None


def _base64_line(line: str) -> bytes | None:
    if not _BASE64_LINE.fullmatch(line):
        return None
    try:
        return binascii.a2b_base64(line)
    except binascii.Error:
        return None
