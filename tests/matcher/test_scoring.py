"""Scoring a commit against mail candidates: exact keys, combined signals, vetoes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from e2g.matcher.prefilter import hopeless, score_candidate
from e2g.matcher.scoring import (
    ACCEPT_THRESHOLD,
    Candidate,
    author_similarity,
    normalise_name,
)
from e2g.matcher.similarity import diff_overlap, similarity_bound_from_counts
from e2g.model import Address, DateSource, Kind, lines_weight
from e2g.model.links import Commit
from e2g.model.patch import FileChange, Patch
from e2g.model.stored import StoredMessage

MOUNTAIN = timezone(timedelta(hours=-6))
AUTHOR_DATE = datetime(2024, 2, 6, 9, 14, 49, tzinfo=MOUNTAIN)
COMMIT_DATE = datetime(2024, 2, 20, 12, 0, 0, tzinfo=MOUNTAIN)
COMMIT_LINES = {
    "test/recv-multishot.c": (
        [
            "static int test_bundle(struct io_uring *ring, int fd)",
            "struct io_uring_sqe *sqe = io_uring_get_sqe(ring);",
            "io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);",
            "sqe->ioprio |= IORING_RECVSEND_BUNDLE;",
            "ret = io_uring_submit(ring);",
            "if (ret != 1) {",
            'fprintf(stderr, "submit failed: %d\\n", ret);',
            "return T_EXIT_FAIL;",
            "}",
            "return T_EXIT_PASS;",
        ],
        ["return 0;"],
    )
}
UNRELATED_LINES = {
    "man/io_uring_prep_splice.3": (
        [
            '.TH io_uring_prep_splice 3 "March 13, 2022" "liburing-2.2"',
            ".SH NAME",
            "io_uring_prep_splice \\- prepare an splice request",
            ".SH SYNOPSIS",
            ".B #include <liburing.h>",
        ],
        [],
    )
}


def make_commit(**changes) -> Commit:
    commit = Commit(
        sha="0" * 40,
        subject="test/recv-multishot: add test case for bundles",
        subject_key="test/recv-multishot: add test case for bundles",
        author=Address("Jens Axboe", "axboe@kernel.dk"),
        author_date=AUTHOR_DATE,
        commit_date=COMMIT_DATE,
        patch=Patch(
            diff="(not read by scoring)",
            files=(FileChange("test/recv-multishot.c", None, added=10, removed=1),),
            added=10,
            removed=1,
            patch_id="d15e916a02d31ac6bf8df509b971545b620ec0b8",
        ),
    )
    return commit._replace(**changes)


_POSTED = StoredMessage(
    seq=1,
    message_id="20240206161449.1234567-2-axboe@kernel.dk",
    synthetic=False,
    subject="[PATCH] test/recv-multishot: add test case for bundles",
    subject_key="test/recv-multishot: add test case for bundles",
    version=1,
    part=None,
    total=None,
    rfc=False,
    resend=False,
    author_name="Jens Axboe",
    author_email="axboe@kernel.dk",
    patch_author_name=None,
    patch_author_email=None,
    date=datetime(2024, 2, 6, 16, 14, 49, tzinfo=UTC),
    date_raw="Tue, 6 Feb 2024 16:14:49 +0000",
    date_source=DateSource.HEADER,
    received_at=None,
    parent_id=None,
    thread_root="20240206161449.1234567-2-axboe@kernel.dk",
    kind=Kind.PATCH,
    pull_url=None,
    pull_ref=None,
    patch_id="1ee5c461a38c7516fdc73a4d4bb632e67a6e0c8d",
    added=10,
    removed=1,
    series_id=None,
    list_id="io-uring.vger.kernel.org",
    files=("test/recv-multishot.c",),
)


def changed(candidate: Candidate, **changes) -> Candidate:
    """`candidate` with some of its message's fields (or its sources) changed."""
    sources = changes.pop("sources", candidate.sources)
    return Candidate(candidate.message._replace(**changes), sources)


def make_candidate(**changes) -> Candidate:
    return changed(Candidate(_POSTED, frozenset({"subject"})), **changes)


