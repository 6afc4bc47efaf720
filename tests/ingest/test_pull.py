"""git request-pull detection: URL and ref, wrapped lines, quoted text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from e2g.mail.pull import find_pull
from e2g.model.mail import PullRequest

MODERN = """\
The following changes since commit ef7f8cec80a0ba7bd00ece46844c8994117dc910:

  Merge git://git.kernel.org/pub/scm/linux/kernel/git/davem/net (2018-01-08)

are available in the Git repository at:

  git://git.kernel.org/pub/scm/linux/kernel/git/davem/net.git for-linus

for you to fetch changes up to ccc12b11c5332c84442ef120dcd631523be75089:
"""


def test_modern_request() -> None:
    assert find_pull(MODERN) == PullRequest(
        "git://git.kernel.org/pub/scm/linux/kernel/git/davem/net.git", "for-linus"
    )


def test_url_schemes() -> None:
    for url in (
        "ssh://git@host/repo.git",
        "git+ssh://host/repo.git",
        "https://git.kernel.org/pub/scm/x.git",
        "http://host/x.git",
        "git@github.com:owner/repo.git",
    ):
        text = f"are available in the git repository at:\n\n  {url} next\n"
        assert find_pull(text) == PullRequest(url, "next")


def test_no_ref_and_trailing_space() -> None:
    text = "are available in the Git repository at:\n\n  git://h/p/net \n\nfor you to fetch\n"
    assert find_pull(text) == PullRequest("git://h/p/net", None)


def test_ref_wrapped_to_next_line() -> None:
    text = (
        "are available in the Git repository at:\n\n"
        "  https://git.kernel.org/pub/scm/linux/kernel/git/matthias.bgg/linux.git/\n"
        "tags/v5.4-next-soc\n\nfor you to fetch changes up to 662c9d55:\n"
    )
    found = find_pull(text)
    assert found is not None
    assert f"{found.url} {found.ref}" == (
        "https://git.kernel.org/pub/scm/linux/kernel/git/matthias.bgg/linux.git/"
        " tags/v5.4-next-soc"
    )


def test_url_wrapped_mid_path() -> None:
    text = "are available in the git repository at:\n\n  git://host/pub/scm/\n  linux.git master\n"
    assert find_pull(text) == PullRequest("git://host/pub/scm/linux.git", "master")


def test_backslash_continuation_and_old_wording() -> None:
    text = "are found in the git repository at:\n\n  git://host/x.git \\\n  for-linus\n"
    assert find_pull(text) == PullRequest("git://host/x.git", "for-linus")


def test_git_pull_command_fallback() -> None:
    assert find_pull(
        "Please pull:\n\n    git pull git://host/x.git fixes\n"
    ) == PullRequest("git://host/x.git", "fixes")


def test_quoted_request_is_not_a_request() -> None:
    quoted = "\n".join("> " + line for line in MODERN.splitlines())
    assert (
        find_pull("On Mon, Linus wrote:\n" + quoted + "\n\nPulled, thanks.\n") is None
    )
    assert find_pull("> git pull git://host/x.git fixes\n") is None


def test_not_requests() -> None:
    assert find_pull("") is None
    assert find_pull("The fix is available in the next release at:\n\n  soon\n") is None
    assert (
        find_pull("Merge branch 'x' of git://git.kernel.org/.../libata-dev\n") is None
    )
    assert (
        find_pull("are available in the git repository at:\n\nnot a url here at all\n")
        is None
    )


@given(st.text(max_size=400))
def test_never_raises(text: str) -> None:
    found = find_pull(text)
    assert found is None or "://" in found.url or "@" in found.url


@given(st.text(alphabet="ab:/.@ \n>\\git", max_size=80))
def test_never_raises_near_announcement(tail: str) -> None:
    find_pull("are available in the git repository at:\n" + tail)
