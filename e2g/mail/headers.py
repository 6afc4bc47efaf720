"""Header text: unfolding, RFC 2047 words, charsets, and mail addresses.

Pure functions on str/bytes; no IO. The email package's compat32 policy hands header
values back raw (folded, with 8-bit bytes as surrogate escapes), so everything that
turns them into readable text lives here. Used by mail.message.

Strange inputs seen in real archives and handled here:
- raw 8-bit UTF-8 (or cp1252) in Subject/From, no encoded words at all;
- encoded words with unknown charsets ("none", "x-unknown", NUL bytes in the name),
  broken base64 padding, bytes invalid in the declared charset, a UTF-8 character
  split across two adjacent encoded words;
- pipermail's obfuscated addresses, `user at example.com (Full Name)`;
- NUL and other control characters, and megabyte-long names.
"""

from __future__ import annotations

import binascii
import codecs
import functools
import re

from e2g.model import MAX_ADDRESS, MAX_NAME, Address

MAX_PARSED_ADDRESS = (
    64 * 1024
)  # of one address header value: more is not a mail address

# Codecs that are not charsets a mail could sensibly be in, or that turn text into
# something else entirely (escape processors, IDNA).
_REFUSED_CODECS = frozenset(
    {"unicode_escape", "raw_unicode_escape", "punycode", "idna", "mbcs", "oem"}
)
# 7-bit stateful encodings: their bytes are valid ASCII, so "valid UTF-8 first"
# would keep the escape sequences; the declared charset must go first for these.
_SEVEN_BIT_CODECS = frozenset(
    {
        "iso2022_jp",
        "iso2022_jp_1",
        "iso2022_jp_2",
        "iso2022_jp_3",
        "iso2022_kr",
        "utf_7",
    }
)
_WIDE_CODECS = frozenset({"utf_16", "utf_16_le", "utf_16_be", "utf_32", "utf_32_le"})