def score(commit=None, candidate=None, mail_lines=COMMIT_LINES):
    return score_candidate(
        commit or make_commit(),
        candidate or make_candidate(),
        commit_lines=COMMIT_LINES,
        mail_lines=mail_lines,
    )


def details(result) -> list[str]:
    return [evidence.detail for evidence in result.evidence]


def test_equal_patch_id_is_accepted() -> None:
    candidate = make_candidate(
        patch_id="d15e916a02d31ac6bf8df509b971545b620ec0b8",
        subject_key="something else entirely",
        author_email="other@example.com",
        author_name="Someone Else",
        sources=frozenset({"patch-id"}),
    )
    result = score(candidate=candidate, mail_lines=UNRELATED_LINES)
    assert result.accepted
    assert result.method == "patch-id"
    assert result.total == 1.0
    assert "patch-id equal d15e916a02d31ac6bf8df509b971545b620ec0b8" in details(result)


def test_same_subject_and_similar_diff_is_accepted() -> None:
    edited = {
        path: ([*added[:-1], "return T_EXIT_SKIP;"], removed)
        for path, (added, removed) in COMMIT_LINES.items()
    }
    result = score(mail_lines=edited)
    assert result.accepted, result.reason
    assert result.method == "subject"
    assert result.total > 0.9
    found = details(result)
    assert "subject 1.00" in found
    assert any(
        text.startswith("diff 0.9") and text.endswith("over 1 file") for text in found
    )
    assert "posted 14 days before commit" in found
    assert result.reason == ""


def test_same_subject_unrelated_diff_other_author_is_rejected() -> None:
    candidate = make_candidate(
        author_name="Someone Else",
        author_email="someone@example.com",
        files=("man/io_uring_prep_splice.3",),
    )
    result = score(candidate=candidate, mail_lines=UNRELATED_LINES)
    assert not result.accepted
    assert re.fullmatch(r"diff (at most )?0\.0\d disagrees", result.reason)
    assert result.total < ACCEPT_THRESHOLD


def test_posted_after_commit_plus_one_day_is_rejected() -> None:
    # Another sender's mail days after the commit cannot be where it came from.
    late = COMMIT_DATE + timedelta(days=3)
    other = make_candidate(
        date=late, patch_id=None, author_name="Kim Lee", author_email="kim@example.org"
    )
    result = score(candidate=other)
    assert not result.accepted
    assert result.reason == "posted 3 days after commit (limit 24 hours)"


def test_author_posting_what_they_committed_days_later_is_accepted() -> None:
    # Maintainers commit to their tree, then post for review: same author, same
    # content, days after the commit date. Accepted, but below a timely posting.
    late = score(
        candidate=make_candidate(date=COMMIT_DATE + timedelta(days=3), patch_id=None)
    )
    timely = score(candidate=make_candidate(patch_id=None))
    assert late.accepted
    assert "posted 3 days after commit" in details(late)
    assert late.total < timely.total


def test_posted_hours_after_commit_is_within_slack() -> None:
    result = score(candidate=make_candidate(date=COMMIT_DATE + timedelta(hours=5)))
    assert result.accepted
    assert "posted 5 hours after commit" in details(result)


def test_patch_id_equal_late_is_accepted_within_the_window_only() -> None:
    patch_id = "d15e916a02d31ac6bf8df509b971545b620ec0b8"
    soon = score(
        candidate=make_candidate(
            patch_id=patch_id, date=COMMIT_DATE + timedelta(days=40)
        )
    )
    assert soon.accepted
    assert soon.method == "patch-id"
    assert soon.total < 1.0
    much_later = score(
        candidate=make_candidate(
            patch_id=patch_id, date=COMMIT_DATE + timedelta(days=70)
        )
    )
    assert not much_later.accepted
    assert "after commit" in much_later.reason


def test_older_than_a_year_is_rejected_but_a_month_is_not_penalised() -> None:
    old = score(candidate=make_candidate(date=COMMIT_DATE - timedelta(days=400)))
    assert not old.accepted
    assert "window 365 days" in old.reason
    month = score(candidate=make_candidate(date=COMMIT_DATE - timedelta(days=29)))
    half_year = score(candidate=make_candidate(date=COMMIT_DATE - timedelta(days=200)))
    assert month.total == 1.0
    assert half_year.accepted
    assert 0.85 < half_year.total < month.total


