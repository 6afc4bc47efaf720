"""The matching cascade: candidates -> scores -> the applied posting and all the others.

`match()` answers one commit: it gathers candidates from every stage, scores each
(pure, in scoring.py), takes the best accepted one as the applied posting, expands it
to the patch's other postings and cover letters, and otherwise returns an explicit no
match with the best rejected candidates and why they were rejected.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import partial

from e2g.index.store import Store
from e2g.mail.subject import revert_depth
from e2g.matcher.candidates import (
    STAGES,
    FileMap,
    LinesByFile,
    LinesOf,
    Lookups,
    MatchRequest,
    Memo,
    MessageCache,
    Pool,
)
from e2g.matcher.postings import (
    QUOTED,
    UrlFor,
    Verdict,
    covers,
    family,
    posting_order,
    series_sibling,
    thread_links,
    to_posting,
)
from e2g.matcher.prefilter import Outcome, hopeless_score, judge, prefilter
from e2g.matcher.rootless import ROOTLESS, ROOTLESS_SCORE, rootless_threads
from e2g.matcher.rules import (
    ALL,
    LOST_THREADS,
    REVERT_DEPTH,
    SERIES_SIBLINGS,
    Rules,
)
from e2g.matcher.scoring import ACCEPT_THRESHOLD, Candidate, Early
from e2g.matcher.similarity import diff_similarity
from e2g.model.links import Evidence, LinkResult, Posting, Rejected, commit_info
from e2g.model.stored import StoredMessage

METHOD_RANK = {
    "trailer": 0,
    "patch-id": 1,
    "author-date": 2,
    "subject": 3,
    "author": 4,
    "files": 5,
}
_Chosen = dict[str, tuple[StoredMessage, str, float, tuple[Evidence, ...]]]
MAX_REJECTED = 5
# Another accepted candidate this sure, or with the best match's subject, is a posting.
POSTING_SCORE = 0.80
# An earlier version may differ a lot from what was applied, but not entirely.
VERSION_DIFF = 0.30
# A verdict this sure ends the cascade: later stages only add noise and time.
SURE = 0.85
LATE = timedelta(days=1)


class Matcher:
    """Scores candidates for commits against one store, caching decoded mail diffs.

    `rules` turns matching rules off (e2g.matcher.rules; all on by default)."""

    def __init__(
        self,
        store: Store,
        *,
        lines_of: LinesOf,
        url_for: UrlFor,
        rules: Rules = ALL,
    ) -> None:
        self.store = store
        self.rules = rules
        self._lookups = Lookups(MessageCache(store), FileMap(store))
        self._threads = thread_links(store)
        self._lines_of = lines_of
        self._url_for = url_for
        self._lines_by_seq: Memo[int, LinesByFile | None] = Memo(
            self._read_lines, limit=4096
        )

    def _lines(self, message: StoredMessage) -> LinesByFile | None:
        """The message's diff as diff_lines() gives it."""
        return self._lines_by_seq(message.seq)

    def _read_lines(self, seq: int) -> LinesByFile | None:
        diff = self.store.diff(seq)
        return self._lines_of(diff) if diff else None

    def score(self, request: MatchRequest, pool: Pool) -> list[Verdict]:
        verdicts = []
        commit = request.commit
        # Hopeless candidates only ever show as the best rejected ones: keep those.
        hopeless: list[tuple[float, int, StoredMessage, Candidate, Early]] = []
        for order, (message_id, message) in enumerate(pool.messages.items()):
            candidate = Candidate(message, frozenset(pool.sources[message_id]))
            found = prefilter(commit, candidate, commit_lines=request.commit_lines)
            if found.outcome is Outcome.HOPELESS:
                best_total = found.early.best_total or 0.0
                hopeless.append((best_total, -order, message, candidate, found.early))
                continue
            score = judge(
                commit,
                candidate,
                found,
                commit_lines=request.commit_lines,
                mail_lines=partial(self._lines, message),
            )
            verdicts.append(Verdict(message, score))
        best = heapq.nlargest(MAX_REJECTED, hopeless, key=lambda row: row[:2])
        for _, _, message, info, early in sorted(best, key=lambda row: -row[1]):
            score = hopeless_score(commit, info, early, threshold=ACCEPT_THRESHOLD)
            verdicts.append(Verdict(message, score))
        return verdicts

    def match(self, request: MatchRequest) -> LinkResult:
        """Run the stages in order; stop at the first that yields a sure answer."""
        pool = Pool(rules=self.rules)
        verdicts: list[Verdict] = []
        for stage in STAGES:
            before = set(pool.messages)
            stage(self.store, request, pool, self._lookups)
            fresh = Pool(
                {mid: m for mid, m in pool.messages.items() if mid not in before},
                {mid: pool.sources[mid] for mid in pool.messages if mid not in before},
            )
            verdicts += self.score(request, fresh)
            if any(v.score.accepted and v.score.total >= SURE for v in verdicts):
                break
        written = request.commit.author_date
        depth = revert_depth(request.commit.subject_key)
        accepted = _own_mail_first(
            sorted(
                (v for v in verdicts if v.score.accepted),
                key=lambda verdict: _rank(verdict, written, depth, self.rules),
            ),
            self.rules,
        )
        info = commit_info(request.commit)
        if not accepted:
            return LinkResult(info, self._rootless(request), _rejected(verdicts))
        return LinkResult(
            info, tuple(self._postings(request, accepted)), _rejected(verdicts)
        )

    def _rootless(self, request: MatchRequest) -> tuple[Posting, ...]:
        """The threads whose first mail is missing that fit the commit, oldest
        first (the first taken as the applied posting): low-confidence answers
        where nothing carried the patch."""
        if not self.rules.on(LOST_THREADS):
            return ()
        found = rootless_threads(self.store, request.commit)
        return tuple(
            to_posting(
                self.store,
                message,
                method=ROOTLESS,
                score=ROOTLESS_SCORE,
                applied=number == 0,
                url_for=self._url_for,
                evidence=evidence,
                threads=self._threads,
            )
            for number, (message, evidence) in enumerate(found)
        )

    def _kinship(
        self, request: MatchRequest, best: StoredMessage, relative: StoredMessage
    ) -> str | None:
        """Why a same-subject, same-author mail is another version of the patch, or None.

        A generic subject ("Update README") can recur for unrelated patches, so a
        relative must also share the patch-id, the series lineage, or enough diff.
        """
        if relative.patch_id and relative.patch_id == best.patch_id:
            return "same patch-id"
        if (
            relative.series_id is not None
            and best.series_id is not None
            and relative.series_id in set(self.store.lineage(best.series_id))
        ):
            return "same series lineage"
        lines = self._lines(relative)
        if lines is None:
            return None
        similarity = diff_similarity(request.commit_lines, lines)
        return f"diff {similarity:.2f}" if similarity >= VERSION_DIFF else None

    def _postings(
        self, request: MatchRequest, accepted: Sequence[Verdict]
    ) -> list[Posting]:
        best = accepted[0]
        depth = revert_depth(best.message.subject_key)
        chosen: _Chosen = {}
        for verdict in accepted:
            if verdict is best or (
                not _another_change(best.message, verdict.message, depth, self.rules)
                and (
                    verdict.score.total >= POSTING_SCORE
                    or verdict.message.subject_key == best.message.subject_key
                )
            ):
                chosen[verdict.message.message_id] = (
                    verdict.message,
                    verdict.score.method,
                    verdict.score.total,
                    verdict.score.evidence,
                )
        latest = (
            max(
                request.commit.commit_date,
                best.message.date or request.commit.commit_date,
            )
            + LATE
        )
        relatives = family(
            self._lookups.messages, request.commit, best.message, rules=self.rules
        )
        for relative in relatives:
            if (
                relative.message_id in chosen
                or (relative.date is not None and relative.date > latest)
                or _another_change(best.message, relative, depth, self.rules)
            ):
                continue
            kinship = self._kinship(request, best.message, relative)
            if kinship is not None:
                detail = Evidence(
                    "version",
                    f"v{relative.version} of the same patch by the same author ({kinship})",
                    0.0,
                )
                chosen[relative.message_id] = (
                    relative,
                    "version",
                    best.score.total,
                    (detail,),
                )
        chosen = _without_quotes_of_chosen(chosen, best=best.message.message_id)
        patches = [entry[0] for entry in chosen.values()]
        exclude = {message.message_id for message in patches}
        postings = [
            to_posting(
                self.store,
                message,
                method=QUOTED if message.kind == "reply" else method,
                score=total,
                applied=message.message_id == best.message.message_id,
                url_for=self._url_for,
                evidence=evidence,
                exclude=exclude,
                threads=self._threads,
            )
            for message, method, total, evidence in chosen.values()
        ]
        for cover in covers(self._lookups.messages, patches):
            if cover.message_id not in chosen:
                postings.append(
                    to_posting(
                        self.store,
                        cover,
                        method="cover",
                        score=best.score.total,
                        applied=False,
                        url_for=self._url_for,
                        exclude=exclude,
                        threads=self._threads,
                    )
                )
        return sorted(postings, key=posting_order)


