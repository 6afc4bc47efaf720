"""Series grouping against patchwork's own series expectations (EXPECTATIONS.tsv rows).

Each patchwork series mbox is ingested into a fresh store; the counts of covers,
patches and comments, the patches per series and the covers per series must equal
what patchwork's test_series.py asserts. Where e2g decides differently on purpose, the
case says so and why.
"""

from __future__ import annotations

import ast
import csv
import re
from pathlib import Path
from typing import Any

import pytest

from e2g import config
from e2g.api.core import ingest
from e2g.index.store import Store
from tests.conftest import CORPUS, store_sql

EXPECTATIONS = CORPUS / "patchwork" / "EXPECTATIONS.tsv"

# Rows whose expectation is about something e2g does not model.
NOT_APPLICABLE = {
    # Patchwork parses the same mbox into two projects; e2g has one store per data dir
    # and a message is one row with sightings, so "two series" is a per-list view.
    "test_duplicated",
}


def _rows() -> list[tuple[str, str, str]]:
    if not EXPECTATIONS.exists():
        return []
    with EXPECTATIONS.open(newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        next(reader)
        return [
            (row[0], row[1].split(".")[-1], row[3])
            for row in reader
            if row[0].startswith("series/") and row[2] == "series"
        ]


def _expected(text: str) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    counts = re.search(r"\[covers,patches,comments\]=(\[[^\]]*\])", text)
    if counts:
        found["counts"] = ast.literal_eval(counts.group(1))
    for key in ("patches per series", "covers per series"):
        match = re.search(re.escape(key) + r" (\[[^\]]*\])", text)
        if match:
            found[key] = ast.literal_eval(match.group(1))
    return found


def _observed(store: Store) -> dict[str, list[int]]:
    def run(query: str) -> list[Any]:
        return store_sql(store.path, query)

    kinds = dict(run("SELECT kind, COUNT(*) FROM messages GROUP BY kind"))
    patches = [
        int(n)
        for (n,) in run(
            "SELECT COUNT(m.seq) FROM series s LEFT JOIN messages m ON m.series_id = s.id AND m.kind = 'patch' "
            "GROUP BY s.id ORDER BY MIN(COALESCE(m.date, s.first_date)), s.id"
        )
    ]
    covers = [
        int(n)
        for (n,) in run(
            "SELECT s.cover_seq IS NOT NULL FROM series s LEFT JOIN messages m ON m.series_id = s.id "
            "GROUP BY s.id ORDER BY MIN(COALESCE(m.date, s.first_date)), s.id"
        )
    ]
    comments = int(kinds.get("reply", 0)) + int(kinds.get("other", 0))
    return {
        "counts": [int(kinds.get("cover", 0)), int(kinds.get("patch", 0)), comments],
        "patches per series": patches,
        "covers per series": covers,
    }


@pytest.mark.parametrize(
    ("name", "test", "expectation"), _rows(), ids=lambda value: str(value)[:40]
)
def test_series_grouping_matches_patchwork(
    tmp_path: Path, name: str, test: str, expectation: str
) -> None:
    if test in NOT_APPLICABLE:
        pytest.skip(f"{test}: not modelled by e2g")
    path = CORPUS / "patchwork" / name
    if not path.exists():
        pytest.skip(f"shared corpus not available: {path}")
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    ingest(settings, [str(path)], workers=1)
    expected = _expected(expectation)
    with Store(settings.store_path) as store:
        observed = _observed(store)
    for key, value in expected.items():
        if key == "patches per series":
            # Patchwork lists series in creation order; compare as multisets.
            assert sorted(observed[key]) == sorted(value), (key, observed)
        elif key == "covers per series":
            assert sorted(observed[key]) == sorted(value), (key, observed)
        else:
            assert observed[key] == value, (key, observed)


def test_rows_were_found() -> None:
    if not EXPECTATIONS.exists():
        pytest.skip("shared corpus not available")
    assert len(_rows()) >= 25