def test_equal_author_date_is_near_certain() -> None:
    candidate = make_candidate(
        date=AUTHOR_DATE, subject_key="reworded", sources=frozenset({"author-date"})
    )
    result = score(candidate=candidate, mail_lines=None)
    assert result.accepted
    assert result.method == "author-date"
    assert result.total == pytest.approx(0.98)


def test_equal_author_date_alone_is_not_enough() -> None:
    candidate = make_candidate(
        date=AUTHOR_DATE,
        author_name="Other",
        author_email="other@example.com",
        files=("src/other.c",),
        subject_key="something else",
    )
    result = score(candidate=candidate, mail_lines=UNRELATED_LINES)
    assert not result.accepted
    assert result.method != "author-date"


def test_trailer_to_matching_patch_is_certain() -> None:
    result = score(candidate=make_candidate(sources=frozenset({"trailer"})))
    assert result.accepted
    assert result.method == "trailer"
    assert result.total == 1.0


def test_trailer_to_cover_letter_is_not_the_posting() -> None:
    candidate = make_candidate(kind="cover", files=(), sources=frozenset({"trailer"}))
    result = score(candidate=candidate, mail_lines=None)
    assert not result.accepted
    assert result.method == "trailer"
    assert result.reason == "trailer points at a cover letter, not the patch"


def test_trailer_to_patch_with_other_content_is_scored_normally() -> None:
    candidate = make_candidate(
        sources=frozenset({"trailer"}),
        subject_key="man: add splice",
        files=("man/io_uring_prep_splice.3",),
    )
    result = score(candidate=candidate, mail_lines=UNRELATED_LINES)
    assert not result.accepted
    assert "disagrees" in result.reason


def test_reworded_subject_same_diff_other_sender_is_accepted_by_files() -> None:
    candidate = make_candidate(
        subject_key="add bundle test",
        author_name="Jane Roe",
        author_email="jane@example.org",
        sources=frozenset({"files"}),
    )
    result = score(candidate=candidate)
    assert result.accepted, result.reason
    assert result.method == "files"


def test_no_diff_needs_strong_subject_and_author() -> None:
    accepted = score(mail_lines=None)
    assert accepted.accepted
    assert "no diff to compare" in details(accepted)
    weak = score(
        candidate=make_candidate(author_name="X", author_email="x@y.z"), mail_lines=None
    )
    assert not weak.accepted
    assert weak.reason == "no diff to compare, and subject or author too weak"


def test_reply_is_never_the_posting() -> None:
    result = score(candidate=make_candidate(kind="reply"), mail_lines=None)
    assert not result.accepted
    assert result.reason == "a reply message, not a patch"


def test_unknown_date_is_neutral() -> None:
    result = score(candidate=make_candidate(date=None))
    assert result.accepted
    assert "posting date unknown" in details(result)


def test_author_similarity_levels() -> None:
    author = Address("Jöhn Doe", "john@example.com")
    assert author_similarity(author, name="J", email="JOHN@example.com") == (
        1.0,
        "author email equal",
    )
    assert (
        author_similarity(author, name="Doe, John", email="jd@work.example")[0] == 0.9
    )
    assert (
        author_similarity(
            author, name="John Doe via io-uring", email="io-uring@vger.kernel.org"
        )[0]
        == 0.9
    )
    assert author_similarity(
        author, name="'Bob' via dev", email="dev@googlegroups.com"
    ) == (
        None,
        "sender rewritten by the list",
    )
    assert author_similarity(author, name="Bob", email="bob@example.com")[0] == 0.0


def test_normalise_name() -> None:
    assert normalise_name("Doe, Jöhn") == normalise_name("john  DOE") == "doe john"
    assert normalise_name("") == ""


