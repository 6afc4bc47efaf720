"""RawMessage -> Message: headers, ids, author, dates, body parts, kind.

Pure: bytes in, model objects out; never raises on bad input and never reads the
clock (callers pass `now`). Used by ingest.pipeline. The email package parses the MIME
structure with the fast compat32 policy; every header value is decoded here (through
mail.headers), because compat32 leaves them folded and 8-bit.

Decisions on odd mail:
- an mbox "From " line left at the top of the bytes is taken as the separator;
- no Message-ID: a deterministic synthetic id from a hash of the bytes, flagged;
- DMARC rewrites ("Jane via list <list@host>", From equal to the list address, or an
  X-Original-From header): the author comes from X-Original-From, Reply-To, or the
  in-body From: line, in that order;
- MIME trees are walked with an explicit stack, bounded in depth and part count;
- bytes that are not a mail at all (empty, no header block, none of From, Subject,
  Date, Message-ID) are Malformed; anything mail-like parses with fallbacks;
- a patch wrapped in uuencode, gzip or bzip2 (old mail's way to survive mailers, or
  to save bandwidth) is unwrapped (mail.encoded); a wrapped part that cannot be read
  within bounds (too large or a decompression bomb, truncated, compressed twice,
  corrupt) is left out and named in Message.defects: the mail is kept (its author,
  subject and thread still count), and the ingest counts and reports the defect, so
  that it is not taken for a mail that simply carries no patch.
"""

from __future__ import annotations

import email
import email.message
import email.policy
import hashlib
import html
import re
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from e2g.mail import dates, encoded, headers, msgid, trailers
from e2g.mail.backport import STABLE_HEADERS
from e2g.mail.patch import find_patch
from e2g.mail.pull import find_pull
from e2g.mail.quoted import quoted_patch_id
from e2g.mail.subject import parse_subject
from e2g.model import (
    MAX_BODY,
    MAX_DIFF,
    MAX_REFERENCES,
    MAX_SUBJECT,
    Address,
    DateSource,
    Kind,
    SubjectInfo,
)
from e2g.model.mail import Malformed, Message, PullRequest, RawMessage
from e2g.model.patch import Patch

MAX_HEADERS = 1024
MAX_HEADER_VALUE = 64 * 1024
MAX_RECIPIENTS = 256
MAX_DATE_RAW = 256
MAX_LIST_ID = 256
MAX_STABLE = 200  # characters kept of an X-stable: or X-stable-base: header
_MAIL_HEADERS = ("from", "subject", "date", "message-id")
_READ_HEADERS = frozenset(
    {*_MAIL_HEADERS, "in-reply-to", "references", "received", "list-id", "list-post",
     "x-original-from", "reply-to", "to", "cc", "content-type", *STABLE_HEADERS}
)  # fmt: skip
_NESTED_TYPES = ("multipart/", "message/")
_FIELD_BREAK = re.compile(r"\n(?![ \t])")

_MAILTO = re.compile(r"mailto:([^>\s?,]+)", re.IGNORECASE)
_ANGLE = re.compile(r"<([^<>]*)>")
_IN_BODY_FROM = re.compile(r"^From:[ \t]*(\S[^\n]*)$")

Fields = dict[str, list[str]]

MAX_MIME_DEPTH = 16
MAX_MIME_PARTS = 256
MAX_TEXT_PARTS = 32
_PATCH_TYPES = frozenset(
    {"text/x-patch", "text/x-diff", "application/x-patch", "application/x-diff",
     "text/diff", "text/patch"}
)  # fmt: skip
_PATCH_SUFFIXES = (".patch", ".diff")
_UU_ENCODINGS = frozenset({"x-uuencode", "uuencode", "x-uue", "uue"})
_PARAM = re.compile(r";\s*([\w*-]+)\s*=\s*(\"[^\"]*\"?|[^;\s]*)")
_DIFF_MARK = re.compile(r"^(?:diff |Index: |--- |\+\+\+ )", re.MULTILINE)
_HTML_DROP = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_HTML_BREAK = re.compile(r"<br\s*/?>|</(?:p|div|li|tr|h\d)\s*>", re.IGNORECASE)
_HTML_TAG = re.compile(r"<[^>]*>")


class BodyParts(NamedTuple):
    """The decoded text parts of a mail, in order: the body, then patch parts; and
    why a wrapped (uuencoded, gzipped) part could not be read, if one could not."""

    texts: tuple[str, ...]
    defects: tuple[encoded.Defect, ...] = ()
    # Per text, the codec that read its bytes ("" when unknown): a diff's patch-id
    # is taken on the bytes the author's tree held, as git takes it.
    codecs: tuple[str, ...] = ()


