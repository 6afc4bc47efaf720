"""Scoring one commit against one mail candidate: pure functions, no IO, no store.

Exact keys decide first (DESIGN.md, "The matching cascade"): a trailer that names a
patch with the same content, an equal patch-id, an equal author timestamp with the
same author or files. Otherwise four signals are combined in a weighted mean and
scaled by how plausible the posting date is:

    diff 0.50    the content: it says most about whether two patches are one
    subject 0.25 maintainers reword subjects, but rarely beyond recognition
    author 0.15  mailmap and DMARC make this noisy, so it only tips the balance
    files 0.10   mostly implied by the diff already; matters when a diff is missing

Signals that cannot be measured (no diff stored, a list-rewritten sender) drop out and
the rest are renormalised. Vetoes reject whatever the mean: a posting after the
commit (+1 day of clock slack), content that disagrees, a cover letter or reply.
These constants are reasoned, not fitted to one archive.

Rejections reached before a diff is read are e2g.matcher.prefilter's; this module
holds the weights and the rules they share.

Its size (over 500 lines) is deliberate: the weights and every rule that reads them
stay together, so that a change of weight is seen with all its uses.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import lru_cache

from e2g.mail.headers import named_via_list, without_via
from e2g.matcher.similarity import (
    LinesByFile,
    diff_overlap,
    informative_count,
    line_count,
    pair_files,
    subject_similarity,
)
from e2g.model import Address
from e2g.model.links import Commit, Evidence
from e2g.model.stored import StoredMessage
from e2g.words import count

WEIGHTS = {"diff": 0.50, "subject": 0.25, "author": 0.15, "files": 0.10}
ACCEPT_THRESHOLD = 0.60
# Both diffs known and less alike than this: two different patches, whatever else.
MIN_DIFF_AGREEMENT = 0.30
# A trailer-named patch whose diff is this alike (or patch-id equal) is the posting.
TRAILER_DIFF_AGREEMENT = 0.50
# With no diff to compare, subject and author must both be this strong.
NO_DIFF_MIN_SIGNAL = 0.90
# Fewer informative +/- lines than this can coincide by chance (a version bump).
SMALL_DIFF_LINES = 3
STRONG_SIGNAL = 0.90
# One diff found whole inside the other (tests added on the way in) earns this much.
MIN_CONTAINMENT = 0.90
MIN_CONTAINED_LINES = 4.0
CONTAINED_CREDIT = 0.85
AUTHOR_DATE_SCORE = 0.98
# Date window: a mail posted after the commit cannot be its source (a day of slack
# for clocks); reviews can take a year; older postings lose a little, not all.
LATE_SLACK = timedelta(days=1)
# ...except for the author's own posting of the very patch, up to this long after.
LATE_EXACT_WINDOW = timedelta(days=60)
LATE_FACTOR = 0.95
LATE_EXACT_SCORE = 0.97
EARLY_WINDOW = timedelta(days=365)
FRESH_AGE = timedelta(days=30)
OLDEST_DATE_FACTOR = 0.85

PATCH_KIND = "patch"
# What a trailer named instead of a patch, as rejection reasons say it.
_KIND_NOUNS = {
    "cover": "a cover letter",
    "reply": "a reply",
    "pull": "a pull request",
    "other": "a message without a patch",
}


# Not frozen, like the other records made per candidate (Early, Score, Signals,
# Verdict): a frozen dataclass sets each field through object.__setattr__, which
# makes it about 3 times slower to build, and a match run builds these some 20,000
# times. Nothing changes them after they are built.
@dataclass(slots=True)
class Candidate:
    """A stored message the cascade proposes for a commit, and the stages that
    proposed it ("trailer", "patch-id", "author-date", "subject", "author", "files")."""

    message: StoredMessage
    sources: frozenset[str]


@dataclass(slots=True)  # not frozen: see Candidate
class Score:
    """The verdict on one candidate; reason says why it was rejected ("" if not)."""

    total: float
    method: str
    accepted: bool
    evidence: tuple[Evidence, ...]
    reason: str


@dataclass(slots=True)  # not frozen: see Candidate
class Signals:
    subject: float
    author: float | None  # None: the sender was rewritten, so unknown
    author_detail: str
    files: float
    shared_files: int
    diff: float | None  # None: a side has no +/- lines to compare
    diff_exact: bool  # False: diff is an upper bound, already below agreement
    date_factor: float


@dataclass(slots=True)  # not frozen: see Candidate
class Early:
    """The signals known before a candidate's diff is read."""

    author: float | None
    author_detail: str
    subject: float
    shared_files: int
    files: float
    date_factor: float
    # Not None when the verdict is a rejection whatever the diff says (hopeless()):
    # the most the weighted mean could reach.
    best_total: float | None