def _another_change(
    best: StoredMessage, other: StoredMessage, depth: int, rules: Rules
) -> bool:
    """Whether `other`, however alike, is not a posting of the best match's change:
    a sibling in its series, or a mail that reverts where it does not (or the
    other way round; `depth` is the best match's revert_depth), as far as those
    rules are on."""
    return (rules.on(SERIES_SIBLINGS) and series_sibling(best, other)) or (
        rules.on(REVERT_DEPTH) and revert_depth(other.subject_key) != depth
    )


def _own_mail_first(accepted: list[Verdict], rules: Rules) -> list[Verdict]:
    """The ranked accepted verdicts, with a reply quoting the patch moved behind the
    patch's own mail where that is accepted too, in the reply's thread: a quoting
    reply is a posting only where the patch's mail is not in the archive, and in
    the patch's own thread its mail is the posting, whatever rule found it. (An
    author's ping months later quotes the committed diff whole, an equal patch-id,
    while a mailer changed the posted diff slightly and only its date finds it.)"""
    if not accepted or accepted[0].message.kind != "reply":
        return accepted
    best = accepted[0].message
    depth = revert_depth(best.subject_key)
    for verdict in accepted[1:]:
        if (
            verdict.message.kind != "reply"
            and verdict.message.thread_root == best.thread_root
            and not _another_change(best, verdict.message, depth, rules)
        ):
            return [verdict, *(other for other in accepted if other is not verdict)]
    return accepted