class _Part(NamedTuple):
    content_type: str
    charset: str | None
    filename: str
    attachment: bool
    payload: bytes
    unwrapped: bool = False  # the payload came out of uuencode, gzip or bzip2
    defect: encoded.Defect | None = None


def _first(fields: Fields, name: str) -> str | None:
    values = fields.get(name)
    return values[0] if values else None


def _split_from_line(raw: RawMessage) -> tuple[bytes, bytes | None]:
    """The mail bytes and the mbox separator, taking one left at the top."""
    data = raw.data.lstrip(b"\r\n")
    if data.startswith(b"From "):
        line, _, rest = data.partition(b"\n")
        return rest, raw.from_line or line.rstrip(b"\r")
    return data, raw.from_line


def _read_fields(items: Sequence[tuple[str, object]]) -> Fields:
    """The headers parsing reads, by lower-case name; the rest stay in the raw bytes."""
    fields: Fields = {}
    for name, value in items[:MAX_HEADERS]:
        key = name.strip().lower()
        if key in _READ_HEADERS:
            text = value if isinstance(value, str) else str(value)
            fields.setdefault(key, []).append(text[:MAX_HEADER_VALUE])
    return fields


def _split_header_block(block: str) -> list[tuple[str, str]] | None:
    """(name, raw value) pairs as compat32 would give them; None for anything odd.

    Odd means a line that is neither a header nor a continuation: the stdlib parser
    then ends the headers early, and it is left to reproduce that exactly.
    """
    if "\r" in block:
        block = block.replace("\r\n", "\n")
    items: list[tuple[str, str]] = []
    for field in _FIELD_BREAK.split(block):
        name, colon, value = field.partition(":")
        if (
            not colon
            or not name
            or " " in name
            or not name.isascii()
            or not name.isprintable()
        ):
            return None
        items.append((name, value.lstrip()))
    return items


def _header_end(data: bytes) -> tuple[int, int]:
    """Where the header block ends and the body starts; (-1, -1) when no blank line."""
    end = data.find(b"\n\n")
    crlf = data.find(b"\r\n\r\n", 0, end if end >= 0 else len(data))
    if crlf >= 0:
        return crlf, crlf + 4
    return (end, end + 2) if end >= 0 else (-1, -1)


def _parse_mail(data: bytes) -> tuple[Fields, email.message.Message]:
    """Headers and MIME tree; single-part mails skip the stdlib's line-by-line feed.

    compat32's feed parser costs more than everything else here together, mostly
    for long Received/DKIM header blocks and bodies read a line at a time. A plain
    header block is split here and the body attached as the parser would store it;
    multipart and message/* mails, and odd header blocks, take the stdlib parse.
    """
    end, body = _header_end(data)
    items = None
    if end > 0:
        items = _split_header_block(data[:end].decode("ascii", "surrogateescape"))
    if items is not None:
        fields = _read_fields(items)
        content_type = fields.get("content-type", [""])[0].lstrip().lower()
        if not content_type.startswith(_NESTED_TYPES):
            mail = email.message.Message()
            for name, value in items:
                if name.lower().startswith("content-"):
                    mail[name] = value
            mail.set_payload(data[body:].decode("ascii", "surrogateescape"))
            return fields, mail
    mail = email.message_from_bytes(data, policy=email.policy.compat32)
    return _read_fields(list(mail.raw_items())), mail


def parse_message(raw: RawMessage, *, now: datetime) -> Message | Malformed:
    """Parse one mail's bytes; Malformed only when they are not a mail at all."""
    data, from_line = _split_from_line(raw)
    if not data.strip():
        return Malformed("empty", raw.origin)
    try:
        fields, mail = _parse_mail(data)
    except RecursionError:  # the stdlib parser recurses on nested multiparts
        return Malformed("mime too deep", raw.origin)
    if not any(name in fields for name in _MAIL_HEADERS):
        return Malformed("not a mail", raw.origin)
    parts = read_body_parts(mail)
    commentary, patch = (
        find_patch(parts.texts, codecs=parts.codecs) if parts.texts else ("", None)
    )
    return _build(
        fields,
        parts,
        commentary=commentary,
        patch=patch,
        synthetic=hashlib.sha1(data, usedforsecurity=False).hexdigest()[:32],
        from_line=from_line,
        now=now,
    )


