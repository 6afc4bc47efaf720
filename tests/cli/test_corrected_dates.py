"""A sanitised date is marked in human output (`2021-03-03*`) with a footnote saying
what the Date: header said, as the web page does."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from e2g.cli.link import _posting_lines
from e2g.model import Address, DateSource
from e2g.model.links import Posting
from tests.cli.test_cli import e2g
from tests.web.conftest import build


def test_link_thread_marks_the_corrected_date_with_its_footnote(tmp_path: Path):
    data = build(tmp_path)  # late-1 says it was sent in 1970; its From line says 2021
    result = e2g(
        data.settings.data_dir, "link", "--thread", "-C", str(data.repo), data.sha
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    [marked] = [line for line in lines if "Carol Maintainer" in line]
    assert marked.strip().startswith("2021-03-03 08:00* Carol Maintainer")
    note = lines[lines.index(marked) + 1].strip()
    assert note == (
        "* date taken from the mbox From line: the Date: header said "
        '"Thu, 01 Jan 1970 00:00:00 +0000"'
    )
    # dates taken from the header are not marked
    assert not any("* Bob Reviewer" in line for line in lines)
    assert "2021-03-02 09:00  Bob Reviewer" in result.stdout


def _posting(source: DateSource, raw: str) -> Posting:
    return Posting(
        message_id="p@example.org",
        subject="[PATCH] x",
        date=datetime(2024, 1, 1, tzinfo=UTC),
        author=Address("A", "a@example.org"),
        lists=("l.example.org",),
        version=1,
        kind="patch",
        applied=False,
        method="patch-id",
        score=1.0,
        url=None,
        thread_root="p@example.org",
        date_source=source,
        date_raw=raw,
    )


def test_a_posting_with_a_corrected_date_is_marked():
    lines = _posting_lines(_posting(DateSource.RECEIVED, "1 Jan 1970\x1b[31m"))
    assert lines[0].startswith("  2024-01-01* v1")
    assert lines[1] == (
        '    * date taken from the Received: headers: the Date: header said "1 Jan 1970?[31m"'
    )
    plain = _posting_lines(_posting(DateSource.HEADER, ""))
    assert plain[0].startswith("  2024-01-01  v1")
    assert "date taken" not in "\n".join(plain)


def test_search_marks_corrected_dates_with_footnotes(tmp_path: Path):
    data = build(tmp_path)
    result = e2g(data.settings.data_dir, "search", "s:frob", "f:carol")
    assert result.returncode == 0, result.stderr
    row, note = result.stdout.splitlines()
    assert row.startswith("2021-03-03*  frob-devel")
    assert note == (
        "* date taken from the mbox From line: the Date: header said "
        '"Thu, 01 Jan 1970 00:00:00 +0000" <late-1@example.org>'
    )
    plain = e2g(data.settings.data_dir, "search", "f:bob", "s:frob")
    assert plain.stdout.startswith("2021-03-02   frob-devel")
    assert "date taken" not in plain.stdout