def test_predates_only_beyond_the_late_posting_window() -> None:
    from e2g.matcher.scoring import LATE_EXACT_WINDOW, LATE_SLACK, predates

    start = datetime(2020, 1, 1, tzinfo=UTC)
    edge = start - LATE_EXACT_WINDOW - LATE_SLACK
    assert predates(edge - timedelta(seconds=1), start)
    assert not predates(edge, start)
    assert not predates(start + timedelta(days=400), start)


_POOL = [*COMMIT_LINES["test/recv-multishot.c"][0], "int x;", "x = y + 1;"]


def posted_by(  # noqa: PLR0913
    author: str, subject: str, days: int, path: str, *, sources: frozenset[str]
) -> Candidate:
    """A one-file candidate by `author`, posted `days` before the commit."""
    return make_candidate(
        subject_key=subject,
        author_email=author,
        author_name="Jens Axboe" if author == "axboe@kernel.dk" else "Some One",
        date=COMMIT_DATE - timedelta(days=days),
        files=(path,),
        sources=sources,
    )


@settings(max_examples=300, deadline=None)
@given(
    added=st.lists(st.sampled_from(_POOL), max_size=14),
    removed=st.lists(st.sampled_from(["return 0;", "return 1;", "}"]), max_size=3),
    path=st.sampled_from(["test/recv-multishot.c", "test/other.c"]),
    subject=st.sampled_from(
        [
            "test/recv-multishot: add test case for bundles",
            "test/recv-multishot: add a bundle test",
            "man: fix typo",
        ]
    ),
    author=st.sampled_from(["axboe@kernel.dk", "someone@example.org"]),
    days=st.integers(-3, 400),
    sources=st.sampled_from(
        [frozenset({"files"}), frozenset({"subject"}), frozenset({"trailer"})]
    ),
)
def test_bounded_diffs_never_change_a_verdict(
    monkeypatch_module, added, removed, path, subject, author, days, sources
) -> None:
    """Skipping the line comparison for hopeless diffs gives the same accept/reject."""
    import e2g.matcher.scoring as scoring
    from e2g.matcher.similarity import diff_overlap

    candidate = posted_by(author, subject, days, path, sources=sources)
    mail = {path: (added, removed)}
    bounded = score(candidate=candidate, mail_lines=mail)
    with monkeypatch_module.context() as patch:
        patch.setattr(
            scoring,
            "diff_overlap",
            lambda ours, theirs, **_: diff_overlap(ours, theirs),
        )
        exact = score(candidate=candidate, mail_lines=mail)
    assert bounded.accepted == exact.accepted
    assert bounded.method == exact.method
    if exact.accepted:
        assert bounded == exact
    early = hopeless(make_commit(), candidate)
    if early is not None:
        # Rejected before reading the diff: only what the full scoring rejects too,
        # and never with a better score than it could have had.
        assert not exact.accepted
        assert early.method == exact.method
        assert early.total >= exact.total - 1e-4


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_a_file_map_candidate_with_nothing_else_in_common_is_hopeless() -> None:
    candidate = make_candidate(
        subject_key="man: fix typo in io_uring_prep_splice",
        author_email="someone@example.org",
        author_name="Some One",
        date=COMMIT_DATE - timedelta(days=200),
        files=("test/recv-multishot.c", "man/io_uring_prep_splice.3", "src/queue.c"),
        sources=frozenset({"files"}),
    )
    early = hopeless(make_commit(), candidate)
    assert early is not None and not early.accepted
    assert early.reason.startswith("score at most 0.")
    assert early.reason.endswith("even with an equal diff")
    # Even the commit's very own lines would not have saved it.
    assert not score(candidate=candidate, mail_lines=COMMIT_LINES).accepted
    # The same mail from the commit's author is worth reading.
    assert hopeless(make_commit(), make_candidate(sources=frozenset({"files"}))) is None