def predates(commit_date: datetime, first_message: datetime) -> bool:
    """Whether a commit is older than anything scoring could accept from an archive
    whose first message is dated `first_message`: every message would be posted too
    long after the commit, even for the author's own late posting of it. (A trailer
    cannot name such a message either: trailers are written before the commit date.)
    """
    return commit_date + LATE_EXACT_WINDOW + LATE_SLACK < first_message


@lru_cache(maxsize=1 << 14)
def author_similarity(
    author: Address, *, name: str, email: str
) -> tuple[float | None, str]:
    """(score, detail): 1 for equal addresses, 0.9 for equal names, None if unknown.

    A sender the list rewrote ("Jane Doe via io-uring") proves nothing by its
    address; its name still counts.
    """
    rewritten = named_via_list(name)
    if email and not rewritten and email.casefold() == author.email.casefold():
        return 1.0, "author email equal"
    commit_name = normalise_name(author.name)
    if commit_name and commit_name == normalise_name(without_via(name)):
        return 0.9, "author name equal"
    if rewritten:
        return None, "sender rewritten by the list"
    return 0.0, f"author differs ({name or email} vs {author.name})"


@lru_cache(maxsize=1 << 14)
def normalise_name(name: str) -> str:
    """Case, accents, punctuation and word order dropped: "Doe, Jöhn" == "john doe"."""
    decomposed = unicodedata.normalize("NFKD", name.strip().strip("'\""))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    words = re.sub(r"[^\w]+", " ", plain).split()
    return " ".join(sorted(words))


def early_facts(commit: Commit, candidate: Candidate) -> Early:
    """What is known of a candidate before its diff is read (best_total unset: the
    prefilter decides that)."""
    author, author_detail = author_similarity(
        commit.author,
        name=candidate.message.credited_name,
        email=candidate.message.credited_email,
    )
    paths = commit.patch.paths
    pairs, _, _ = pair_files(paths, candidate.message.files)
    union = len(paths) + len(candidate.message.files) - len(pairs)
    return Early(
        author=author,
        author_detail=author_detail,
        subject=subject_similarity(commit.subject_key, candidate.message.subject_key),
        shared_files=len(pairs),
        files=len(pairs) / union if union else 0.0,
        date_factor=_date_factor(commit, candidate),
        best_total=None,
    )


def verdict(
    commit: Commit,
    candidate: Candidate,
    signals: Signals,
    *,
    commit_lines: LinesByFile,
    threshold: float = ACCEPT_THRESHOLD,
) -> Score:
    """The verdict once the diff's similarity is known (measured, or bounded from
    line counts): date vetoes, then the exact keys, then the weighted mean."""
    late, too_early = date_vetoes(commit, candidate)
    if late and _posted_what_was_committed(commit, candidate, signals):
        late = ""
        signals = replace(signals, date_factor=signals.date_factor * LATE_FACTOR)
    exact = _score_exact(commit, candidate, signals=signals, late=late)
    if exact is not None:
        return _with_evidence(exact, _date_evidence(commit, candidate))
    return _score_fuzzy(
        commit,
        candidate,
        signals=signals,
        veto=late or too_early or _veto(candidate, signals, commit_lines=commit_lines),
        threshold=threshold,
    )