def _without_quotes_of_chosen(chosen: _Chosen, *, best: str) -> _Chosen:
    """Without the replies that quote a patch whose own mail is chosen too: in the
    thread of a posting, a reply quoting it is a reply (its review), not a posting.
    The best match stays, whatever it is."""
    threads = {
        message.thread_root
        for message, *_ in chosen.values()
        if message.kind != "reply"
    }
    return {
        message_id: entry
        for message_id, entry in chosen.items()
        if message_id == best
        or entry[0].kind != "reply"
        or entry[0].thread_root not in threads
    }


def _rank(
    verdict: Verdict, written: datetime, depth: int, rules: Rules
) -> tuple[float, bool, int, int, int, int, float, int]:
    """Best score, then a mail that reverts as the commit does (mail.subject.
    revert_depth), then strongest method, then a patch's own mail before a reply
    quoting it, then the posting git am took, then the newest version and posting.

    git am keeps a mail's Date: as the author date, so among equal patches the one
    dated exactly like the commit is the one applied. Equal patches of v1 and v2, or
    a RESEND, carry git format-patch's same Date: (the author date), so the version
    and then the later arrival (seq) break the remaining ties.
    """
    date = verdict.message.date.timestamp() if verdict.message.date else 0.0
    return (
        -round(verdict.score.total, 3),
        rules.on(REVERT_DEPTH) and revert_depth(verdict.message.subject_key) != depth,
        METHOD_RANK.get(verdict.score.method, 9),
        1 if verdict.message.kind == "reply" else 0,
        0 if verdict.message.date == written else 1,
        -verdict.message.version,
        -date,
        -verdict.message.seq,
    )


def _rejected(verdicts: Sequence[Verdict]) -> tuple[Rejected, ...]:
    rejected = sorted(
        (v for v in verdicts if not v.score.accepted), key=lambda v: -v.score.total
    )
    return tuple(
        Rejected(
            v.message.message_id,
            v.message.subject,
            round(v.score.total, 4),
            v.score.reason,
        )
        for v in rejected[:MAX_REJECTED]
    )