def _build(
    fields: Fields,
    parts: BodyParts,
    *,
    commentary: str,
    patch: Patch | None,
    synthetic: str,
    from_line: bytes | None,
    now: datetime,
) -> Message:
    message_id = msgid.from_header(_first(fields, "message-id"))
    subject = parse_subject(
        headers.decode_header(_first(fields, "subject"), limit=MAX_SUBJECT)
    )
    in_body_from = _in_body_from(parts.texts)
    list_id = _list_id(fields)
    references = msgid.from_references(
        " ".join(fields.get("references", [])), limit=MAX_REFERENCES
    )
    in_reply_to = _in_reply_to(fields, message_id)
    references = tuple(ref for ref in references if ref != message_id)
    pull = find_pull(commentary or "\n".join(parts.texts[:1]))
    date, date_raw, date_source, received = _dates(fields, from_line=from_line, now=now)
    kind = _kind(subject, patch=patch, pull=pull, parent=in_reply_to or references)
    return Message(
        message_id=message_id or f"e2g-{synthetic}@synthetic",
        synthetic_id=message_id is None,
        subject=subject,
        author=_author(fields, in_body_from=in_body_from, list_id=list_id),
        patch_author=in_body_from if patch is not None else None,
        date=date,
        date_raw=date_raw,
        date_source=date_source,
        received_at=received,
        list_id=list_id,
        in_reply_to=in_reply_to,
        references=references,
        kind=kind,
        body=commentary[:MAX_BODY],
        patch=patch,
        pull=pull,
        trailers=trailers.find_in_mail(commentary),
        to=_recipients(fields),
        defects=tuple(dict.fromkeys(defect.reason for defect in parts.defects)),
        stable=_stable(fields, STABLE_HEADERS[0]),
        stable_base=_stable(fields, STABLE_HEADERS[1]),
        quoted_patch_id=(
            quoted_patch_id(parts.texts[0])
            if kind is Kind.REPLY and parts.texts
            else None
        ),
    )


def _stable(fields: Fields, name: str) -> str | None:
    return headers.clean_raw(_first(fields, name), limit=MAX_STABLE) or None


def _in_reply_to(fields: Fields, message_id: str | None) -> str | None:
    for candidate in msgid.from_references(_first(fields, "in-reply-to"), limit=4):
        if candidate != message_id:
            return candidate
    return None


def _dates(
    fields: Fields, *, from_line: bytes | None, now: datetime
) -> tuple[datetime | None, str, DateSource, datetime | None]:
    date_raw = headers.clean_raw(_first(fields, "date"), limit=MAX_DATE_RAW)
    received = dates.parse_received(fields.get("received", []))
    separator = dates.parse_from_line_date(from_line) if from_line else None
    date, source = dates.sanitise_date(
        dates.parse_date(date_raw), received=received, from_line=separator, now=now
    )
    return date, date_raw, source, received


def _list_id(fields: Fields) -> str | None:
    """List-Id: "Linux on PowerPC <cbe-oss-dev.ozlabs.org>" -> "cbe-oss-dev.ozlabs.org"."""
    text = headers.clean_raw(_first(fields, "list-id"), limit=MAX_LIST_ID * 4)
    angles = _ANGLE.findall(text)
    candidate = angles[-1] if angles else text if " " not in text else ""
    candidate = "".join(candidate.split()).lower()[:MAX_LIST_ID]
    return candidate or None


def _list_addresses(fields: Fields, list_id: str | None) -> frozenset[str]:
    """The list's own posting addresses, from List-Post: and List-Id:."""
    found = {
        match.lower()
        for match in _MAILTO.findall(
            headers.clean_raw(_first(fields, "list-post"), limit=1024)
        )
    }
    if list_id and "." in list_id:
        local, _, domain = list_id.partition(".")
        found.add(f"{local}@{domain}")
    return frozenset(found)


def _author(
    fields: Fields, *, in_body_from: Address | None, list_id: str | None
) -> Address:
    sender = headers.parse_address(headers.decode_header(_first(fields, "from")))
    list_addresses = _list_addresses(fields, list_id)
    rewritten = (
        headers.named_via_list(sender.name)
        or sender.email.lower() in list_addresses
        or "x-original-from" in fields
    )
    if not rewritten:
        return sender
    for name in ("x-original-from", "reply-to"):
        value = _first(fields, name)
        if value:
            candidate = headers.parse_address(headers.decode_header(value))
            if "@" in candidate.email and candidate.email.lower() not in list_addresses:
                return candidate
    if in_body_from is not None and "@" in in_body_from.email:
        return in_body_from
    name = headers.without_via(sender.name).strip().strip("\"'")
    return Address(name, sender.email)


