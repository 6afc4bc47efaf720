"""Mailman pipermail period files: names, date order, gzip or not, list hints."""

from __future__ import annotations

import gzip
from pathlib import Path

from e2g.archives.detect import PIPERMAIL, detect_sources, read_source
from e2g.archives.pipermail import period_key

SEPARATOR = b"From jdoe at example.org  Tue Mar  1 10:00:00 2005\n"


def pipermail_message(number: int, body: bytes = b"Hi.\n") -> bytes:
    return (
        b"From: jdoe at example.org (John Doe)\n"
        b"Date: Tue, 1 Mar 2005 10:00:00 +0000\n"
        b"Subject: [frob] topic %d\n"
        b"Message-ID: <p%d@example.org>\n\n" % (number, number)
    ) + body


def period(numbers: range, body: bytes = b"Hi.\n") -> bytes:
    return b"".join(SEPARATOR + pipermail_message(n, body) + b"\n" for n in numbers)


def test_period_keys() -> None:
    assert period_key("2005-March.txt.gz") == (2005, 3, 0)
    assert period_key("2005-march.txt") == (2005, 3, 0)
    assert period_key("2005q2.txt") == (2005, 4, 0)
    assert period_key("2005.txt.gz") == (2005, 0, 0)
    assert period_key("Week-of-Mon-20050307.txt") == (2005, 3, 7)
    assert period_key("20050307.txt.gz") == (2005, 3, 7)
    assert period_key("2005-Smarch.txt") is None
    assert period_key("2005-March.html") is None


def test_directory_reads_months_in_date_order(tmp_path: Path) -> None:
    folder = tmp_path / "frob-devel"
    folder.mkdir()
    (folder / "2005-April.txt.gz").write_bytes(gzip.compress(period(range(3, 5))))
    (folder / "2005-March.txt.gz").write_bytes(gzip.compress(period(range(0, 3))))
    (folder / "2005-May.txt").write_bytes(period(range(5, 6)))
    (folder / "2005-March").mkdir()  # pipermail's HTML pages for the month
    (folder / "index.html").write_text("<html></html>")
    (source,) = detect_sources([str(folder)])
    assert (source.kind, source.list_hint) == (PIPERMAIL, "frob-devel")
    found = list(read_source(source, checkpoint=None))
    assert [raw.data for raw, _ in found] == [pipermail_message(n) for n in range(6)]
    assert found[0][0].from_line == SEPARATOR.rstrip(b"\n")
    assert found[3][0].origin.position == "2005-April.txt.gz:0"
    assert all(raw.origin.list_hint == "frob-devel" for raw, _ in found)
    # the current month grows; resuming reads only what was appended
    with (folder / "2005-May.txt").open("ab") as file:
        file.write(period(range(6, 8)))
    rest = list(read_source(source, checkpoint=found[-1][1]))
    assert [raw.data for raw, _ in rest] == [pipermail_message(6), pipermail_message(7)]


def test_a_folder_of_list_folders_names_each_list_by_its_folder(
    tmp_path: Path,
) -> None:
    """`e2g ingest archives/pipermail` with one folder per list below it: each
    month's messages belong to their folder's list, not to `pipermail`."""
    root = tmp_path / "pipermail"
    for name, numbers in (("frob-users", range(0, 2)), ("frob-announce", range(2, 3))):
        (root / name).mkdir(parents=True)
        (root / name / "2007-March.txt.gz").write_bytes(gzip.compress(period(numbers)))
    (root / "notes.mbox").write_bytes(period(range(3, 4)))  # not a month file
    (source,) = detect_sources([str(root)])
    found = {
        raw.data: raw.origin.list_hint
        for raw, _ in read_source(source, checkpoint=None)
    }
    assert found == {
        pipermail_message(0): "frob-users",
        pipermail_message(1): "frob-users",
        pipermail_message(2): "frob-announce",
        pipermail_message(3): None,  # named by the pipeline's own fallback
    }


def test_body_from_lines_are_unescaped(tmp_path: Path) -> None:
    folder = tmp_path / "frob"
    folder.mkdir()
    body = b"Quote:\n\n>From jdoe at example.org  Mon\nSubject: x\n"
    path = folder / "2005-March.txt.gz"
    path.write_bytes(gzip.compress(period(range(1), body) + period(range(1, 2))))
    (source,) = detect_sources([str(path)])
    assert (source.kind, source.list_hint) == (PIPERMAIL, "frob")
    found = [raw.data for raw, _ in read_source(source, checkpoint=None)]
    assert found == [
        pipermail_message(0, body.replace(b">From", b"From")),
        pipermail_message(1),
    ]


def test_txt_gz_that_a_web_server_decompressed_is_read_as_text(tmp_path: Path) -> None:
    folder = tmp_path / "frob"
    folder.mkdir()
    path = folder / "2005-March.txt.gz"
    path.write_bytes(period(range(2)))
    (source,) = detect_sources([str(path)])
    assert [raw.data for raw, _ in read_source(source, checkpoint=None)] == [
        pipermail_message(0),
        pipermail_message(1),
    ]
