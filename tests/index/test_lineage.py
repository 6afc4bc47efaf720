"""A series' versions form one lineage whatever order their mail is read in.

The sample's frob-devel.mbox carries Keiko's v2 series and frob-net.mbox.gz her v1:
read in that order, v2 used to start a lineage of its own and `e2g series` showed
one version. Migration 21 repairs a store written so."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from e2g import config
from e2g.api.core import ingest
from e2g.api.queue.refresh import refresh
from e2g.api.queue.versions import series_history
from e2g.index.schema import QUEUE_SEQ_KEY
from e2g.index.store import Store
from tests.conftest import SAMPLE_ARCHIVES, store_sql

V1 = "20220905234500.1201-2-keiko@example.com"
V2 = "20220912120000.2302-3-keiko@example.com"


def _settings(root: Path) -> config.Settings:
    return config.resolve(data_dir=root, env={}, home=root)


def _versions(settings: config.Settings, message_id: str) -> list[int]:
    return [
        version.version for version in series_history(settings, message_id).versions
    ]


def _lineages(settings: config.Settings) -> set[frozenset[int]]:
    """The series ids grouped by lineage (whichever id is the root)."""
    groups: dict[int, set[int]] = {}
    for series, root in store_sql(
        settings.store_path, "SELECT id, COALESCE(lineage, id) FROM series"
    ):
        groups.setdefault(root, set()).add(series)
    return {frozenset(group) for group in groups.values()}


@pytest.mark.parametrize("order", [1, -1], ids=["devel-first", "net-first"])
def test_every_version_joins_one_lineage_in_any_order(
    tmp_path: Path, order: int
) -> None:
    settings = _settings(tmp_path / "data")
    for archive in [str(path) for path in SAMPLE_ARCHIVES[:2]][::order]:
        ingest(settings, [archive], workers=1)
    assert _versions(settings, V1) == _versions(settings, V2) == [1, 2]
    (change,) = series_history(settings, V2).changes
    assert (change.before, change.after) == (1, 2)
    assert [part.part for part in change.parts] == ["1/2", "2/2"]


def test_migration_21_joins_a_lineage_split_by_reading_order(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "data")
    ingest(settings, [str(path) for path in SAMPLE_ARCHIVES], workers=1)
    refresh(settings)
    old = _settings(tmp_path / "old")
    shutil.copytree(settings.data_dir, old.data_dir)
    # What the rule before gave: each version a lineage of its own, schema 20.
    connection = sqlite3.connect(old.store_path)
    with connection:
        connection.execute("UPDATE series SET lineage = NULL")
        connection.execute("PRAGMA user_version = 20")
    connection.close()
    with Store(old.store_path) as store:  # migrates
        assert store.queue_seq() is None  # the queue is derived afresh
    assert _versions(old, V2) == [1, 2]
    assert _lineages(old) == _lineages(settings)
    assert (
        store_sql(old.store_path, "SELECT 1 FROM meta WHERE key = ?", (QUEUE_SEQ_KEY,))
        == []
    )
