"""A patch quoted whole in a reply: the posting a thread keeps when its first mail is lost.

Real archives start mid-history, and a patch is often sent to one list while its
review goes on in another. The thread then survives only as replies, and those often
quote the whole patch: the author's "ping", the maintainer's "applied, thanks" or
"doesn't apply, please resend". Such a reply is a posting of the patch: its
`git patch-id --stable` is taken on the quoted diff with one level of quoting
removed, which is the diff the patch carried (patch-id drops whitespace, so a
mailer's ``> `` against ``>`` does not matter).

Only an unbroken quote counts. A review that comments between the quoted hunks
breaks the quote, and what is left is a part of the patch: its patch-id equals no
commit's, so it can never be taken for the patch (e2g.matcher compares patch-ids
only). Quotes two levels deep (``> > diff``) are a reply to a reply: the one-level
quote of the same thread, or the patch itself, is the posting.
"""

from __future__ import annotations

import re

from e2g.mail.patch import HUNK_HEADER, split_body
from e2g.mail.patch_id import compute_patch_id

MAX_QUOTED = 1_000_000  # characters of a reply read for a quoted patch
_QUOTED_DIFF = re.compile(r"^> ?diff --git ", re.MULTILINE)


def quoted_patch_id(text: str) -> str | None:
    """The patch-id of the first whole diff `text` quotes one level deep, or None."""
    text = text[:MAX_QUOTED]
    start = _QUOTED_DIFF.search(text)
    if start is None:
        return None
    unquoted = _unquote_run(text[start.start() :])
    _, diff = split_body(unquoted)
    if diff is None:
        return None
    return compute_patch_id(diff if diff.endswith("\n") else diff + "\n")


def _unquote_run(text: str) -> str:
    """The quoted lines at the start of `text` (a quoted ``diff --git`` line), one
    level of quoting removed, up to the first line that is not quoted. An empty
    line inside a hunk, where the hunk header says lines remain, is the context
    line " " whose space the quoting mailer dropped (as `git apply` reads it).

    Every quote is read to the end, a review's cut ones too (a part's patch-id is
    no commit's): telling a cut quote from a whole one by the hunk headers, or by
    quoting going on after a comment, lost 12-14% of the whole quotes on io-uring
    (hand-edited patches carry wrong counts; mailers drop trailing context) for
    half of the 87 us a reply costs."""
    lines: list[str] = []
    before = after = 0  # lines the current hunk still holds, as its header says
    # "> " or a bare ">", as the quote's first line shows: a context line " x"
    # quoted bare reads "> x", which is no "> " quote of "x".
    width = 2 if text.startswith("> ") else 1
    for line in text.splitlines():
        if not line.startswith(">"):
            break
        body = line[width:]
        if body.startswith(">"):
            break  # a deeper quote: another mail's words, not this patch
        if hunk := HUNK_HEADER.match(body):
            before, after = int(hunk[2] or 1), int(hunk[4] or 1)
        elif not body and before > 0 and after > 0:
            body = " "
        if body[:1] in (" ", "-"):
            before -= 1
        if body[:1] in (" ", "+"):
            after -= 1
        lines.append(body)
    return "\n".join(lines) + "\n"
