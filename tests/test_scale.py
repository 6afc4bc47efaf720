"""benchmarks/scale.py and gen_history.py at a small size (CI runs only this size)."""

from __future__ import annotations

import io
import json
import mailbox
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import sample_repo

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import gen_history  # noqa: E402
import scale  # noqa: E402


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_repo(tmp_path_factory.mktemp("scale") / "repo")


def _write(repo: Path, count: int, seed: int) -> tuple[bytes, list[dict[str, object]]]:
    out, truth = io.BytesIO(), io.BytesIO()
    gen_history.write(out, truth, repo, [], count, seed)  # type: ignore[arg-type]
    facts = [json.loads(line) for line in truth.getvalue().splitlines()]
    return out.getvalue(), facts


def test_the_archive_posts_every_commit_with_its_real_diff(history: Path) -> None:
    data, truth = _write(history, 0, 1)
    assert data == _write(history, 0, 1)[0]  # same seed, same bytes
    assert data != _write(history, 0, 2)[0]
    commits = subprocess.run(
        ["git", "-C", str(history), "rev-list", "--no-merges", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert {fact["commit"] for fact in truth} == set(commits)
    path = history.parent / "a.mbox"
    path.write_bytes(data)
    messages = {m["Message-ID"].strip("<>"): m for m in mailbox.mbox(str(path))}
    for fact in truth:
        shown = subprocess.run(
            ["git", "-C", str(history), "show", "--format=%s", str(fact["commit"])],
            capture_output=True,
            check=True,
        ).stdout
        subject, _, diff = shown.partition(b"\n")
        for message_id in fact["final"]:  # type: ignore[attr-defined]
            posted = messages[message_id]
            payload = posted.get_payload(decode=True)
            assert subject.decode() in str(posted["Subject"])
            # the applied version carries the commit's diff unchanged
            assert diff.strip(b"\n").split(b"\n")[-1] in payload
        for message_id in fact["earlier"]:  # type: ignore[attr-defined]
            text = messages[message_id].get_payload()
            added = [
                line
                for line in text.splitlines()
                if line.startswith("+") and not line.startswith("+++")
            ]
            # an earlier version differs in its first added line (if it has one)
            assert ("earlier version" in text) == bool(added)


def test_count_adds_chatter_until_it_is_reached(history: Path) -> None:
    data, truth = _write(history, 400, 1)
    count = data.count(b"\nFrom ") + data.startswith(b"From ")
    assert count >= 400
    assert len(truth) == len(_write(history, 0, 1)[1])


def test_tenths_interpolate_between_samples() -> None:
    progress = scale.Progress([(1.0, 0, 0), (2.0, 50, 10), (3.0, 100, 20)])
    assert [round(r) for r in progress.tenths(100, 1)] == [
        8,
        50,
        50,
        50,
        50,
        50,
        50,
        50,
        50,
        50,
    ]
    assert len(progress.tenths(100, 2)) == 2  # the index got to a fifth only
    assert round(progress.rate(100, 1)) == 33  # 100 messages in 3 s


def test_a_small_run_measures_everything_and_finds_the_truth(
    history: Path, tmp_path: Path
) -> None:
    notmuch = shutil.which("notmuch") is not None
    result = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "scale.py"),
            "--repo",
            str(history),
            "--count",
            "300",
            "--rounds",
            "1",
            "--workdir",
            str(tmp_path),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(result.stdout)
    assert figures["store_messages"] == figures["messages"] >= 300
    assert figures["index_documents"] == figures["store_messages"]
    assert figures["ingested_first"] < figures["messages"]
    assert len(figures["store_msgs_per_s_by_tenth"]) == 10
    assert len(figures["store_mb_per_s_by_tenth"]) == 10
    assert figures["last_tenth_fresh_store_msgs_per_s"] > 0
    assert (
        figures["last_tenth_vs_fresh_store"] is None
        or figures["last_tenth_vs_fresh_store"] > 0
    )
    assert figures["last_tenth_fresh_index_msgs_per_s"] > 0
    assert figures["index_lag"] == 0 and figures["warnings"] == []
    assert 0 < figures["data_dir_share"] < 5
    assert figures["recall"] >= 0.9 and figures["wrong_links"] == 0
    assert figures["wrong_links_same_patch"] == 0
    assert figures["match_vs_floor"] > 0
    assert figures["open_date_p50_ms"] > 0 and figures["end_to_end_median_s"] > 0
    assert ("e2g_vs_notmuch" in figures) == notmuch
    assert figures["projection_10M"]["data_dir_gb"] > 0


def test_recall_tells_the_same_patch_applied_twice_from_a_wrong_link() -> None:
    """A posting linked to a commit the truth gives it to another: when both commits
    carry the same patch (git's patch-id), the link is right; otherwise wrong."""
    truth = [
        {"commit": "a", "final": ["a1"], "earlier": ["a0"]},
        {"commit": "b", "final": ["b1"], "earlier": []},
        {"commit": "c", "final": ["c1"], "earlier": []},
        {"commit": "d", "final": ["d1"], "earlier": []},
    ]
    results = [
        {"commit": "a", "postings": [{"message_id": "a1"}, {"message_id": "a0"}]},
        {"commit": "b", "postings": [{"message_id": "b1"}, {"message_id": "c1"}]},
        {"commit": "c", "postings": [{"message_id": "a1"}]},
    ]
    ids = {"a": "p1", "b": "p2", "c": "p2"}
    rate, wrong, same_patch, found, outside = scale.recall(truth, results, ids)
    assert (wrong, same_patch) == (2, 1)  # b->c1 is c's patch again; c->a1 is not
    assert (found, outside) == (2, 1) and rate == 2 / 3
