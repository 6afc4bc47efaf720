"""`e2g ty`: "applied, thanks" drafts for the series whose patches landed, as an mbox.

For a maintainer who commits without b4: each series with a `patch-applied` event
since the last run (or since `--since`) gets one draft, threaded to the series'
head (its cover letter, else its first part: In-Reply-To and References), To its
author, Cc the original mail's To and Cc, with "(subset)" in the subject when only
part of the series landed, and each patch with its commit (tree, branch, first
release). e2g never sends them: they are drafts for a mail client.

The last run is remembered as the highest event id it read, in the data dir's
`ty-last` file (the store stays read-only here); `--since` reads from a moment or
an event id instead and leaves the mark as it is.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
from datetime import datetime
from email.utils import format_datetime, getaddresses
from pathlib import Path
from typing import NamedTuple

from e2g.api.basis import now as clock
from e2g.api.basis import open_store
from e2g.api.queue import states
from e2g.api.queue.listing import PatchView, view_of
from e2g.api.queue.refresh import APPLIED
from e2g.config import Settings
from e2g.index.store import EventFilter, QueueRow, Store

MARK = "ty-last"
MAX_EVENTS = 100_000
MAX_CC = 50  # addresses copied from the original mail
_HEADERS = email.parser.BytesHeaderParser(policy=email.policy.compat32)


class Draft(NamedTuple):
    series: str  # the head's Message-ID
    subject: str
    to: str
    cc: tuple[str, ...]
    references: tuple[str, ...]
    landed: tuple[PatchView, ...]
    total: int
    message_id: str
    body: str

    @property
    def subset(self) -> bool:
        return len(self.landed) < self.total


class Thanks(NamedTuple):
    drafts: list[Draft]
    last_event: int  # the highest event id read (0: none)


def thanks(
    settings: Settings, *, after_id: int | None = None, since: int | None = None
) -> Thanks:
    """The drafts for the series applied after event `after_id` (default: the last
    run's mark) or found since `since` (Unix time)."""
    if after_id is None and since is None:
        after_id = read_mark(settings)
    wanted = EventFilter(
        after_id=after_id or 0, since=since, kinds=(APPLIED,), limit=MAX_EVENTS
    )
    with open_store(settings) as store:
        events = store.events(wanted)
        heads = list(dict.fromkeys(event.series for event in events))
        rows = store.queue_of_series(heads)
        drafts = [
            draft
            for head in heads
            if (draft := _draft(store, head, [r for r in rows if r.series == head]))
        ]
    return Thanks(drafts, max((event.id for event in events), default=0))


def read_mark(settings: Settings) -> int:
    try:
        return int((settings.data_dir / MARK).read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def write_mark(settings: Settings, last_event: int) -> None:
    if last_event:
        path: Path = settings.data_dir / MARK
        path.write_text(f"{last_event}\n")


def _draft(store: Store, head: str, rows: list[QueueRow]) -> Draft | None:
    views = [view_of(row) for row in rows]
    landed = tuple(view for view in views if view.state == states.APPLIED)
    message = store.message(head)
    if not landed or message is None:
        return None
    author = f"{message.author_name} <{message.author_email}>"
    raw = store.raw(message.seq) or b""
    headers = _HEADERS.parsebytes(raw[: 256 * 1024], headersonly=True)
    copied = getaddresses(
        [str(value) for name in ("to", "cc") for value in headers.get_all(name) or []]
    )
    cc = tuple(
        dict.fromkeys(
            f"{name} <{address}>" if name else address
            for name, address in copied
            if address and address.lower() != message.author_email.lower()
        )
    )[:MAX_CC]
    subject = message.subject
    subject = f"Re: {subject}" if not subject.lower().startswith("re:") else subject
    if len(landed) < len(views):
        subject += " (subset)"
    references = tuple(dict.fromkeys([message.thread_root, head]))
    digest = hashlib.sha256(
        "\n".join([head, *(view.message_id for view in landed)]).encode()
    ).hexdigest()[:16]
    return Draft(
        series=head,
        subject=subject,
        to=author,
        cc=cc,
        references=references,
        landed=landed,
        total=len(views),
        message_id=f"ty-{digest}@e2g.invalid",
        body=_body(message.author_name or message.author_email, message.date, landed),
    )


def _body(author: str, date: datetime | None, landed: tuple[PatchView, ...]) -> str:
    when = f"On {date:%a, %d %b %Y}, " if date else ""
    lines = [f"{when}{author} wrote:", "", "Applied, thanks!", ""]
    for view in landed:
        lines.append(f"[{view.part or '1/1'}] {view.subject}")
        for commit in view.commits:
            where = ", ".join(
                part
                for part in (
                    "/".join(p for p in (commit.tree, commit.branch) if p),
                    commit.release or "",
                )
                if part
            )
            lines.append(
                f"      commit: {commit.commit}" + (f" ({where})" if where else "")
            )
    lines += ["", "Best regards,"]
    return "\n".join(lines) + "\n"


def mbox(
    drafts: list[Draft], *, sender: str | None, now: datetime | None = None
) -> str:
    """The drafts as one mbox (mboxrd: a body line starting "From " gets a ">")."""
    moment = now or clock()
    out: list[str] = []
    for draft in drafts:
        headers = [
            f"From e2g {moment:%a %b %d %H:%M:%S %Y}",
            *([f"From: {sender}"] if sender else []),
            f"To: {draft.to}",
            *([f"Cc: {', '.join(draft.cc)}"] if draft.cc else []),
            f"Subject: {draft.subject}",
            f"Date: {format_datetime(moment)}",
            f"Message-ID: <{draft.message_id}>",
            f"In-Reply-To: <{draft.series}>",
            f"References: {' '.join(f'<{ref}>' for ref in draft.references)}",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 8bit",
        ]
        body = "\n".join(
            ">" + line if line.lstrip(">").startswith("From ") else line
            for line in draft.body.splitlines()
        )
        head = [headers[0], *(_one_line(header) for header in headers[1:])]
        out.append("\n".join(head) + "\n\n" + body + "\n\n")
    return "".join(out)


def _one_line(header: str) -> str:
    """A header from mail content on one line: no line break may end it early."""
    return " ".join(header.split())