def _in_body_from(texts: Sequence[str]) -> Address | None:
    """git format-patch's in-body "From: Author <a@b>" at the top of a text part."""
    for text in texts[:4]:
        lines = [line for line in text[:4096].splitlines()[:8] if line.strip()]
        if lines and lines[0].startswith("From ") and not lines[0].startswith("From:"):
            lines = lines[1:]  # an attached format-patch file keeps its mbox line
        match = _IN_BODY_FROM.match(lines[0].strip()) if lines else None
        if match:
            address = headers.parse_address(headers.decode_header(match[1]))
            if address.email or address.name:
                return address
    return None


def _recipients(fields: Fields) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for name in ("to", "cc"):
        for value in fields.get(name, []):
            text = headers.clean_raw(value, limit=MAX_HEADER_VALUE)
            for address in headers.parse_address_list(text, limit=MAX_RECIPIENTS):
                found.setdefault(address, None)
    return tuple(found)[:MAX_RECIPIENTS]


def _kind(
    subject: SubjectInfo,
    *,
    patch: Patch | None,
    pull: PullRequest | None,
    parent: object,
) -> Kind:
    """PULL > PATCH > COVER > REPLY > OTHER (DESIGN.md, "Kind").

    A cover is a 0/N, or a [PATCH]-tagged mail with no diff and no Re: (a series
    cover may be sent in reply to the previous version, so a parent does not count).
    """
    if pull is not None:
        return Kind.PULL
    if patch is not None:
        return Kind.PATCH
    if not subject.is_reply and subject.part == 0 and subject.total:
        return Kind.COVER
    if not subject.is_reply and subject.is_patch_tag and not subject.part:
        return Kind.COVER
    if subject.is_reply or parent:
        return Kind.REPLY
    return Kind.OTHER


def _leaves(mail: email.message.Message) -> list[email.message.Message]:
    """Leaf parts in document order, walked with a stack (never recursion)."""
    stack: list[tuple[email.message.Message, int]] = [(mail, 0)]
    leaves: list[email.message.Message] = []
    visited = 0
    while stack and visited < MAX_MIME_PARTS:
        part, depth = stack.pop()
        visited += 1
        if not part.is_multipart():
            leaves.append(part)
        elif depth < MAX_MIME_DEPTH:
            payload = part.get_payload()
            members = payload if isinstance(payload, list) else []
            children = [
                child
                for child in members[:MAX_MIME_PARTS]
                if isinstance(child, email.message.Message)
            ]
            stack.extend((child, depth + 1) for child in reversed(children))
    return leaves


def _params(value: str) -> dict[str, str]:
    return {
        name.lower().rstrip("*"): raw.strip('"') for name, raw in _PARAM.findall(value)
    }


def _part_headers(part: email.message.Message) -> dict[str, str]:
    """The MIME headers of one part, raw values cleaned, first occurrence wins."""
    found: dict[str, str] = {}
    for key, value in part.raw_items():
        name = key.lower()
        if name.startswith("content-") and name not in found:
            text = value if isinstance(value, str) else str(value)
            found[name] = headers.clean_raw(text, limit=4096)
    return found


def _read_part(part: email.message.Message, budget: encoded.Budget) -> _Part:
    mime = _part_headers(part)
    content_type = mime.get("content-type", "")
    disposition = mime.get("content-disposition", "")
    type_params = _params(content_type)
    disposition_params = _params(disposition)
    filename = disposition_params.get("filename") or type_params.get("name") or ""
    payload = _payload_bytes(
        part, mime.get("content-transfer-encoding", ""), filename, budget
    )
    return _Part(
        content_type=content_type.partition(";")[0].strip().lower() or "text/plain",
        charset=type_params.get("charset"),
        filename=filename.lower(),
        attachment=disposition.lower().startswith("attachment"),
        payload=payload.data,
        unwrapped=payload.changed,
        defect=payload.defect,
    )


def _payload_bytes(
    part: email.message.Message, encoding: str, name: str, budget: encoded.Budget
) -> encoded.Unwrapped:
    """The part's bytes with base64/quoted-printable/uuencode undone, and then gzip
    or bzip2 (known by their magic bytes: mailers label them every which way).

    The stdlib decoder tolerates bad base64 padding (it records a defect and goes
    on). Its uudecoder hides a truncated block (it returns the encoded text), so
    uuencode is ours (mail.encoded), bounded and telling truncation apart.
    """
    if encoding.strip().lower() in _UU_ENCODINGS:
        text = part.get_payload(decode=False)
        blocks = encoded.uudecode_blocks(text if isinstance(text, str) else "", budget)
        if blocks:
            return blocks[0].result
    payload = part.get_payload(decode=True)
    data = payload if isinstance(payload, bytes) else b""
    if data[:64].lstrip()[:6] in (b"begin ", b"begin-"):
        # A part that is one uuencoded file under a 7bit label (older mailers).
        blocks = encoded.uudecode_blocks(data.decode("latin-1"), budget)
        if blocks:
            return blocks[0].result
    unwrapped = encoded.unwrap(data, budget, name=name)
    if unwrapped.changed or unwrapped.defect is not None:
        return unwrapped
    return encoded.Unwrapped(data[: MAX_DIFF * 2])