def measure(
    candidate: Candidate,
    early: Early,
    *,
    commit_lines: LinesByFile,
    mail_lines: LinesByFile | None,
    threshold: float,
) -> Signals:
    author, subject = early.author, early.subject
    diff = None
    diff_exact = True
    if mail_lines and line_count(commit_lines) and line_count(mail_lines):
        strong = max(subject, author or 0.0) >= STRONG_SIGNAL
        # Below the diff a verdict needs, every verdict is the same (a rejection),
        # so a bound that shows the diffs cannot get there spares comparing lines.
        overlap = diff_overlap(
            commit_lines,
            mail_lines,
            needed=needed_diff(candidate, early, threshold),
            contained=MIN_CONTAINMENT if strong else 2.0,
        )
        diff = overlap.similarity
        diff_exact = overlap.exact
        # A maintainer who added tests (or dropped a hunk) leaves one diff inside the
        # other: credit that, but only with the same subject or author behind it, and
        # a diff of a line or two (which any patch to the file may contain) only with
        # both the same subject and the same author.
        both = min(subject, author or 0.0) >= STRONG_SIGNAL
        if (
            overlap.containment >= MIN_CONTAINMENT
            and strong
            and (
                overlap.smaller_lines >= MIN_CONTAINED_LINES
                or (both and overlap.smaller_lines >= 1.0)
            )
        ):
            diff = max(diff, CONTAINED_CREDIT * overlap.containment)
    return signals_of(early, diff=diff, diff_exact=diff_exact)


def signals_of(early: Early, *, diff: float | None, diff_exact: bool) -> Signals:
    return Signals(
        subject=early.subject,
        author=early.author,
        author_detail=early.author_detail,
        files=early.files,
        shared_files=early.shared_files,
        diff=diff,
        diff_exact=diff_exact,
        date_factor=early.date_factor,
    )


def needed_diff(candidate: Candidate, early: Early, threshold: float) -> float:
    """The diff similarity below which every verdict is the same rejection."""
    needed = max(
        MIN_DIFF_AGREEMENT,
        diff_needed(
            early.subject, early.author, early.files, early.date_factor, threshold
        ),
    )
    if "trailer" in candidate.sources:
        needed = min(needed, TRAILER_DIFF_AGREEMENT)
    return needed


def diff_needed(
    subject: float,
    author: float | None,
    files: float,
    date_factor: float,
    threshold: float,
) -> float:
    """The least diff similarity with which the weighted mean could reach `threshold`.

    Patch-id and author-date verdicts do not look at the diff, a trailer's needs
    less (the caller lowers it); everything else is this mean (_score_fuzzy).
    """
    if date_factor <= 0:
        return float("inf")
    weight = WEIGHTS["diff"] + WEIGHTS["subject"] + WEIGHTS["files"]
    rest = WEIGHTS["subject"] * subject + WEIGHTS["files"] * files
    if author is not None:
        weight += WEIGHTS["author"]
        rest += WEIGHTS["author"] * author
    # A little under the exact value: the total is rounded before it is compared.
    return (threshold * weight / date_factor - rest) / WEIGHTS["diff"] - 1e-3


def _score_exact(
    commit: Commit, candidate: Candidate, *, signals: Signals, late: str
) -> Score | None:
    """Trailer, patch-id and author-date verdicts; None when none of them applies."""
    same_patch_id = (
        bool(candidate.message.patch_id)
        and candidate.message.patch_id == commit.patch.patch_id
    )
    if "trailer" in candidate.sources:
        trailer = _score_trailer(
            candidate, signals=signals, same_patch_id=same_patch_id
        )
        if trailer is not None:
            return trailer
    if late:
        return None
    if same_patch_id:
        timely = (
            candidate.message.date is None
            or candidate.message.date <= commit.commit_date + LATE_SLACK
        )
        return _certain(
            1.0 if timely else LATE_EXACT_SCORE,
            "patch-id",
            f"patch-id equal {candidate.message.patch_id}",
        )
    same_date = (
        candidate.message.date is not None
        and candidate.message.date == commit.author_date
    )
    same_author = (signals.author or 0.0) >= STRONG_SIGNAL
    if same_date and (same_author or signals.shared_files):
        detail = f"author date equal {commit.author_date.isoformat()}"
        return _certain(AUTHOR_DATE_SCORE, "author-date", detail)
    return None


