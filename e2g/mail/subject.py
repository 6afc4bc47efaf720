"""Subject lines: "[PATCH net-next v3 2/7] mm: fix x" -> SubjectInfo.

Pure functions on str; no IO. Used by mail.message, and subject_key by git.repo and
the matcher, so that commit summaries and mail titles compare in one form.

What gets stripped, repeatedly and in any order, from the front:
- reply and forward markers in several languages: Re:, RE:, re :, Re[2]:, Re(2):,
  Fwd:, Fw:, AW:, SV:, Antw:, WG:, Odp:, R: is NOT stripped (too often a real word);
- every leading [...] group: [PATCH v2 1/3], [dpdk-dev], [net,v2,1/2], [RFC];
- the ": " or " - " left behind by "[Patch]: foo".
What is read from the groups: version (v2, V2, PATCHv2, RFCv3, and "(v6)" at the end
of the title), part n/m (2/7, PATCH1/8, 02/36, " 0/N", "1 of 3" from hg email), RFC,
RESEND, and tree tags: every other token (net-next, liburing, 4.19, bpf-next), of
which `release_line` reads the stable branch a backport names.
Brackets later in the title ("rewrite [a-z] regexes") are part of the title.
"""

from __future__ import annotations

import re

from e2g.model import MAX_SUBJECT, Kind, SubjectInfo

_REPLY = re.compile(
    r"(?:re|fwd?|aw|sv|antw|wg|odp|rif|res|ynt|回复|答复|回覆|转发)"
    r"\s*(?:\[\d{1,4}\]|\(\d{1,4}\))?\s*[:：]\s*",
    re.IGNORECASE,
)
_GROUP = re.compile(r"\[([^\[\]]{0,512})\]\s*")
_LEFTOVER = re.compile(r"\s*(?:[:：]+|-+(?=\s))\s*")
_TRAILING_VERSION = re.compile(r"\s*\(v(\d{1,3})\)\s*$", re.IGNORECASE)
_TOKEN_SPLIT = re.compile(r"[\s,]+")
_PART = re.compile(r"^(\d{1,4})/(\d{1,4})$")
_VERSION = re.compile(r"^v(\d{1,3})(?:\.\d+)?$", re.IGNORECASE)
# PATCHv2, PATCH1/8, RFCv3, PATCH-v2: a keyword glued to a version or part.
_GLUED = re.compile(
    r"^(patch(?:es|set)?|rfc|resend)[-_]?(v\d{1,3}|\d{1,4}/\d{1,4})$", re.IGNORECASE
)
# A stable branch or release a backport names: 5.10.y, v6.1.y, 6.3, for-stable-4.19,
# stable-5.4, linux-5.15.y (a point release, 6.1.12, names its line, 6.1).
_RELEASE_LINE = re.compile(
    r"^(?:for-)?(?:stable-|linux-)?v?(\d{1,2}\.\d{1,3})(?:\.y|\.\d{1,4})?$",
    re.IGNORECASE,
)
_PATCH_WORDS = frozenset({"patch", "patches", "patchset"})
_RESEND_WORDS = frozenset({"resend", "resent", "repost"})


def subject_key(title: str) -> str:
    """The comparable form of a title or commit summary: collapsed and case-folded."""
    return " ".join(title.split()).casefold()


_UNDO = re.compile(r'(?:revert|reapply)\s+"', re.IGNORECASE)


def revert_depth(key: str) -> int:
    """How many `Revert "` (or `Reapply "`) a title or subject key opens with: a
    change and its revert's revert have equal diffs (and patch-ids), yet each is
    its own commit and posting; an odd depth undoes, an even one redoes."""
    depth, position = 0, 0
    while undo := _UNDO.match(key, position):
        depth, position = depth + 1, undo.end()
    return depth


