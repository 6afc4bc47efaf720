"""The prefilter: every verdict on a candidate that is reached without reading its diff.

Most candidates the cascade proposes (a patch that touched one of the commit's files
last year, say) are rejected, and most rejections need no diff: reading one means
decompressing it from the store and comparing lines, the cost of a match run. The
cascade asks `prefilter` once per candidate; it answers with one of

- NO_COMMON_FILE: no file in common and nothing (trailer, patch-id) vouches for it;
- HOPELESS: even an equal diff would leave the weighted mean below the threshold,
  and no exact key or the no-diff rule could accept it (`hopeless_score` says so);
- BOUNDED: the line counts the store keeps bound the diff similarity below what any
  acceptance needs; scoring.verdict() takes the bound as the diff signal;
- READ_DIFF: only the diff can tell.

Every rule is a rejection that scoring would reach anyway with the diff in hand; the
tests check verdicts with and without the prefilter agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from e2g.matcher.scoring import (
    ACCEPT_THRESHOLD,
    NO_DIFF_MIN_SIGNAL,
    PATCH_KIND,
    STRONG_SIGNAL,
    Candidate,
    Early,
    Score,
    below,
    date_vetoes,
    diff_needed,
    early_facts,
    fuzzy_method,
    measure,
    needed_diff,
    signals_of,
    verdict,
    weighted_mean,
)
from e2g.matcher.similarity import LinesByFile, similarity_bound_from_counts
from e2g.model import MAX_FILES
from e2g.model.links import Commit

NO_COMMON_FILE_SCORE = Score(
    0.0, "files", False, (), "no file in common with the commit"
)


class Outcome(Enum):
    NO_COMMON_FILE = "no common file"
    HOPELESS = "hopeless"
    BOUNDED = "bounded"
    READ_DIFF = "read diff"


@dataclass(slots=True)  # not frozen: see scoring.Candidate
class Prefiltered:
    outcome: Outcome
    early: Early
    bound: float | None = None  # BOUNDED: the diff similarity's upper bound


def prefilter(
    commit: Commit,
    candidate: Candidate,
    *,
    commit_lines: LinesByFile,
    threshold: float = ACCEPT_THRESHOLD,
    files_decide: bool = True,
) -> Prefiltered:
    """What can be decided about `candidate` before its diff is read.

    With `files_decide` False, a candidate sharing no file is scored like any other,
    so that its rejection names the signal that rules it out (score_candidate)."""
    early = early_signals(commit, candidate, threshold=threshold)
    if (
        files_decide
        and not early.shared_files
        and _no_common_file_decides(commit, candidate)
    ):
        return Prefiltered(Outcome.NO_COMMON_FILE, early)
    if early.best_total is not None:
        return Prefiltered(Outcome.HOPELESS, early)
    bound = _bound_from_counts(candidate, early, commit_lines, threshold)
    if bound is not None:
        return Prefiltered(Outcome.BOUNDED, early, bound)
    return Prefiltered(Outcome.READ_DIFF, early)


def score_candidate(
    commit: Commit,
    candidate: Candidate,
    *,
    commit_lines: LinesByFile,
    mail_lines: LinesByFile | None | Callable[[], LinesByFile | None],
    threshold: float = ACCEPT_THRESHOLD,
) -> Score:
    """Score how surely `candidate` is a posting of `commit`'s patch.

    `commit_lines` and `mail_lines` are `e2g.mail.patch.diff_lines` of the two
    diffs, computed by the caller (the matcher does not import ingest); pass None
    for a candidate without a diff. `mail_lines` may be a function that reads them:
    it is called only when the prefilter cannot decide without the diff. Unlike
    the cascade, it does not reject a candidate for sharing no file before the
    other signals are weighed: its reason names the signal that rules it out.
    """
    found = prefilter(
        commit,
        candidate,
        commit_lines=commit_lines,
        threshold=threshold,
        files_decide=False,
    )
    return judge(
        commit,
        candidate,
        found,
        commit_lines=commit_lines,
        mail_lines=mail_lines,
        threshold=threshold,
    )


def judge(  # noqa: PLR0913 - all keyword-only
    commit: Commit,
    candidate: Candidate,
    found: Prefiltered,
    *,
    commit_lines: LinesByFile,
    mail_lines: LinesByFile | None | Callable[[], LinesByFile | None],
    threshold: float = ACCEPT_THRESHOLD,
) -> Score:
    """The verdict on a prefiltered candidate, reading its diff only for READ_DIFF."""
    if found.outcome is Outcome.NO_COMMON_FILE:
        return NO_COMMON_FILE_SCORE
    if found.outcome is Outcome.HOPELESS:
        return hopeless_score(commit, candidate, found.early, threshold=threshold)
    if found.outcome is Outcome.BOUNDED:
        signals = signals_of(found.early, diff=found.bound, diff_exact=False)
    else:
        lines = mail_lines() if callable(mail_lines) else mail_lines
        signals = measure(
            candidate,
            found.early,
            commit_lines=commit_lines,
            mail_lines=lines,
            threshold=threshold,
        )
    return verdict(
        commit, candidate, signals, commit_lines=commit_lines, threshold=threshold
    )


def early_signals(
    commit: Commit, candidate: Candidate, *, threshold: float = ACCEPT_THRESHOLD
) -> Early:
    """scoring.early_facts() with best_total set when the candidate is hopeless."""
    early = early_facts(commit, candidate)
    early.best_total = _best_total(
        commit,
        candidate,
        early.subject,
        early.author,
        early.files,
        early.date_factor,
        threshold,
    )
    return early


def _no_common_file_decides(commit: Commit, candidate: Candidate) -> bool:
    """For a candidate sharing no file: whether that alone decides (no trailer or
    patch-id vouches for it, and both sides do list files)."""
    sources = candidate.sources
    return not (
        "trailer" in sources
        or "patch-id" in sources
        or not commit.patch.paths
        or not candidate.message.files
    )


def _best_total(  # noqa: PLR0913
    commit: Commit,
    candidate: Candidate,
    subject: float,
    author: float | None,
    files: float,
    date_factor: float,
    threshold: float,
) -> float | None:
    """The weighted mean with an equal diff, when even that stays below `threshold`
    and no exact key (trailer, patch-id, author date) or the no-diff rule applies."""
    if (
        candidate.message.kind != PATCH_KIND
        or "trailer" in candidate.sources
        or (
            candidate.message.patch_id
            and candidate.message.patch_id == commit.patch.patch_id
        )
        or (
            candidate.message.date is not None
            and candidate.message.date == commit.author_date
        )
        or min(subject, author or 0.0) >= NO_DIFF_MIN_SIGNAL
        or diff_needed(subject, author, files, date_factor, threshold) <= 1.0
    ):
        return None
    best, _ = weighted_mean(diff=1.0, subject=subject, author=author, files=files)
    return round(best * date_factor, 4)


def hopeless(
    commit: Commit, candidate: Candidate, *, threshold: float = ACCEPT_THRESHOLD
) -> Score | None:
    """A rejection decided before the candidate's diff is read, or None.

    Most file-map candidates share a file and little else: when subject, author,
    files and date leave the weighted mean below `threshold` even with an equal
    diff, and no exact key (trailer, patch-id, author date) or the no-diff rule
    could accept it, the verdict is a rejection whatever the diff says.
    """
    early = early_signals(commit, candidate, threshold=threshold)
    if early.best_total is None:
        return None
    return hopeless_score(commit, candidate, early, threshold=threshold)


def hopeless_score(
    commit: Commit, candidate: Candidate, early: Early, *, threshold: float
) -> Score:
    """The rejection of a candidate whose early signals have a best_total."""
    total = early.best_total or 0.0
    late, too_early = date_vetoes(commit, candidate)
    reason = (
        late
        or too_early
        or f"score at most {below(total, threshold)}, even with an equal diff"
    )
    return Score(total, fuzzy_method(early.subject, early.author), False, (), reason)


def _bound_from_counts(
    candidate: Candidate,
    early: Early,
    commit_lines: LinesByFile,
    threshold: float,
) -> float | None:
    """The diff similarity's bound from line counts, when it already rules the
    candidate out (see _measure) and its diff need not be read; else None.

    Not with a subject or author that could earn containment credit (a small posted
    diff inside a large commit), nor for a trailer's candidate, nor when the counts
    may be incomplete or say the mail has no lines (then its diff decides otherwise).
    """
    if (
        max(early.subject, early.author or 0.0) >= STRONG_SIGNAL
        or "trailer" in candidate.sources
        or not candidate.message.file_lines
        or len(candidate.message.files) >= MAX_FILES
        or not any(added or removed for added, removed in candidate.message.file_lines)
    ):
        return None
    bound = similarity_bound_from_counts(
        commit_lines,
        candidate.message.files,
        candidate.message.file_lines,
        candidate.message.file_weights,
    )
    if bound is None or bound >= needed_diff(candidate, early, threshold):
        return None
    return round(bound, 6)
