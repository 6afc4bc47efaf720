"""The upstream notes a commit message carries, and the mails of the backport process
(e2g.mail.backport): pure rules, with property tests."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from e2g.mail.backport import (
    _ANDROID,
    _MAYBE,
    _NOTES,
    BackportNote,
    ProcessKind,
    _maybe_process,
    names_release,
    parse_backport,
    process_kind,
    process_title,
    process_version,
    upstream_subject,
)

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("message", "how", "shas"),
    [
        (f"mm: fix\n\ncommit {SHA} upstream.\n\nbody\n", "commit-upstream", (SHA,)),
        (f"mm: fix\n\nCommit {SHA.upper()} Upstream\n", "commit-upstream", (SHA,)),
        (
            f"mm: fix\n\n  commit  {SHA[:12]}   upstream .\n",
            "commit-upstream",
            (SHA[:12],),
        ),
        (f"mm: fix\n\n[ Upstream commit {SHA} ]\n\nbody\n", "upstream-commit", (SHA,)),
        (f"mm: fix\n\n[upstream commit {SHA[:7]}]\n", "upstream-commit", (SHA[:7],)),
        (f"mm: fix\n\nUpstream commit {SHA}.\n", "upstream-commit", (SHA,)),
        (f"x\n\nbody\n(cherry picked from commit {SHA})\n", "cherry-picked", (SHA,)),
        (
            f"x\n\n( Cherry-Picked  from commit {SHA[:10]} )\n",
            "cherry-picked",
            (SHA[:10],),
        ),
        (
            f"x\n\n(cherry picked from commit {SHA})\n(cherry picked from commit {'f' * 40})\n",
            "cherry-picked",
            (SHA, "f" * 40),
        ),
        ("UPSTREAM: mm: fix\n\nbody\n", "android", ()),
        ("BACKPORT: mm: fix\n", "android", ()),
        ("fromgit: mm: fix\n", "android", ()),
        # Android's prefix with a cherry-pick line: the line names the commit.
        (
            f"UPSTREAM: mm: fix\n\n(cherry picked from commit {SHA})\n",
            "cherry-picked",
            (SHA,),
        ),
        # The stable note names mainline even when a pick line names a branch.
        (
            f"x\n\ncommit {SHA} upstream.\n\n(cherry picked from commit {'e' * 40})\n",
            "commit-upstream",
            (SHA,),
        ),
    ],
)
def test_notes(message: str, how: str, shas: tuple[str, ...]) -> None:
    note = parse_backport(message)
    assert note is not None
    assert (note.how, note.shas) == (how, shas)


@pytest.mark.parametrize(
    "message",
    [
        f'Revert "mm: fix"\n\nThis reverts commit {SHA}.\n',
        f'mm: fix\n\nFixes: {SHA[:12]} ("mm: old")\n',
        f"mm: fix\n\nThe commit {SHA} upstream broke this, so fix it here.\n",
        "FROMLIST: mm: fix\n",  # posted, not yet in any tree
        "mm: upstream: fix\n",
        f"mm: fix\n\ncommit {SHA[:6]} upstream.\n",  # too short to name a commit
        "",
    ],
)
def test_no_note(message: str) -> None:
    assert parse_backport(message) is None


@given(st.text(max_size=400))
def test_parse_never_raises_and_shas_are_hex(text: str) -> None:
    note = parse_backport(text)
    assert note is None or all(
        7 <= len(sha) <= 40 and set(sha) <= set("0123456789abcdef") for sha in note.shas
    )


@given(st.text(max_size=200), st.text(max_size=200))
def test_a_note_is_found_wherever_it_stands(before: str, after: str) -> None:
    message = f"{before}\n(cherry picked from commit {SHA})\n{after}"
    note = parse_backport(message)
    assert note is not None
    assert SHA in note.shas or note.how in {"commit-upstream", "upstream-commit"}


@pytest.mark.parametrize(
    ("subject", "kind"),
    [
        ("[PATCH AUTOSEL 6.1 12/40] mm: fix", ProcessKind.AUTOSEL),
        ("[PATCH AUTOSEL 5.15 01/20] mm: fix", ProcessKind.AUTOSEL),
        ("[PATCH 5.15.y] mm: fix", ProcessKind.STABLE_REVIEW),
        ("[PATCH 6.1.42] mm: fix", ProcessKind.STABLE_REVIEW),
        ("[PATCH 4.19-stable] mm: fix", ProcessKind.STABLE_REVIEW),
        ("[PATCH stable] mm: fix", ProcessKind.STABLE_REVIEW),
        (
            'FAILED: patch "[PATCH] mm: fix" failed to apply to 6.1-stable tree',
            ProcessKind.FAILED,
        ),
        ('Patch "mm: fix" has been added to the 6.1-stable tree', ProcessKind.QUEUED),
        ('patch "mm: fix" has been added to the 5.4-stable tree', ProcessKind.QUEUED),
        (
            "linux-next: manual merge of the net-next tree with the net tree",
            ProcessKind.NEXT_MERGE,
        ),
        (
            "linux-next: build failure after merge of the drm tree",
            ProcessKind.NEXT_MERGE,
        ),
    ],
)
def test_process_kinds(subject: str, kind: ProcessKind) -> None:
    assert process_kind(subject) is kind


@pytest.mark.parametrize(
    "subject",
    [
        "[PATCH] mm: fix",
        "[PATCH v2 3/7] mm: fix",
        "[PATCH net-next] mm: fix",
        "Re: [PATCH 6.1 012/100] mm: fix",  # a review reply in the series' thread
        "Re: [PATCH AUTOSEL 6.1 12/40] mm: fix",
        "[GIT PULL] mm fixes for 6.1",
        "Linux 6.1.42",
        "linux-next: Tree for Dec 5",
    ],
)
def test_not_process(subject: str) -> None:
    assert process_kind(subject) is None


REVIEW_LINE = (
    "6.1-stable review patch.  If anyone has any objections, please let me know.\n"
)


@pytest.mark.parametrize(
    "body",
    [
        f"{REVIEW_LINE}\n------------------\n\nFrom: A <a@x>\n\n[ Upstream commit "
        f"{'a' * 40} ]\n",
        REVIEW_LINE,
        f"commit {'b' * 40} upstream.\n\nThe fix, taken back to 6.1.\n",
        f"Fixes a leak.\n\n(cherry picked from commit {'c' * 12})\n",
    ],
)
def test_a_bare_release_is_stable_review_when_the_body_says_so(body: str) -> None:
    assert (
        process_kind("[PATCH 6.1 012/100] mm: fix", body=body)
        is ProcessKind.STABLE_REVIEW
    )


@pytest.mark.parametrize(
    "body",
    [
        None,  # unknown: the subject alone says nothing
        "",
        "Fix the leak that 5.13's rework brought in.\n\nSigned-off-by: A <a@x>\n",
        "This series is for 5.13, on top of for-5.13/io_uring.\n",
    ],
)
def test_a_patch_for_a_release_is_nobodys_process_mail(body: str | None) -> None:
    # io_uring's and the block layer's lists tag a patch with the release it is
    # for: the applied patch itself, never a stable review.
    for subject in (
        "[PATCH 5.13 3/9] io_uring: fix a leak",
        "[PATCH v2 5.12 00/13] a second pack of 5.12 cleanups",
        "[PATCH RFC 5.13 0/2] adaptive sqpoll",
    ):
        assert process_kind(subject, body=body) is None
        assert names_release(subject)


def test_names_release() -> None:
    assert not names_release("[PATCH] mm: fix")
    assert not names_release("[PATCH 5.15.y] mm: fix")  # a stable tree by itself
    assert not names_release("Re: [PATCH 6.1 012/100] mm: fix")  # a reply


def test_process_title() -> None:
    assert (
        process_title(
            'FAILED: patch "[PATCH] mm: fix x" failed to apply to 6.1-stable tree'
        )
        == "mm: fix x"
    )
    assert (
        process_title('Patch "mm: fix x" has been added to the 6.1-stable tree')
        == "mm: fix x"
    )
    assert process_title("[PATCH] mm: fix x") is None


@given(st.text(max_size=300))
def test_process_kind_never_raises(subject: str) -> None:
    process_kind(subject)
    process_title(subject)


@pytest.mark.parametrize(
    ("subject", "version"),
    [
        ("[PATCH AUTOSEL 6.1 12/40] mm: fix", "6.1"),
        ("[PATCH 5.15 012/100] mm: fix 4.19 things", "5.15"),
        ("[PATCH 5.10.y] mm: fix", "5.10"),
        (
            'FAILED: patch "[PATCH] mm: fix 2.6 era" failed to apply to 6.6-stable tree',
            "6.6",
        ),
        ('Patch "mm: fix" has been added to the 6.1-stable tree', "6.1"),
        ("[PATCH stable] mm: fix", None),
        ("[PATCH] mm: fix", None),
    ],
)
def test_process_version(subject: str, version: str | None) -> None:
    assert process_version(subject) == version


def test_upstream_subject() -> None:
    assert upstream_subject("UPSTREAM: mm: fix") == "mm: fix"
    assert upstream_subject("BACKPORT: FROMGIT: mm: fix") == "FROMGIT: mm: fix"
    assert upstream_subject("mm: fix") == "mm: fix"


# Text built to come near the words the rules' cheap tests look for, in any case,
# some letters swapped for the Unicode ones case-insensitive patterns take for
# them ("ſ" is an "s", "ı" an "i"), digits around dots.
_NEAR = st.lists(
    st.sampled_from(
        [
            "autosel",
            "stable",
            "failed",
            "has been added",
            "linux-next",
            "upstream",
            "commit",
            "cherry picked from commit",
            f"\ncommit {SHA} upstream.\n",
            f"\n[ Upstream commit {SHA[:12]} ]\n",
            f"(cherry picked from commit {SHA})",
            SHA,
            SHA[:12],
            "6.1",
            "5.",
            ".4",
            "(",
            ")",
            "[",
            "]",
            " ",
            "\n",
            "é",
            "[PATCH] ",
            "Re: ",
        ]
    )
    | st.text(max_size=3),
    max_size=12,
).map("".join)
_FOLDS = {"s": "ſ", "i": "ı", "k": "\u212a"}


def _disguise(text: str, choices: list[int]) -> str:
    """`text` with some letters upper-cased and some swapped for their folds."""
    out = []
    for char, choice in zip(text, choices + [0] * len(text), strict=False):
        out.append(
            char.upper()
            if choice == 1
            else _FOLDS.get(char, char)
            if choice == 2
            else char
        )
    return "".join(out)


_CASED = st.builds(_disguise, _NEAR, st.lists(st.integers(0, 2), max_size=200))


@given(_CASED)
@example("lınux-next: manual merge of the x tree")
@example("[PATCH ſtable] mm: fix")
def test_cheap_process_test_is_maybe(subject: str) -> None:
    """process_kind's word test answers as the case-insensitive _MAYBE does."""
    assert _maybe_process(subject) is (_MAYBE.search(subject) is not None)


def _every_form(message: str) -> BackportNote | None:
    """parse_backport without its word test: every form searched."""
    for how, _, pattern in _NOTES:
        shas = tuple(dict.fromkeys(m[1].lower() for m in pattern.finditer(message)))
        if shas:
            return BackportNote(how, shas)
    subject = message.lstrip().split("\n", 1)[0]
    return BackportNote("android", ()) if _ANDROID.match(subject) else None


@given(_CASED)
@example(f"mm: fix\n\ncommit {SHA} upſtream.\n")
def test_word_test_keeps_every_note(message: str) -> None:
    """A form skipped for lacking its word finds nothing anyway."""
    assert parse_backport(message) == _every_form(message)