class _Prefixes:
    """What the leading [...] groups said, gathered token by token."""

    def __init__(self) -> None:
        self.version: int | None = None
        self.part: int | None = None
        self.total: int | None = None
        self.patch = False
        self.rfc = False
        self.resend = False
        self.tags: list[str] = []

    def add_group(self, group: str) -> None:
        tokens = [token for token in _TOKEN_SPLIT.split(group) if token]
        tokens = _join_hg_parts(tokens)
        for token in tokens:
            glued = _GLUED.match(token)
            if glued:
                self.add_token(glued[1])
                self.add_token(glued[2])
            else:
                self.add_token(token)

    def add_token(self, token: str) -> None:
        lower = token.lower()
        part = _PART.match(token)
        version = _VERSION.match(token)
        if lower in _PATCH_WORDS:
            self.patch = True
        elif lower == "rfc":
            self.rfc = True
        elif lower in _RESEND_WORDS:
            self.resend = True
        elif version:
            self.version = int(version[1])
        elif part and self.part is None:
            self.part, self.total = int(part[1]), int(part[2])
        elif len(self.tags) < 16:
            self.tags.append(token[:64])


def _join_hg_parts(tokens: list[str]) -> list[str]:
    """Mercurial's "1 of 3" becomes "1/3"."""
    joined: list[str] = []
    index = 0
    while index < len(tokens):
        window = tokens[index : index + 3]
        if (
            len(window) == 3
            and window[1].lower() == "of"
            and window[0].isdigit()
            and window[2].isdigit()
        ):
            joined.append(f"{window[0]}/{window[2]}")
            index += 3
        else:
            joined.append(tokens[index])
            index += 1
    return joined


def _strip_front(text: str, prefixes: _Prefixes) -> tuple[str, bool]:
    """Remove reply markers and leading [...] groups; True when a reply marker went."""
    is_reply = False
    while True:
        reply = _REPLY.match(text)
        if reply:
            is_reply = True
            text = text[reply.end() :]
            continue
        group = _GROUP.match(text)
        if group:
            prefixes.add_group(group[1])
            text = text[group.end() :]
            leftover = _LEFTOVER.match(text)
            if leftover:
                text = text[leftover.end() :]
            continue
        return text, is_reply


def parse_subject(raw: str) -> SubjectInfo:
    """Parse a decoded Subject: header; never raises."""
    raw = " ".join(raw[: MAX_SUBJECT * 2].split())[:MAX_SUBJECT]
    prefixes = _Prefixes()
    title, is_reply = _strip_front(raw, prefixes)
    version = prefixes.version
    trailing = _TRAILING_VERSION.search(title)
    while trailing and title[: trailing.start()]:
        version = version or int(trailing[1])
        title = title[: trailing.start()]
        trailing = _TRAILING_VERSION.search(title)
    return SubjectInfo(
        raw=raw,
        title=title,
        key=subject_key(title),
        version=version if version else 1,
        part=prefixes.part,
        total=prefixes.total,
        is_patch_tag=prefixes.patch or prefixes.rfc,
        rfc=prefixes.rfc,
        resend=prefixes.resend,
        is_reply=is_reply,
        tags=tuple(prefixes.tags),
    )


def release_line(tags: tuple[str, ...]) -> str:
    """The release line a subject's tree tags name ("5.10" for [PATCH 5.10.y],
    [PATCH v6.1.y]... "6.1"), "" when none: backports of one change to two stable
    branches are two patches, not two versions of one (e2g.api.queue.lifecycle)."""
    for tag in tags:
        found = _RELEASE_LINE.match(tag)
        if found:
            return found[1]
    return ""


def search_kind(kind: Kind, subject: str) -> Kind:
    """The kind `is:` finds: a patch sent as a Re: reply (a fix-up diff offered in a
    review) is a reply there, so `is:patch` finds postings only and `has:diff` finds
    every message with a diff. `kind` itself (mail.message) stays patch for matching,
    where such a diff may be what was applied."""
    if kind is Kind.PATCH and parse_subject(subject).is_reply:
        return Kind.REPLY
    return kind
