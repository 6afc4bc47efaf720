"""How the sample's mail is written: headers, threading and the odd transports.

Mail values (headers + body bytes) built from git format-patch output, in the header
order of git send-email, mutt and other mailers; QP, latin-1, RFC 2047, DMARC and
attachment rewrites. No IO and no git. Used by sample_mail.py (the story) and
make_sample.py (which writes the archives).
"""

from __future__ import annotations

import base64
import email.utils
import quopri
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from sample_tree import Person

SEND_EMAIL = "git-send-email 2.37.3"
MUTT = "Mutt/2.2.7 (2022-08-07)"
DEVEL = "frob-devel@lists.example.org"
NET = "frob-net@lists.example.org"
THUNDERBIRD = (
    "Mozilla/5.0 (X11; Linux x86_64; rv:102.0) Gecko/20100101 Thunderbird/102.2.2"
)


@dataclass(frozen=True, slots=True)
class FormattedPatch:
    """One message of `git format-patch --stdout` output."""

    headers: tuple[tuple[str, str], ...]  # From, Date, Subject, [MIME-Version, ...]
    body: str
    text: str  # the whole message, "From <sha> Mon Sep 17 ..." line included

    def header(self, name: str) -> str:
        return next(value for key, value in self.headers if key.lower() == name.lower())


class Sources(Protocol):
    """What the story needs from git (make_sample.GitSources implements it)."""

    def sha(self, key: str) -> str: ...

    def patches(
        self,
        keys: tuple[str, ...],
        *,
        prefix: str = "PATCH",
        early: bool = False,
        cover: tuple[Person, datetime] | None = None,
        sender: Person | None = None,
    ) -> list[FormattedPatch]: ...

    def old_style_diff(
        self, key: str, *, stamps: tuple[str, str], diff_lines: bool
    ) -> str: ...

    def request_pull(self, base: str, tip: str) -> str: ...


@dataclass(slots=True)
class Mail:
    envelope: str  # the sender for the mbox "From " line and Received:
    received: datetime  # when lists.example.org got it (the true time)
    subject: str
    message_id: str | None
    references: tuple[str, ...]
    headers: list[tuple[str, str]]
    body: bytes
    lists: tuple[str, ...]


@dataclass(slots=True)
class Ledger:
    """The ground truth that expected.json is written from."""

    postings: list[tuple[str, str, str]] = field(default_factory=list)  # key, id, match
    covers: list[tuple[tuple[str, ...], str]] = field(default_factory=list)
    cases: dict[str, dict[str, str | None]] = field(default_factory=dict)

    def case(self, name: str, mail: Mail, archive: str, note: str) -> None:
        self.cases[name] = {
            "message_id": mail.message_id,
            "subject": mail.subject,
            "archive": archive,
            "note": note,
        }


def date(moment: datetime) -> str:
    return email.utils.format_datetime(moment)


def thread(parent: Mail | None) -> tuple[str | None, tuple[str, ...]]:
    if parent is None or parent.message_id is None:
        return None, parent.references if parent else ()
    return parent.message_id, (*parent.references, parent.message_id)[-8:]


def thread_headers(parent: Mail | None) -> list[tuple[str, str]]:
    in_reply_to, references = thread(parent)
    if in_reply_to is None:
        return []
    return [
        ("In-Reply-To", f"<{in_reply_to}>"),
        ("References", "\n ".join(f"<{ref}>" for ref in references)),
    ]


def addresses(people: tuple[Person | str, ...], separator: str = ", ") -> str:
    return separator.join(p.ident if isinstance(p, Person) else p for p in people)


def quote(text: str) -> str:
    return "".join(f"> {line}\n" if line else ">\n" for line in text.splitlines())


def excerpt(body: str, start: str, count: int) -> str:
    """`count` lines of a patch body from the first line that starts with `start`."""
    lines = body.splitlines()
    first = next(n for n, line in enumerate(lines) if line.startswith(start))
    return "\n".join(lines[first : first + count]) + "\n"


