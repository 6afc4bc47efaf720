"""A merge commit's subject against the pull requests of the archive (mail.pull)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from e2g.mail.pull import parse_merge, requests_merge
from e2g.model.mail import PullRequest

URL = "git://git.kernel.org/pub/scm/linux/kernel/git/frob/frob"


@pytest.mark.parametrize(
    ("subject", "url", "ref"),
    [
        (f"Merge tag 'frob-for-6.5' of {URL}", URL, "frob-for-6.5"),
        (f"Merge branch 'fixes' of {URL}.git", f"{URL}.git", "fixes"),
        ("Merge branch 'topic/x'", "", "topic/x"),
        ("Merge tags 'a' and 'b' of host:repo", "host:repo", "a"),
        ("Merge remote-tracking branch 'origin/next'", "", "origin/next"),
        (f"Merge {URL}", URL, None),
    ],
)
def test_parse_merge(subject: str, url: str, ref: str | None) -> None:
    assert parse_merge(subject) == PullRequest(url=url, ref=ref)


@pytest.mark.parametrize("subject", ["frob: merge two lists", "Merged x", ""])
def test_no_merge(subject: str) -> None:
    assert parse_merge(subject) is None


@pytest.mark.parametrize(
    ("request_url", "request_ref", "subject", "same"),
    [
        (f"{URL}.git", "tags/frob-for-6.5", f"Merge tag 'frob-for-6.5' of {URL}", True),
        (
            "https://git.kernel.org/pub/scm/linux/kernel/git/frob/frob.git/",
            "frob-for-6.5",
            f"Merge tag 'frob-for-6.5' of {URL}",
            True,
        ),
        (
            f"{URL}.git",
            "tags/frob-for-6.6",
            f"Merge tag 'frob-for-6.5' of {URL}",
            False,
        ),
        (
            "git://other.org/frob.git",
            "tags/frob-for-6.5",
            f"Merge tag 'frob-for-6.5' of {URL}",
            False,
        ),
        (f"{URL}.git", "refs/heads/topic", "Merge branch 'topic'", True),
        (f"{URL}.git", None, "Merge branch 'topic'", False),
    ],
)
def test_requests_merge(
    request_url: str, request_ref: str | None, subject: str, same: bool
) -> None:
    merge = parse_merge(subject)
    assert merge is not None
    assert requests_merge(PullRequest(request_url, request_ref), merge) is same


@given(st.text(max_size=300))
def test_parse_merge_never_raises(subject: str) -> None:
    found = parse_merge(subject)
    assert found is None or subject.strip().startswith("Merge")
