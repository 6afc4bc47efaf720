"""The ingest progress line: what a user sees while a large archive is read."""

from __future__ import annotations

import gzip
from pathlib import Path

from e2g.cli.ingest import _plain_size
from e2g.cli.reports import _progress_text
from e2g.ingest.pipeline import Progress


def test_the_size_is_known_only_for_plain_files(tmp_path: Path) -> None:
    plain, other = tmp_path / "a.mbox", tmp_path / "b.mbox"
    plain.write_bytes(b"x" * 1000)
    other.write_bytes(b"y" * 500)
    packed = tmp_path / "c.mbox.gz"
    packed.write_bytes(gzip.compress(b"z" * 100))
    assert _plain_size([str(plain), str(other)]) == 1500
    assert _plain_size([str(plain), str(packed)]) is None
    assert _plain_size([str(plain), "-"]) is None
    assert _plain_size([str(tmp_path)]) is None


def test_a_known_size_gives_the_share_done_and_the_time_left() -> None:
    halfway = Progress("a.mbox", messages=5000, bytes=50_000_000, elapsed=10.0)
    assert _progress_text(halfway, 100_000_000) == (
        "5,000 msgs  50.0 MB of 100.0 MB (50%)  500 msg/s  ETA 0:00:10"
    )
    assert _progress_text(halfway, None) == "5,000 msgs  50.0 MB  500 msg/s"
    slow = Progress("a.mbox", messages=10, bytes=1_000_000, elapsed=100.0)
    assert _progress_text(slow, 4_000_000_000).endswith("ETA 111:05:00")
    done = Progress("a.mbox", messages=10, bytes=2_000, elapsed=1.0)
    assert "ETA" not in _progress_text(done, 1_000) and "(100%)" in (
        _progress_text(done, 1_000)
    )