# --- building one mail --------------------------------------------------------------
def patch_mail(
    patch: FormattedPatch,
    *,
    message_id: str,
    to: tuple[Person | str, ...],
    received: datetime,
    lists: tuple[str, ...],
    parent: Mail | None = None,
    cc: tuple[Person | str, ...] = (),
    mailer: str = SEND_EMAIL,
) -> Mail:
    """A patch as git send-email sends it: format-patch headers plus addressing."""
    in_reply_to, references = thread(parent)
    mime = [(k, v) for k, v in patch.headers if k not in ("From", "Date", "Subject")]
    headers = [("From", patch.header("From")), ("To", addresses(to))]
    headers += (
        [("Cc", addresses(cc, separator=",\n\t"))] if cc else []
    )  # as send-email folds
    headers += [
        ("Subject", patch.header("Subject")),
        ("Date", patch.header("Date")),
        ("Message-Id", f"<{message_id}>"),
        ("X-Mailer", mailer),
    ]
    headers += thread_headers(parent) + mime
    sender = patch.header("From").rsplit("<", 1)[-1].rstrip(">")
    return Mail(
        sender,
        received,
        unfold(patch.header("Subject")),
        message_id,
        references,
        headers,
        patch.body.encode(),
        lists,
    )


def unfold(value: str) -> str:
    return re.sub(r"\n[ \t]+", " ", value)


def text_mail(
    sender: Person,
    *,
    subject: str,
    sent: datetime,
    received: datetime,
    message_id: str | None,
    to: tuple[Person | str, ...],
    lists: tuple[str, ...],
    body: str,
    parent: Mail | None = None,
    cc: tuple[Person | str, ...] = (),
    agent: str = MUTT,
    date_header: str | None = None,
) -> Mail:
    """A hand-written mail (reply, question, pull request) in mutt's header order."""
    headers = [
        ("Date", date_header or date(sent)),
        ("From", sender.ident),
        ("To", addresses(to)),
    ]
    headers += [("Cc", addresses(cc))] if cc else []
    headers.append(("Subject", subject))
    headers += [("Message-ID", f"<{message_id}>")] if message_id else []
    charset = "us-ascii" if body.isascii() else "utf-8"
    headers += thread_headers(parent) + [
        ("MIME-Version", "1.0"),
        ("Content-Type", f"text/plain; charset={charset}"),
        ("Content-Disposition", "inline"),
        ("User-Agent", agent),
    ]
    _, references = thread(parent)
    return Mail(
        sender.email,
        received,
        subject,
        message_id,
        references,
        headers,
        body.encode(),
        lists,
    )


def list_address(name: str) -> str:
    return f"{name}@lists.example.org"


def reply(
    sender: Person,
    parent: Mail,
    *,
    sent: datetime,
    received: datetime,
    message_id: str | None,
    body: str,
    lists: tuple[str, ...] | None = None,
    cc: tuple[Person | str, ...] = (),
    agent: str = MUTT,
    date_header: str | None = None,
) -> Mail:
    """A reply to `parent`, to the lists it went to (or `lists`)."""
    lists = lists or parent.lists
    subject = (
        parent.subject if parent.subject.startswith("Re:") else f"Re: {parent.subject}"
    )
    return text_mail(
        sender,
        subject=subject,
        sent=sent,
        received=received,
        message_id=message_id,
        to=tuple(list_address(n) for n in lists),
        cc=cc,
        parent=parent,
        lists=lists,
        body=body,
        agent=agent,
        date_header=date_header,
    )


def set_header(mail: Mail, name: str, value: str) -> None:
    """Replace a header's value, or append it."""
    for index, (key, _) in enumerate(mail.headers):
        if key.lower() == name.lower():
            mail.headers[index] = (key, value)
            return
    mail.headers.append((name, value))


def drop_headers(mail: Mail, *names: str) -> None:
    lowered = {name.lower() for name in names}
    mail.headers[:] = [(k, v) for k, v in mail.headers if k.lower() not in lowered]


# --- the odd transports -------------------------------------------------------------
def as_quoted_printable(mail: Mail) -> None:
    """What a corporate mailer does to an inline patch: QP, `=` as =3D, soft breaks."""
    drop_headers(mail, "Content-Type", "Content-Transfer-Encoding", "MIME-Version")
    mail.headers += [
        ("MIME-Version", "1.0"),
        ("Content-Type", 'text/plain; charset="utf-8"'),
        ("Content-Transfer-Encoding", "quoted-printable"),
    ]
    mail.body = quopri.encodestring(mail.body)


