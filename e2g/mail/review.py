"""What a mail or a commit message says about review: pure rules for `e2g audit`.

- `comments_on_patch`: a reply that quotes a patch (`> +...`, `> @@ ...`) and adds
  words of its own is a review even without a trailer: most review on a list is
  that, and a reviewer's "looks good" rarely carries a Reviewed-by.
- `acks`: a reply that starts a line of its own with "Ack." gives, in the kernel's
  shorthand, an Acked-by (maintainers turn it into one as they apply the patch).
- `has_changelog`: a posting that says what changed since its last version, in the
  place git format-patch leaves for it (below the `---` line, above the diffstat);
  `cover_changelog`: a cover letter that does ("Changes from v5:").
- `maintainer_notes`: the `[name: what I changed]` lines a maintainer writes between
  Signed-off-by lines when editing a patch on the way in (the kernel's convention).
- `person`: who a review trailer names ("Jane Doe <jane@example.org>").

Bodies are the stored commentary of a mail (e2g.mail.patch.split_body's), bounded
there; every scan here is one pass over lines, no regex that can backtrack.
"""

from __future__ import annotations

import re
from functools import lru_cache

from e2g.mail.headers import parse_address
from e2g.mail.trailers import is_trailer_line
from e2g.model import Address

# A quoted line of a diff: its hunk header, its file header, or a changed line.
_QUOTED_DIFF = re.compile(
    r">[> ]*(?:@@ -\d|diff --git |\+\+\+ b/|--- a/|[+-](?![+-]{2}))"
)
# Two quoted +/- lines, or one quoted header, make a quoted patch: one "> - item"
# may be a quoted list.
QUOTED_DIFF_LINES = 2
_HEADER = re.compile(r">[> ]*(?:@@ -\d|diff --git |\+\+\+ b/|--- a/)")
# "On Mon, 1 Jan 2024, Jane wrote:" and its variants end with one of these.
_ATTRIBUTION_ENDS = ("wrote:", "writes:", "said:", "a écrit :", "schrieb:")
# A diffstat line (" path | 3 ++-") or its summary (" 2 files changed, ...").
_DIFFSTAT = re.compile(r" \S.*\|\s+(?:\d+|Bin\b).*| \d+ files? changed\b.*")
# A line that starts a changelog of versions: "Changes since v2", "v3: ...",
# "v1 -> v2:", "Changelog".
_VERSION_NOTES = re.compile(
    r"(?im)^[ \t*-]*(?:changes?\b[^\n]{0,40}?\b(?:v\d+|since|from)\b|change ?log\b"
    r"|v\d+[ \t]*(?:->|:)|v\d+[ \t]*\.\.[ \t]*v\d+)"
)
MAX_SCAN = 64 * 1024  # characters of a cover letter searched for its changelog
# `[jane: fixed the typo]` or `[jane@example.org: ...]` alone on a line.
_NOTE = re.compile(r"\[[^\]\s:][^\]:]{0,80}:\s*[^\]]+\]")


# "Ack", "Acked", "ACK." or "Ack'd!" starting a line, alone or ending a sentence
# ("Ack. It should always have done this.", "Ack, thanks"): "Ack for the first
# two" says something else. Only lines starting "ack" are tried against it.
_ACK = re.compile(r"(?i)ack(?:ed|'d)?(?:[.!,;:].*)?")
ACK = "ack"
COMMENT = "comment"


def review_in(body: str) -> str:
    """What review a reply gives in its own words: ACK when it acks (`acks`),
    else COMMENT when it comments on the quoted patch (`comments_on_patch`), else
    "" (one pass over its lines for both)."""
    acked, commented = _scan(body)
    return ACK if acked else COMMENT if commented else ""


def comments_on_patch(body: str) -> bool:
    """Whether a reply quotes a patch and says something of its own about it."""
    return _scan(body)[1]


def acks(body: str) -> bool:
    """Whether a reply acks the patch in the shorthand for Acked-by, starting a
    line of its own (not quoted, not in the signature)."""
    return _scan(body)[0]


def _scan(body: str) -> tuple[bool, bool]:
    """(acks, comments on the quoted patch) of a reply."""
    quoted = headers = own = 0
    acked = False
    for line in body.splitlines():
        if line == "-- ":  # the signature: nothing below is about the patch
            break
        if line.startswith(">"):
            if _QUOTED_DIFF.match(line):
                quoted += 1
                headers += _HEADER.match(line) is not None
            continue
        stripped = line.strip()
        if stripped[:3].lower() == "ack" and _ACK.fullmatch(stripped):
            acked = True
        elif not stripped or _boilerplate(stripped):
            continue
        own += 1
    return acked, own > 0 and (headers > 0 or quoted >= QUOTED_DIFF_LINES)


def _boilerplate(line: str) -> bool:
    return line.endswith(_ATTRIBUTION_ENDS) or is_trailer_line(line)


def has_changelog(commentary: str) -> bool:
    """Whether words follow the `---` line of a posting (a changelog between it and
    the diffstat: "v3: renamed the helper"). The stored commentary keeps that line
    only when something other than the diffstat follows it."""
    below = False
    for line in commentary.splitlines():
        if line.rstrip() == "---":
            below = True
        elif below and line.strip() and not _DIFFSTAT.fullmatch(line):
            return True
    return False


def cover_changelog(body: str) -> bool:
    """Whether a cover letter says what changed since the last version ("Changes
    from v5:", "v2 -> v3:", "Changelog:"): where a series discloses it most."""
    return _VERSION_NOTES.search(body[:MAX_SCAN]) is not None


def maintainer_notes(message: str) -> list[str]:
    """The `[name: ...]` notes of a commit message's trailer lines: what whoever
    applied the patch says they changed, between the Signed-off-by lines."""
    notes: list[str] = []
    previous_trailer = False
    for line in message.splitlines():
        stripped = line.strip()
        if previous_trailer and _NOTE.fullmatch(stripped):
            notes.append(stripped)
            continue
        previous_trailer = is_trailer_line(line)
    return notes


@lru_cache(maxsize=1 << 12)  # a list's reviewers give the same tags again and again
def person(value: str) -> Address:
    """The person a trailer's value names: "Jane <jane@x.org>", or an address alone;
    the email lower-cased (addresses compare case-blind)."""
    found = parse_address(value)
    return Address(found.name, found.email.lower())