def test_a_long_review_is_inside_the_window_counted_from_the_author_date() -> None:
    """Written, posted, then reviewed for 16 months: the posting is 500 days before
    the commit but after the author date, so it is no "old" mail."""
    authored = COMMIT_DATE - timedelta(days=560)
    commit = make_commit(author_date=authored)
    posted = make_candidate(date=COMMIT_DATE - timedelta(days=500), patch_id=None)
    result = score(commit=commit, candidate=posted)
    assert result.accepted, result.reason
    older = make_candidate(date=authored - timedelta(days=400), patch_id=None)
    rejected = score(commit=commit, candidate=older)
    assert not rejected.accepted
    assert "before the author date" in rejected.reason


def test_a_tiny_posted_diff_inside_the_commit_needs_subject_and_author() -> None:
    """The author posted a one-line fix, then committed it with the man page updated."""
    fix = {"lib.c": (["Wuniversal_initializer = 0;"], ["Wuniversal_initializer = 1;"])}
    docs = {
        "sparse.1": (
            [f".B \\-Wuniversal\\-initializer line {n}" for n in range(6)],
            [f"old text {n}" for n in range(4)],
        )
    }
    commit = make_commit(
        patch=Patch(
            diff="(not read by scoring)",
            files=(
                FileChange("lib.c", None, added=1, removed=1),
                FileChange("sparse.1", None, added=6, removed=4),
            ),
            added=7,
            removed=5,
            patch_id=None,
        )
    )
    posted = make_candidate(files=("lib.c",), patch_id=None)

    def verdict(candidate: Candidate):
        return score_candidate(
            commit, candidate, commit_lines={**fix, **docs}, mail_lines=fix
        )

    assert verdict(posted).accepted, verdict(posted).reason
    other_author = changed(posted, author_email="x@example.org", author_name="X Y")
    assert not verdict(other_author).accepted


def test_a_score_just_below_the_threshold_is_not_printed_as_the_threshold() -> None:
    from e2g.matcher.scoring import below as _below

    assert _below(0.5996, 0.60) == "0.5996 below 0.60"
    assert _below(0.5929, 0.60) == "0.59 below 0.60"


@settings(max_examples=300, deadline=None)
@given(
    added=st.lists(st.sampled_from(_POOL), max_size=14),
    removed=st.lists(st.sampled_from(["return 0;", "return 1;", "}"]), max_size=3),
    blank=st.integers(0, 3),
    path=st.sampled_from(["test/recv-multishot.c", "test/other.c"]),
    subject=st.sampled_from(
        ["test/recv-multishot: add a bundle test", "man: fix typo", "test: fix it"]
    ),
    author=st.sampled_from(["axboe@kernel.dk", "someone@example.org"]),
    days=st.integers(-3, 400),
    weighed=st.booleans(),
)
def test_line_counts_never_change_a_verdict(  # noqa: PLR0913
    added, removed, blank, path, subject, author, days, weighed
) -> None:
    """Ruling a candidate out from its files' line counts (blank lines counted too,
    as the store has them) and weights (as ingest stores them) gives the verdict
    that reading its diff gives."""
    candidate = posted_by(author, subject, days, path, sources=frozenset({"files"}))
    candidate = changed(candidate, patch_id=None)
    mail = {path: (added, removed)}
    read = score(candidate=candidate, mail_lines=mail)
    counted = changed(candidate, file_lines=((len(added) + blank, len(removed)),))
    if weighed:
        weight = lines_weight(added)[1] + lines_weight(removed)[1]
        counted = changed(counted, file_weights=(weight,))
    calls: list[int] = []

    def lines() -> dict[str, tuple[list[str], list[str]]]:
        calls.append(1)
        return mail

    early = score_candidate(
        make_commit(), counted, commit_lines=COMMIT_LINES, mail_lines=lines
    )
    assert early.accepted == read.accepted
    assert early.method == read.method
    if added or removed:  # (blank lines alone: no diff to compare, another rule)
        if not weighed:
            assert early.total >= read.total - 1e-4
        # A bound is never below the truth: the similarity of the lines compared.
        bound = similarity_bound_from_counts(
            COMMIT_LINES,
            counted.message.files,
            counted.message.file_lines,
            counted.message.file_weights,
        )
        if bound is not None:
            assert bound >= diff_overlap(COMMIT_LINES, mail).similarity - 1e-9
    if early.accepted:
        assert calls  # an acceptance always read the diff