def as_latin1(mail: Mail, person: Person) -> None:
    """An old mailer that writes ISO-8859-1, headers (RFC 2047 Q) and body alike."""
    encoded = "".join(
        c
        if c.isascii() and c not in "=?_ "
        else ("_" if c == " " else "".join(f"={b:02X}" for b in c.encode("latin-1")))
        for c in person.name
    )
    set_header(mail, "From", f"=?iso-8859-1?q?{encoded}?= <{person.email}>")
    drop_headers(mail, "Content-Type", "Content-Transfer-Encoding", "MIME-Version")
    mail.headers += [
        ("MIME-Version", "1.0"),
        ("Content-Type", "text/plain; charset=iso-8859-1"),
        ("Content-Transfer-Encoding", "8bit"),
    ]
    mail.body = mail.body.decode().encode("latin-1")


def rfc2047_base64_from(mail: Mail, person: Person) -> None:
    encoded = base64.b64encode(person.name.encode()).decode()
    set_header(mail, "From", f"=?UTF-8?B?{encoded}?= <{person.email}>")


def dmarc_rewrite(mail: Mail, person: Person, list_name: str) -> None:
    """The list rewrites From: because the author's domain publishes p=reject."""
    set_header(
        mail, "From", f'"{person.name} via {list_name}" <{list_name}@lists.example.org>'
    )
    mail.headers += [("Reply-To", person.ident), ("X-Original-From", person.ident)]


def as_attachment(mail: Mail, patch: FormattedPatch, filename: str, note: str) -> None:
    """A patch attached (base64 text/x-patch) to a short note, as Thunderbird sends it."""
    boundary = "------------frob7Qm2Xc4Lp9Ws1Ve8Rt3Yk"
    attachment = base64.encodebytes(patch.text.encode()).decode()
    drop_headers(
        mail, "Content-Type", "Content-Transfer-Encoding", "MIME-Version", "X-Mailer"
    )
    mail.headers += [
        ("User-Agent", THUNDERBIRD),
        ("MIME-Version", "1.0"),
        ("Content-Type", f'multipart/mixed;\n boundary="{boundary}"'),
        ("Content-Language", "en-US"),
    ]
    mail.body = (
        "This is a multi-part message in MIME format.\n"
        f"--{boundary}\nContent-Type: text/plain; charset=UTF-8; format=flowed\n"
        f"Content-Transfer-Encoding: 7bit\n\n{note}\n"
        f'--{boundary}\nContent-Type: text/x-patch; charset=UTF-8;\n name="{filename}"\n'
        f'Content-Disposition: attachment;\n filename="{filename}"\n'
        f"Content-Transfer-Encoding: base64\n\n{attachment}\n--{boundary}--\n"
    ).encode()


def fill_cover(cover: FormattedPatch, title: str, blurb: str) -> FormattedPatch:
    headers = tuple(
        (k, v.replace("*** SUBJECT HERE ***", title)) for k, v in cover.headers
    )
    body = cover.body.replace("*** BLURB HERE ***", blurb)
    return FormattedPatch(headers, body, cover.text)


def series(
    patches: list[FormattedPatch],
    ids: tuple[str, ...],
    *,
    title: str,
    blurb: str,
    to: tuple[Person | str, ...],
    cc: tuple[Person | str, ...],
    received: datetime,
    lists: tuple[str, ...],
) -> list[Mail]:
    """A cover letter and its patches, as git send-email threads them."""
    cover = patch_mail(
        fill_cover(patches[0], title, blurb),
        message_id=ids[0],
        to=to,
        cc=cc,
        received=received,
        lists=lists,
    )
    return [cover] + [
        patch_mail(
            patch,
            message_id=message_id,
            to=to,
            cc=cc,
            parent=cover,
            received=received.replace(second=received.second + n),
            lists=lists,
        )
        for n, (patch, message_id) in enumerate(
            zip(patches[1:], ids[1:], strict=True), start=1
        )
    ]


@dataclass(frozen=True, slots=True)
class OldMail:
    """A message as a Mailman 2 pipermail .txt archive keeps it (few headers)."""

    sender: Person
    sent: datetime
    subject: str
    message_id: str
    parent: OldMail | None
    body: str
