"""`e2g audit`'s pure rules: what a reply's words say about review, changelogs,
maintainer notes, exemptions, the archive's dates, and how code is compared."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from e2g import config
from e2g.api.audit import ArchiveWindow
from e2g.api.audit.delta import line_counts
from e2g.api.audit.verdicts import exempt_reason, outside_reason
from e2g.index.store import AuditRow
from e2g.mail.interdiff import Hunk, hunks
from e2g.mail.review import (
    acks,
    comments_on_patch,
    cover_changelog,
    has_changelog,
    maintainer_notes,
)
from e2g.model import Address
from tests.conftest import BASE_DATE


def test_comments_on_patch():
    diff = "> @@ -1 +1 @@\n> -a\n> +b\n"
    assert comments_on_patch(f"Alice wrote:\n{diff}\nThis breaks x.\n")
    assert not comments_on_patch(f"Alice wrote:\n{diff}\nReviewed-by: B <b@x>\n")
    assert not comments_on_patch("Alice wrote:\n> I think so\n> too\n\nMe too.\n")
    assert not comments_on_patch(f"{diff}\n-- \nsignature only\n")


def test_has_changelog():
    assert has_changelog("Fix x.\n\nSigned-off-by: A <a@x>\n---\nv2: renamed y\n")
    assert not has_changelog("Fix x.\n\nSigned-off-by: A <a@x>")
    assert not has_changelog(
        "Fix x.\n---\n a.c | 2 +-\n 1 file changed, 1 insertion(+)"
    )


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("Changes from v5:\n\n - fixed braces\n", True),
        ("v2 -> v3:\n- renamed x\n", True),
        ("Changes since v1:\n", True),
        ("Changelog:\n", True),
        ("This series changes the API of x.\n", False),
        ("Hi,\n\nthese patches add x.\n", False),
    ],
)
def test_cover_changelog(body, says):
    assert cover_changelog(body) is says


def test_maintainer_notes():
    message = "s\n\nbody\n\nSigned-off-by: A <a@x>\n[mia: fixed typo]\nSigned-off-by: M <m@x>\n"
    assert maintainer_notes(message) == ["[mia: fixed typo]"]
    assert maintainer_notes("s\n\n[note: in the body] is prose\n") == []


@pytest.mark.parametrize(
    ("subject", "files", "exempt"),
    [
        ("Linux 6.1", ["Makefile"], True),
        ("Linux 6.1-rc3", ["Makefile"], True),
        (
            "Git 2.39",
            ["GIT-VERSION-GEN", "RelNotes", "Documentation/RelNotes/2.39.0.txt"],
            True,
        ),
        ("v1.2.3", ["VERSION"], True),
        ("v1.2.3", ["src/main.c"], False),
        ("Git 2.39", [], False),
        ('Revert "mm: fix x"', ["mm/x.c"], True),
        ("mm: fix x", ["mm/x.c"], False),
    ],
)
def test_exempt_reason(subject, files, exempt):
    assert bool(exempt_reason(subject, files, ())) is exempt


def _hunk(*lines: str) -> list[Hunk]:
    return [Hunk("t.c", "@@ -1 +1 @@", lines)]


def test_a_realigned_line_is_no_change_once_spacing_is_dropped():
    """A posting that realigned a table (spacing within lines, the indentation
    kept) while adding a row, and a commit that only adds the row: the same
    change, as `git diff -w` would show it."""
    posted = _hunk(
        " struct {",
        '-\t{ "m",\tMUL },',
        '-\t{ "a",\tATOMIC },',
        '+\t{ "m",\t\tMUL },',
        '+\t{ "a",\t\tATOMIC },',
        '+\t{ "_zihintpause",\tPAUSE },',
        " };",
    )
    applied = _hunk(
        " struct {",
        ' \t{ "m",\tMUL },',
        ' \t{ "a",\tATOMIC },',
        '+\t{ "_zihintpause",\tPAUSE },',
        " };",
    )
    assert line_counts(posted)[1] == line_counts(applied)[1]
    assert line_counts(posted)[0] == line_counts(applied)[0]


@pytest.mark.parametrize(
    "lines",
    [
        ("-\tx();", "+\t\tx();"),  # re-indented: in Python, another block
        ("-\ta();", "-\tb();", "+\tb();", "+\ta();"),  # two lines swapped
        ("-\ta();", " \tc();", "+\ta();"),  # moved below another line
    ],
)
def test_a_reindented_or_moved_line_stays_a_change(lines):
    assert line_counts(_hunk(*lines))[1] != line_counts(_hunk())[1]


def test_non_git_diff_hunks_have_tree_paths():
    diff = (
        "diff -urp linux-2.6.20.orig/a.c linux-2.6.20/a.c\n"
        "--- linux-2.6.20.orig/a.c\t2007-02-20 21:04:13.000000000 +0100\n"
        "+++ linux-2.6.20/a.c\t2007-03-14 22:30:55.000000000 +0100\n"
        "@@ -1 +1 @@\n-a\n+b\n"
        "diff -urp linux-2.6.20.orig/mm/b.c linux-2.6.20/mm/b.c\n"
        "--- linux-2.6.20.orig/mm/b.c\t2007-02-20 21:04:13.000000000 +0100\n"
        "+++ linux-2.6.20/mm/b.c\t2007-03-14 22:30:55.000000000 +0100\n"
        "@@ -1 +1 @@\n-c\n+d\n"
    )
    assert [(hunk.path, hunk.lines) for hunk in hunks(diff)] == [
        ("a.c", ("-a", "+b")),
        ("mm/b.c", ("-c", "+d")),
    ]


def test_config_reads_audit_exempt(tmp_path: Path):
    home = tmp_path / "home"
    (home / ".config" / "e2g").mkdir(parents=True)
    (home / ".config" / "e2g" / "config.toml").write_text(
        '[audit]\nexempt = ["^Merge tag", "^docs:"]\n'
    )
    found = config.resolve(data_dir=tmp_path, env={}, home=home)
    assert found.audit_exempt == ("^Merge tag", "^docs:")


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("On Tue, Linus wrote:\n> Fix x.\n\nAck.\n\nI do wonder if ...\n", True),
        ("ACK\n", True),
        ("Ack. It should always have done this.\n", True),
        ("Ack, thanks.\n", True),
        ("Acknowledged that it breaks x.\n", False),
        ("Acked!\n> patch\n", True),
        ("> Ack.\n\nThanks for the ack.\n", False),  # quoted, not given
        ("Ack for the first two, not this one.\n", False),
        ("Looks good.\n-- \nAck\n", False),  # in the signature
    ],
)
def test_acks(body, says):
    assert acks(body) is says


@pytest.mark.parametrize(
    ("authored", "committed", "reason"),
    [
        (10, 20, ""),
        (0, 30, ""),  # the archive's own first and last days
        (-1, 20, "before the archive's first mail"),  # written before, committed in
        (-5, -2, "before the archive's first mail"),
        (10, 31, "after the archive's last mail"),  # written in, committed after
        (40, 45, "after the archive's last mail"),
        (25, -1, "before the archive's first mail"),  # a committer date behind
    ],
)
def test_outside_reason(authored, committed, reason):
    start = BASE_DATE
    archive = ArchiveWindow(start, start + timedelta(days=30), ("l",))
    row = AuditRow(
        sha="0" * 40, subject="s", author=Address("A", "a@x"), files=(),
        status="no-match", method=None, score=None, patch_id=None,
        author_date=start + timedelta(days=authored),
        commit_date=start + timedelta(days=committed),
    )  # fmt: skip
    found = outside_reason(row, archive)
    assert (reason in found) if reason else found == ""
    assert bool(found) is bool(reason)
    assert outside_reason(row, None) == ""