def _score_trailer(
    candidate: Candidate, *, signals: Signals, same_patch_id: bool
) -> Score | None:
    """A Link:/Message-Id: names it: certain if it carries this patch.

    A cover letter, report or reply named by a trailer is the discussion, not the
    posting. A named patch whose content differs is scored like any other.
    """
    named = Evidence(
        "trailer", f"commit trailer names <{candidate.message.message_id}>", 1.0
    )
    if candidate.message.kind != PATCH_KIND:
        what = _KIND_NOUNS.get(candidate.message.kind, "a message without a patch")
        reason = f"trailer points at {what}, not the patch"
        return Score(0.0, "trailer", False, (named,), reason)
    if same_patch_id:
        return Score(
            1.0,
            "trailer",
            True,
            (named, Evidence("patch-id", "patch-id equal", 1.0)),
            "",
        )
    if signals.diff is not None and signals.diff >= TRAILER_DIFF_AGREEMENT:
        detail = f"diff {signals.diff:.2f} over {count(signals.shared_files, 'file')}"
        return Score(1.0, "trailer", True, (named, Evidence("diff", detail, 1.0)), "")
    if signals.diff is None and signals.subject >= STRONG_SIGNAL:
        detail = f"subject {signals.subject:.2f}, no diff to compare"
        return Score(
            1.0, "trailer", True, (named, Evidence("subject", detail, 1.0)), ""
        )
    return None


def _score_fuzzy(
    commit: Commit,
    candidate: Candidate,
    *,
    signals: Signals,
    veto: str,
    threshold: float,
) -> Score:
    """The weighted mean; evidence only for an accepted candidate (a rejection is
    explained by its reason, and most candidates are rejections)."""
    mean, weight_sum = weighted_mean(
        diff=signals.diff,
        subject=signals.subject,
        author=signals.author,
        files=signals.files,
    )
    total = round(mean * signals.date_factor, 4)
    reason = veto
    if not reason and total < threshold:
        bound = "" if signals.diff_exact else "at most "
        reason = f"score {bound}{below(total, threshold)}"
    evidence: tuple[Evidence, ...] = ()
    if not reason:
        found = _fuzzy_evidence(candidate, signals, weight_sum=weight_sum)
        evidence = (*found, _date_evidence(commit, candidate))
    method = fuzzy_method(signals.subject, signals.author)
    return Score(total, method, not reason, evidence, reason)


def weighted_mean(
    *, diff: float | None, subject: float, author: float | None, files: float
) -> tuple[float, float]:
    """(the weighted mean of the signals measured, the sum of their weights): a
    signal that cannot be measured (None) drops out and the rest are renormalised."""
    # Summed in this order, always: a total must not depend on which path made it.
    weight_sum = mean = 0.0
    if diff is not None:
        weight_sum += WEIGHTS["diff"]
        mean += WEIGHTS["diff"] * diff
    weight_sum += WEIGHTS["subject"]
    mean += WEIGHTS["subject"] * subject
    if author is not None:
        weight_sum += WEIGHTS["author"]
        mean += WEIGHTS["author"] * author
    weight_sum += WEIGHTS["files"]
    mean += WEIGHTS["files"] * files
    return mean / weight_sum, weight_sum


def _fuzzy_evidence(
    candidate: Candidate, signals: Signals, *, weight_sum: float
) -> list[Evidence]:
    def share(name: str, value: float) -> float:
        return round(WEIGHTS[name] * value / weight_sum, 4)

    evidence = [
        Evidence(
            "subject",
            f"subject {signals.subject:.2f}",
            share("subject", signals.subject),
        )
    ]
    if signals.author is not None:
        evidence.append(
            Evidence("author", signals.author_detail, share("author", signals.author))
        )
    else:
        evidence.append(Evidence("author", signals.author_detail, 0.0))
    files = f"files {signals.shared_files}/{len(candidate.message.files)} shared (jaccard {signals.files:.2f})"
    evidence.append(Evidence("files", files, share("files", signals.files)))
    if signals.diff is not None:
        detail = (
            f"diff {_diff_text(signals)} over {count(signals.shared_files, 'file')}"
        )
        evidence.append(Evidence("diff", detail, share("diff", signals.diff)))
    else:
        evidence.append(Evidence("diff", "no diff to compare", 0.0))
    return evidence


def fuzzy_method(subject: float, author: float | None) -> str:
    """The strongest signal that stands behind a fuzzy verdict."""
    if subject >= STRONG_SIGNAL:
        return "subject"
    if (author or 0.0) >= STRONG_SIGNAL:
        return "author"
    return "files"