def _strip_html(text: str) -> str:
    """A crude text rendering of an HTML-only mail: tags out, entities decoded."""
    text = _HTML_DROP.sub("", text)
    text = _HTML_BREAK.sub("\n", text)
    return html.unescape(_HTML_TAG.sub("", text))


def _is_patch_part(part: _Part) -> bool:
    return part.content_type in _PATCH_TYPES or part.filename.endswith(_PATCH_SUFFIXES)


def _reads_as_plain(content_type: str) -> bool:
    """text/plain, and what reads as it: a text subtype e2g does not know (RFC 2046
    4.1.4 says so), and a multipart the parser could not split (no boundary), whose
    one payload is the whole text of the mail."""
    if content_type.startswith("text/"):
        return content_type != "text/html"
    return content_type.startswith("multipart/")


def read_body_parts(mail: email.message.Message) -> BodyParts:
    """The body (first inline text/plain, else crude text of the HTML) and patches.

    Other text/plain parts are kept only when they hold a diff: mailers that attach a
    patch as an unnamed text/plain part are common, list footers are not patches. So
    are uuencoded blocks and gzip/bzip2 parts, once unwrapped: old mail sent patches
    that way (``begin 644 fix.diff.gz``), and a compressed log is no patch.
    """
    found = _FoundParts()
    for leaf in _leaves(mail):
        found.add(_read_part(leaf, found.budget))
        if found.defects or len(found.extra) >= MAX_TEXT_PARTS:
            break  # past a defect (or the part bound) nothing more is read
    return found.parts()


class _FoundParts:
    """What read_body_parts collects, leaf by leaf, in document order."""

    def __init__(self) -> None:
        self.budget = encoded.Budget()
        self.body: str | None = None
        self.body_codec = ""
        self.html: str | None = None
        self.extra: list[str] = []
        self.extra_codecs: list[str] = []
        self.defects: list[encoded.Defect] = []

    def add(self, part: _Part) -> None:
        if part.defect is not None:
            self.defects.append(part.defect)
        elif part.unwrapped:
            self._keep_diff(*headers.decode_bytes_as(part.payload, part.charset))
        elif _is_patch_part(part):
            text, codec = headers.decode_bytes_as(part.payload, part.charset)
            self.extra.append(text)
            self.extra_codecs.append(codec)
            self._add_uuencoded(text)
        elif _reads_as_plain(part.content_type):
            text, codec = headers.decode_bytes_as(part.payload, part.charset)
            patch_at = self._add_uuencoded(text)
            if self.body is None and not part.attachment:
                # As with an inline diff, the commentary is the text before it.
                self.body = text if patch_at is None else text[:patch_at]
                self.body_codec = codec
            else:
                self._keep_diff(text, codec)
        elif part.content_type == "text/html" and self.html is None:
            self.html = headers.decode_bytes(part.payload, part.charset)

    def _keep_diff(self, text: str, codec: str) -> None:
        if _DIFF_MARK.search(text):
            self.extra.append(text)
            self.extra_codecs.append(codec)

    def _add_uuencoded(self, text: str) -> int | None:
        """Keep the diffs uuencoded into a text part (``begin 644 fix.diff`` ...
        ``end``); return where the first such block starts in `text`."""
        if "begin" not in text:
            return None
        patch_at: int | None = None
        for block in encoded.uudecode_blocks(text, self.budget):
            if block.result.defect is not None:
                self.defects.append(block.result.defect)
                break
            kept = len(self.extra)
            self._keep_diff(*headers.decode_bytes_as(block.result.data))
            if patch_at is None and len(self.extra) > kept:
                patch_at = block.start
        return patch_at

    def parts(self) -> BodyParts:
        body = self.body
        if body is None and self.html is not None:
            body = _strip_html(self.html)
        texts = ([body] if body is not None else []) + self.extra[:MAX_TEXT_PARTS]
        codecs = ([self.body_codec] if body is not None else []) + self.extra_codecs
        return BodyParts(
            texts=tuple(text.replace("\x00", "") for text in texts),
            defects=tuple(self.defects),
            codecs=tuple(codecs[: len(texts)]),
        )
