"""The matcher's lookups (per-file windows, cached messages) against plain SQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from e2g import config
from e2g.api.basis import open_store
from e2g.api.core import ingest
from e2g.index.store import Store
from e2g.matcher.candidates import FileMap, MessageCache, TouchingPatch
from tests.conftest import SAMPLE, store_sql, stored_where


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    root = tmp_path_factory.mktemp("filemap")
    sample = config.resolve(data_dir=root / "data", env={}, home=root)
    ingest(
        sample,
        [str(SAMPLE / "frob-devel.mbox"), str(SAMPLE / "frob-net.mbox.gz")],
        workers=1,
    )
    with open_store(sample) as opened:
        yield opened


def reference(
    store: Store, paths: list[str], low: int, high: int
) -> list[TouchingPatch]:
    """What the file map must answer, asked of SQLite directly."""
    unique = list(dict.fromkeys(paths))
    if not unique:
        return []
    marks = ",".join("?" * len(unique))
    rows = store_sql(
        store.path,
        "SELECT f.seq, COUNT(*), m.date, m.author_email, m.patch_author_email "
        f"FROM files f JOIN messages m ON m.seq = f.seq WHERE f.path IN ({marks}) "
        "AND m.kind = 'patch' AND m.date BETWEEN ? AND ? GROUP BY f.seq ORDER BY f.seq",
        (*unique, low, high),
    )
    return [TouchingPatch(*row) for row in rows]


def dates(store: Store) -> list[int]:
    """Patch dates and their neighbours: a window's edges matter most there."""
    found = [int(row[0]) for row in store_sql(store.path, "SELECT date FROM messages")]
    return sorted({date + step for date in found for step in (-1, 0, 1)})


def facts(store: Store) -> tuple[list[str], int, int]:
    paths = [
        str(row[0]) for row in store_sql(store.path, "SELECT DISTINCT path FROM files")
    ]
    ((low, high),) = store_sql(store.path, "SELECT MIN(date), MAX(date) FROM messages")
    return [*paths, "no/such/file.c"], int(low), int(high)


def test_the_sample_has_files_in_several_patches(store: Store) -> None:
    paths, low, high = facts(store)
    everything = reference(store, paths, low, high)
    assert len(everything) > 10
    assert any(row.shared > 1 for row in everything)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data(), limit=st.sampled_from([1, 5, 2_000_000]))
def test_windows_equal_the_sql_answer(
    store: Store, data: st.DataObject, limit: int
) -> None:
    paths, low, high = facts(store)
    files = FileMap(store, limit=limit)  # a tiny limit clears between files
    for _ in range(3):  # one map answers several commits, as in a match run
        asked = data.draw(st.lists(st.sampled_from(paths), max_size=8))
        edges = st.sampled_from(dates(store)) | st.integers(low - 86_400, high + 86_400)
        start, stop = sorted((data.draw(edges), data.draw(edges)))
        assert files.touching(asked, low=start, high=stop) == reference(
            store, asked, start, stop
        )


PARTS = [
    ("kind = 'patch'", (), "ORDER BY date DESC LIMIT 7"),
    ("subject_key = ?", ("no such subject",), ""),
    ("kind != 'patch'", (), "ORDER BY seq"),
    ("kind = 'patch'", (), "ORDER BY seq LIMIT 5"),
]


@pytest.mark.parametrize("limit", [1, 3, 20_000])
def test_message_cache_resolves_seq_lists_in_their_order(
    store: Store, limit: int
) -> None:
    messages = MessageCache(store, limit=limit)  # a tiny limit clears mid-answer
    for _ in range(2):  # the second time from the cache
        wanted = [stored_where(store, *part) for part in PARTS]
        found = messages.resolve(*[[m.seq for m in part] for part in wanted])
        assert found == wanted
    assert len(found[0]) == 7 and found[1] == [] and found[2]


def test_message_cache_by_seqs_is_complete_when_it_clears(store: Store) -> None:
    seqs = [int(row[0]) for row in store_sql(store.path, "SELECT seq FROM messages")]
    messages = MessageCache(store, limit=len(seqs) - 1)
    assert set(messages.by_seqs(seqs[:-1])) == set(seqs[:-1])
    assert set(messages.by_seqs(seqs)) == set(seqs)  # full: cleared, all read again