def _veto(candidate: Candidate, signals: Signals, *, commit_lines: LinesByFile) -> str:
    """Why a fuzzy candidate cannot be the posting whatever its score, or ""."""
    if candidate.message.kind != PATCH_KIND:
        return f"a {candidate.message.kind} message, not a patch"
    if signals.diff is None:
        author = signals.author or 0.0
        if min(signals.subject, author) < NO_DIFF_MIN_SIGNAL:
            return "no diff to compare, and subject or author too weak"
        return ""
    if signals.diff < MIN_DIFF_AGREEMENT:
        return f"diff {_diff_text(signals)} disagrees"
    small = informative_count(commit_lines) < SMALL_DIFF_LINES
    if small and signals.subject < 0.5 and (signals.author or 0.0) < STRONG_SIGNAL:
        return "diff too small to match on its own, subject and author differ"
    return ""


def _posted_what_was_committed(
    commit: Commit, candidate: Candidate, signals: Signals
) -> bool:
    """A maintainer may commit first and post for review after (days later).

    Only the same content by the same author, soon after the commit, qualifies: the
    same patch-id, or subject, author and diff all near-equal.
    """
    if (
        candidate.message.date is None
        or candidate.message.date - commit.commit_date > LATE_EXACT_WINDOW
    ):
        return False
    if (
        candidate.message.patch_id
        and candidate.message.patch_id == commit.patch.patch_id
    ):
        return True
    strong = STRONG_SIGNAL
    return (
        signals.subject >= strong
        and (signals.author or 0.0) >= strong
        and signals.diff is not None
        and signals.diff >= strong
    )


def date_vetoes(commit: Commit, candidate: Candidate) -> tuple[str, str]:
    """(late veto, early veto) for the posting date; "" when it is in the window."""
    if candidate.message.date is None:
        return "", ""
    before = commit.commit_date - candidate.message.date
    late = ""
    if before < -LATE_SLACK:
        late = f"{_date_text(before)} (limit {_duration(LATE_SLACK)})"
    # A long review ends in a commit long after the posting, but the posting comes
    # after the patch was written: the window counts from the author date too.
    early = ""
    if (
        min(commit.author_date, commit.commit_date) - candidate.message.date
        > EARLY_WINDOW
    ):
        window = _duration(EARLY_WINDOW)
        early = f"{_date_text(before)} (window {window} before the author date)"
    return late, early


def _date_evidence(commit: Commit, candidate: Candidate) -> Evidence:
    if candidate.message.date is None:
        return Evidence("date", "posting date unknown", 0.0)
    return Evidence(
        "date", _date_text(commit.commit_date - candidate.message.date), 0.0
    )


def _date_text(before: timedelta) -> str:
    if before < timedelta(0):
        return f"posted {_duration(-before)} after commit"
    return f"posted {_duration(before)} before commit"


def _date_factor(commit: Commit, candidate: Candidate) -> float:
    """1 up to a month before the commit, easing to 0.85 at a year."""
    if candidate.message.date is None:
        return 1.0
    age = commit.commit_date - candidate.message.date
    if age <= FRESH_AGE:
        return 1.0
    span = (EARLY_WINDOW - FRESH_AGE).total_seconds()
    fraction = min(1.0, (age - FRESH_AGE).total_seconds() / span)
    return 1.0 - (1.0 - OLDEST_DATE_FACTOR) * fraction


def _duration(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 2 * 3600:
        return f"{seconds // 60} minutes"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} hours"
    return f"{seconds // 86400} days"


def _certain(total: float, method: str, detail: str) -> Score:
    return Score(total, method, True, (Evidence(method, detail, total),), "")


def _with_evidence(score: Score, extra: Evidence) -> Score:
    return Score(
        score.total,
        score.method,
        score.accepted,
        (*score.evidence, extra),
        score.reason,
    )


def below(total: float, threshold: float) -> str:
    """ "0.59 below 0.60", with the digits it takes not to print 0.5996 as 0.60."""
    digits = 2
    while digits < 4 and round(total, digits) >= threshold:
        digits += 1
    return f"{total:.{digits}f} below {threshold:.2f}"


def _diff_text(signals: Signals) -> str:
    value = f"{signals.diff or 0.0:.2f}"
    return value if signals.diff_exact else f"at most {value}"
