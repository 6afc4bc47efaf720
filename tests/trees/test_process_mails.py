"""process_mails (e2g.api.trees) on an archive that holds one form of notice and
not the other: the form it holds is found, for a known stable series and for
none, whatever the patch's title starts with (a character past U+FFFF sorts
above "\uffff" in the store's index)."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2g import config
from e2g.api.basis import open_store
from e2g.api.core import ingest
from e2g.api.process_mails import process_mails
from e2g.mail.backport import NOTICE_STARTS
from e2g.mail.subject import subject_key

TITLES = ("frob: fix the frobber", "\U0001f600 frob: a title past U+FFFF")


def _mail(number: int, subject: str) -> str:
    return (
        f"From greg@example.org Mon Jan  1 00:00:0{number} 2024\n"
        "From: Greg Example <greg@example.org>\n"
        f"Subject: {subject}\n"
        f"Date: Mon, 01 Jan 2024 00:00:0{number} +0000\n"
        f"Message-Id: <notice-{number}@example.org>\n"
        "List-Id: <stable.example.org>\n"
        "MIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=utf-8\n\n"
        "A notice.\n\n"
    )


def _settings(tmp_path: Path, subjects: list[str]) -> config.Settings:
    mbox = tmp_path / "list.mbox"
    mbox.write_text("".join(_mail(n, s) for n, s in enumerate(subjects)))
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    ingest(settings, [str(mbox)], workers=1)
    return settings


@pytest.mark.parametrize("titles", [TITLES, TITLES[1:]])
def test_queued_notices_without_failed_ones(
    tmp_path: Path, titles: tuple[str, ...]
) -> None:
    settings = _settings(
        tmp_path,
        [f'Patch "{title}" has been added to the 6.1-stable tree' for title in titles],
    )
    with open_store(settings) as store:
        assert [store.has_subject_key_starting(s) for s in NOTICE_STARTS] == [
            False,
            True,
        ]
        for version in ("6.1", None):
            found = process_mails(store, list(titles), version=version)
            assert found == {
                subject_key(title): [
                    (f"notice-{n}@example.org", "queued", "queued mail for 6.1")
                ]
                for n, title in enumerate(titles)
            }
        assert process_mails(store, list(titles), version="5.15") == {}


@pytest.mark.parametrize("titles", [TITLES, TITLES[1:]])
def test_failed_notices_without_queued_ones(
    tmp_path: Path, titles: tuple[str, ...]
) -> None:
    settings = _settings(
        tmp_path,
        [
            f'FAILED: patch "[PATCH] {title}" failed to apply to 6.1-stable tree'
            for title in titles
        ],
    )
    with open_store(settings) as store:
        assert [store.has_subject_key_starting(s) for s in NOTICE_STARTS] == [
            True,
            False,
        ]
        for version in ("6.1", None):
            found = process_mails(store, list(titles), version=version)
            assert found == {
                subject_key(title): [
                    (f"notice-{n}@example.org", "failed", "failed mail for 6.1")
                ]
                for n, title in enumerate(titles)
            }