_FOLD = re.compile(r"\r?\n(?=[ \t])")
_LINE_BREAK = re.compile(r"[\r\n]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ENCODED_WORD = re.compile(r"=\?([^?\s]{1,80})\?([bBqQ])\?([^?]*)\?=")
_QP_ESCAPE = re.compile(rb"=([0-9A-Fa-f]{2})")
_NOT_BASE64 = re.compile(rb"[^A-Za-z0-9+/]")

# Address syntax, tolerant: quoted strings, comments and <...> may contain commas.
_ADDRESS_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|\([^()]*\)?|<[^<>]*>?|[^,"(<]+|,')
_ANGLE = re.compile(r"<([^<>]*)>")
_COMMENT = re.compile(r"\(([^()]*)\)")
_AT_WORD = re.compile(r"^([^\s@<>()\",;]+)\s+at\s+([^\s@<>()\",;]+\.[^\s@<>()\",;]+)$")
# A list's DMARC rewrite of a sender's name: "Jane Doe via io-uring".
_VIA = re.compile(r"\s+via\s+\S.*$", re.IGNORECASE)
_BARE_EMAIL = re.compile(r"[^\s<>()\",;:]+@[^\s<>()\",;:]+")


def unfold(value: str) -> str:
    """Join a folded header value into one line (RFC 5322 section 2.2.3)."""
    if "\n" not in value and "\r" not in value:
        return value
    return _LINE_BREAK.sub(" ", _FOLD.sub("", value)).strip()


@functools.lru_cache(maxsize=256)
def codec_name(charset: str) -> str | None:
    """Python's codec name for a declared charset, or None when unusable."""
    name = charset.strip().strip("\"'").split("*", 1)[0].lower()
    if not name or "\x00" in name or len(name) > 64:
        return None
    try:
        codec = codecs.lookup(name).name.replace("-", "_")
    except (LookupError, ValueError):
        return None
    return None if codec in _REFUSED_CODECS else codec


def decode_bytes(data: bytes, charset: str | None = None) -> str:
    """decode_bytes_as() without the codec it used."""
    return decode_bytes_as(data, charset)[0]


def decode_bytes_as(data: bytes, charset: str | None = None) -> tuple[str, str]:
    """(text, the codec that read it): valid UTF-8 first, then the declared charset,
    then cp1252; "" as the codec when only a guess could read the bytes.

    Mislabelled UTF-8 is the common case (PACKAGES.md), so a valid UTF-8 reading wins
    over the label, except for 7-bit stateful charsets (ISO-2022-JP) where the label
    must. charset-normalizer is the last resort, latin-1 the floor that never fails.
    """
    declared = codec_name(charset) if charset else None
    if declared in _SEVEN_BIT_CODECS or declared in _WIDE_CODECS:
        attempts: tuple[str | None, ...] = (declared, "utf_8", "cp1252")
    else:
        attempts = ("utf_8", declared, "cp1252")
    for codec in attempts:
        if codec is None:
            continue
        try:
            return data.decode(codec), codec
        except (UnicodeDecodeError, LookupError, ValueError):
            continue
    return _guess_decode(data), ""


def _guess_decode(data: bytes) -> str:
    """The last resort for bytes no likely charset reads (PACKAGES.md, "charset")."""
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    return str(best) if best is not None else data.decode("latin_1")


def _word_bytes(encoding: str, text: str) -> bytes:
    """The bytes an encoded word carries; tolerant of bad padding and stray chars."""
    raw = text.encode("ascii", "replace")
    if encoding in "qQ":
        raw = raw.replace(b"_", b" ")
        return _QP_ESCAPE.sub(lambda match: bytes.fromhex(match[1].decode()), raw)
    raw = _NOT_BASE64.sub(b"", raw)
    raw = raw[: len(raw) - len(raw) % 4] if len(raw) % 4 == 1 else raw
    try:
        return binascii.a2b_base64(raw + b"=" * (-len(raw) % 4))
    except binascii.Error:
        return b""


def decode_encoded_words(value: str) -> str:
    """Decode RFC 2047 encoded words, joining adjacent words of one charset.

    Words are joined as bytes before decoding because some mailers split one UTF-8
    character across two words. Whitespace between adjacent words is dropped.
    """
    pieces: list[str] = []
    pending: bytearray = bytearray()
    pending_charset = ""
    position = 0
    after_word = False
    for match in _ENCODED_WORD.finditer(value):
        gap = value[position : match.start()]
        charset = match[1].lower()
        if pending and (gap.strip() or charset != pending_charset):
            pieces.append(decode_bytes(bytes(pending), pending_charset))
            pending.clear()
        if gap.strip() or not after_word:
            pieces.append(gap)
        pending += _word_bytes(match[2], match[3])
        pending_charset = charset
        position = match.end()
        after_word = True
    if pending:
        pieces.append(decode_bytes(bytes(pending), pending_charset))
    pieces.append(value[position:])
    return "".join(pieces)


def decode_header(value: str | None, *, limit: int = MAX_NAME * 16) -> str:
    """A compat32 raw header value as readable text: unfolded, decoded, bounded.

    8-bit bytes arrive as surrogate escapes; they are decoded with the charset
    fallback. NUL and control characters are removed.
    """
    text = clean_raw(value, limit=limit * 2)
    if "=?" in text:
        text = _CONTROL.sub("", decode_encoded_words(text))
    return text[:limit].strip()


def _clean_name(name: str) -> str:
    name = " ".join(name.split())
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "\"'":
        name = name[1:-1]
    return name.replace('\\"', '"').replace("\\\\", "\\").strip()[:MAX_NAME]


def normalise_email(email: str) -> str:
    """Strip, restore `user at host`, and lower-case the domain part."""
    email = email.strip()
    obfuscated = _AT_WORD.match(email)
    if obfuscated:
        email = f"{obfuscated[1]}@{obfuscated[2]}"
    email = "".join(email.split())
    if email[:7].lower() == "mailto:":
        email = email[7:]
    local, at, domain = email.rpartition("@")
    if at:
        email = f"{local}@{domain.lower()}"
    return email[:MAX_ADDRESS]


def parse_address(value: str) -> Address:
    """One decoded address: `Name <a@b>`, `a@b (Name)`, `a at b (Name)`, or `a@b`."""
    # The <address> comes last: look for it in the whole (header-bounded) value, so
    # that a name longer than any bound cannot push it out; bound what is kept.
    value = value.strip()[:MAX_PARSED_ADDRESS]
    angles = _ANGLE.findall(value[-(MAX_ADDRESS + 2) * 4 :])
    if angles:
        email = angles[-1]
        name = _ANGLE.sub(" ", value[: MAX_NAME * 4 + MAX_ADDRESS * 4])
        comment = _COMMENT.search(name)
        name = _COMMENT.sub(" ", name).strip() or (comment[1] if comment else "")
        return Address(_clean_name(name), normalise_email(email))
    value = value[: MAX_ADDRESS + MAX_NAME * 4]
    comment = _COMMENT.search(value)
    bare = _COMMENT.sub(" ", value).strip()
    name = comment[1] if comment else ""
    if _AT_WORD.match(bare) or "@" in bare or (not name and _local_mailbox(bare)):
        return Address(_clean_name(name), normalise_email(bare))
    return Address(_clean_name(bare), "")


def _local_mailbox(text: str) -> bool:
    """`root` or `torvalds` alone (old mail from a local user) is an address; words
    with spaces are a name, and a broken RFC 2047 word is no address either."""
    return bool(text) and not any(c.isspace() for c in text) and "=?" not in text


def split_addresses(value: str, *, limit: int) -> list[str]:
    """The address pieces of a To:/Cc: value, split on commas outside quoting."""
    if '"' not in value and "(" not in value and "<" not in value:
        return [
            piece.strip() for piece in value.split(",", limit)[:limit] if piece.strip()
        ]
    pieces: list[str] = []
    current: list[str] = []
    for token in _ADDRESS_TOKEN.findall(value):
        if token != ",":
            current.append(token)
            continue
        piece = "".join(current).strip()
        current = []
        if piece:
            pieces.append(piece)
        if len(pieces) >= limit:
            return pieces
    piece = "".join(current).strip()
    if piece:
        pieces.append(piece)
    return pieces[:limit]


def parse_address_list(value: str, *, limit: int) -> tuple[str, ...]:
    """Lower-cased e-mail addresses of a raw To:/Cc: value, bounded, de-duplicated."""
    found: dict[str, None] = {}
    for piece in split_addresses(value, limit=limit):
        angles = _ANGLE.findall(piece)
        if angles:
            email = angles[-1]
        else:
            bare = _COMMENT.sub(" ", piece).strip()
            match = _BARE_EMAIL.search(bare)
            email = match[0] if match else bare if _AT_WORD.match(bare) else ""
        email = email.strip().lower()
        if " " in email or "\t" in email or email.startswith("mailto:"):
            email = normalise_email(email).lower()
        if "@" in email:
            found.setdefault(email, None)
    return tuple(found)[:limit]


def named_via_list(name: str) -> bool:
    """Whether a From: name is a list's DMARC rewrite ("Jane Doe via io-uring")."""
    return _VIA.search(name) is not None


def without_via(name: str) -> str:
    """The sender's own name in a DMARC-rewritten From: ("Jane Doe via x" -> "Jane Doe")."""
    return _VIA.sub("", name)


def clean_raw(value: str | None, *, limit: int) -> str:
    """A raw header value unfolded and surrogate-free, without RFC 2047 decoding."""
    if not value:
        return ""
    text = unfold(value[: limit * 4])
    if not text.isascii():
        text = decode_bytes(text.encode("utf-8", "surrogateescape"))
    return _CONTROL.sub("", text)[:limit].strip()
