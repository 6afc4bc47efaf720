"""Maildir and directory readers: order, stable keys, file-sequence checkpoints."""

from __future__ import annotations

import gzip
from pathlib import Path

from e2g.archives.detect import DIRECTORY, MAILDIR, detect_sources, read_source
from e2g.archives.maildir import list_maildir, read_directory, read_maildir
from tests.ingest.test_mbox import FROM_LINE, mboxrd, message


def make_maildir(root: Path) -> Path:
    for part in ("cur", "new", "tmp"):
        (root / part).mkdir(parents=True)
    return root


def maildir_messages(
    root: Path, checkpoint: str | None = None
) -> list[tuple[str, bytes, str]]:
    return [
        (raw.origin.position, raw.data, token)
        for raw, token in read_maildir(root, source="s", checkpoint=checkpoint)
    ]


def test_maildir_order_ignores_tmp_flags_and_folders(tmp_path: Path) -> None:
    root = make_maildir(tmp_path / "Maildir")
    (root / "cur" / "1600000002.M2.host:2,S").write_bytes(message(2))
    (root / "new" / "1600000001.M1.host").write_bytes(message(1))
    (root / "new" / "1600000003.M3.host").write_bytes(FROM_LINE + b"\n" + message(3))
    (root / "tmp" / "1600000000.M0.host").write_bytes(message(0))
    (root / "cur" / ".hidden").write_bytes(message(9))
    found = maildir_messages(root)
    assert [(position, data) for position, data, _ in found] == [
        ("new/1600000001.M1.host", message(1)),
        ("cur/1600000002.M2.host:2,S", message(2)),
        ("new/1600000003.M3.host", message(3)),
    ]
    assert [entry.identity for entry in list_maildir(root)][0] == "1600000001.M1.host"
    (source,) = detect_sources([str(root)])
    assert source.kind == MAILDIR
    raws = [raw for raw, _ in read_source(source, checkpoint=None)]
    assert raws[2].from_line == FROM_LINE


def test_maildir_resume_survives_flag_changes_and_reads_new_mail(
    tmp_path: Path,
) -> None:
    root = make_maildir(tmp_path / "Maildir")
    (root / "new" / "1600000001.M1.host").write_bytes(message(1))
    (root / "new" / "1600000002.M2.host").write_bytes(message(2))
    token = maildir_messages(root)[-1][2]
    # the mail client marks both seen (new/ -> cur/ with flags); then mail arrives
    for name in ("1600000001.M1.host", "1600000002.M2.host"):
        (root / "new" / name).rename(root / "cur" / f"{name}:2,S")
    (root / "new" / "1600000003.M3.host").write_bytes(message(3))
    assert [data for _, data, _ in maildir_messages(root, token)] == [message(3)]


def test_maildir_new_name_sorting_before_the_checkpoint_restarts(
    tmp_path: Path,
) -> None:
    root = make_maildir(tmp_path / "Maildir")
    (root / "new" / "1600000005.M5.host").write_bytes(message(5))
    token = maildir_messages(root)[-1][2]
    (root / "new" / "1500000000.M0.other").write_bytes(message(0))  # a skewed clock
    assert [data for _, data, _ in maildir_messages(root, token)] == [
        message(0),
        message(5),
    ]


def test_directory_recursive_sorted_with_mbox_and_eml(tmp_path: Path) -> None:
    root = tmp_path / "mail"
    (root / "b" / "deep").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "x.eml").write_bytes(message(99))
    (root / "a.eml").write_bytes(message(0))
    (root / "b" / "deep" / "list.mbox.gz").write_bytes(
        gzip.compress(mboxrd([message(2), message(3)]))
    )
    (root / "b" / "c.mbx").write_bytes(mboxrd([message(1)]))
    (root / "b" / "notes.txt").write_bytes(b"just some notes, not mail\n")
    (root / "b" / "image.png").write_bytes(b"\x89PNG")
    (source,) = detect_sources([str(root)])
    assert source.kind == DIRECTORY
    found = list(read_source(source, checkpoint=None))
    assert [(raw.origin.position, raw.data) for raw, _ in found] == [
        ("a.eml", message(0)),
        ("b/c.mbx:0", message(1)),
        ("b/deep/list.mbox.gz:0", message(2)),
        (f"b/deep/list.mbox.gz:{len(mboxrd([message(2)]))}", message(3)),
    ]
    assert [raw.data for raw, _ in read_source(source, checkpoint=found[1][1])] == [
        message(2),
        message(3),
    ]


def test_directory_resume_appended_last_file_and_new_file(tmp_path: Path) -> None:
    root = tmp_path / "mail"
    root.mkdir()
    (root / "1.mbox").write_bytes(mboxrd([message(1)]))
    (root / "2.mbox").write_bytes(mboxrd([message(2)]))
    found = list(read_directory(root, source="s", checkpoint=None))
    token = found[-1][1]
    with (root / "2.mbox").open("ab") as file:
        file.write(mboxrd([message(3)]))
    (root / "3.eml").write_bytes(message(4))
    rest = list(read_directory(root, source="s", checkpoint=token))
    assert [raw.data for raw, _ in rest] == [message(3), message(4)]
    assert list(read_directory(root, source="s", checkpoint=rest[-1][1])) == []


def test_directory_earlier_file_changed_restarts(tmp_path: Path) -> None:
    root = tmp_path / "mail"
    root.mkdir()
    (root / "1.mbox").write_bytes(mboxrd([message(1)]))
    (root / "2.mbox").write_bytes(mboxrd([message(2)]))
    token = list(read_directory(root, source="s", checkpoint=None))[-1][1]
    with (root / "1.mbox").open("ab") as file:
        file.write(mboxrd([message(5)]))
    rest = list(read_directory(root, source="s", checkpoint=token))
    assert [raw.data for raw, _ in rest] == [message(1), message(5), message(2)]
