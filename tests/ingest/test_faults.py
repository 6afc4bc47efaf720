"""Fault injection on real `e2g ingest` subprocesses over a generated 23,000-message archive.

Every test runs the command users run, with default options (parse workers and the
index process), and checks the end state against an uninterrupted run: the same
message, patch and thread counts, an intact SQLite file, and a full-text index that
holds exactly the store's messages. Faults come from SIGKILL, SIGINT, a full disk, and
tests/fault_hook.py (delays and crashes at named points of the real code).
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from e2g import config
from e2g.api import core as api_core
from e2g.index.fulltext import Fulltext
from tests import fault_hook
from tests.conftest import store_rows

REPO = Path(__file__).resolve().parents[2]
MESSAGES = 20_000  # the generated list
CROSS_POSTED = 3_000  # of them posted again to a second list: journal entries
RUN_TIMEOUT = 600  # no run may take longer: a hang fails the test, it never blocks it


def _generator():
    spec = importlib.util.spec_from_file_location(
        "gen_archive", REPO / "benchmarks" / "gen_archive.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Archives:
    main: Path
    cross: Path

    def args(self) -> list[str]:
        # The cross-posted part is read with --list, in a second command: see _ingest.
        return [str(self.main)]


@pytest.fixture(scope="module")
def archives(tmp_path_factory: pytest.TempPathFactory) -> Archives:
    folder = tmp_path_factory.mktemp("archives")
    main = folder / "lkml.mbox"
    _generator().generate(main, MESSAGES, seed=7)
    data = main.read_bytes()
    cut = _offset_of_message(data, CROSS_POSTED)
    cross = folder / "netdev.mbox"
    cross.write_bytes(data[:cut])
    return Archives(main, cross)


def _offset_of_message(data: bytes, number: int) -> int:
    """Where message `number` (0-based) of an mbox starts."""
    position = 0
    for _ in range(number):
        position = data.index(b"\nFrom ", position + 1)
    return position + 1


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPO), env.get("PYTHONPATH")])
    )
    env.pop("E2G_TEST_FAULTS", None)
    env.update(extra)
    return env


def _command(data: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "e2g", "--data-dir", str(data), *args]


def _ingest_commands(data: Path, archives: Archives) -> list[list[str]]:
    return [
        _command(data, "ingest", "--json", str(archives.main)),
        _command(data, "ingest", "--json", "--list", "netdev", str(archives.cross)),
    ]


def _run(
    command: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env or _env(),
        cwd=REPO,
        timeout=RUN_TIMEOUT,
        check=False,
    )


def _complete(data: Path, archives: Archives) -> list[dict[str, object]]:
    """Both ingests to the end, without faults; their --json summaries."""
    summaries = []
    for command in _ingest_commands(data, archives):
        done = _run(command)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        summaries.append(json.loads(done.stdout))
    return summaries


@dataclass(frozen=True)
class State:
    counts: tuple[int, ...]
    store_ids: frozenset[str]
    index_ids: frozenset[str]
    lists: dict[str, int]


def _state(data: Path) -> State:
    connection = sqlite3.connect(data / "store.sqlite3")
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        one = connection.execute
        counts = tuple(
            int(one(query).fetchone()[0])
            for query in (
                "SELECT COUNT(*) FROM messages",
                "SELECT COUNT(*) FROM messages WHERE kind = 'patch'",
                "SELECT COUNT(DISTINCT thread_root) FROM messages",
                "SELECT COUNT(*) FROM sightings",
                "SELECT COUNT(*) FROM files",
                "SELECT COUNT(*) FROM series",
            )
        )
        by_seq = dict(one("SELECT seq, message_id FROM messages").fetchall())
        store_ids = frozenset(by_seq.values())
        lists = dict(
            one("SELECT list, COUNT(*) FROM sightings GROUP BY list").fetchall()
        )
    finally:
        connection.close()
    index_dir = config.resolve(data_dir=data, env={}, home=data).index_dir
    with Fulltext.open(index_dir, create=False) as fulltext:
        seqs = fulltext.seqs()
    assert len(seqs) == len(set(seqs)), "a message indexed twice"
    # a seq the store no longer holds shows as itself, and differs from every id
    index_ids = frozenset(by_seq.get(seq, f"#{seq}") for seq in seqs)
    return State(counts, store_ids, index_ids, lists)


@pytest.fixture(scope="module")
def reference_dir(archives: Archives, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir both ingests completed without faults (copy it before writing)."""
    data = tmp_path_factory.mktemp("reference")
    summaries = _complete(data, archives)
    assert [s["index_lag"] for s in summaries] == [0, 0]
    return data


@pytest.fixture(scope="module")
def reference(reference_dir: Path) -> State:
    state = _state(reference_dir)
    assert state.counts[0] == MESSAGES
    assert state.index_ids == state.store_ids
    return state


def _search_total(data: Path, query: str) -> tuple[int, str]:
    done = _run(_command(data, "search", "--json", "--limit", "10000", query))
    assert done.returncode == 0, done.stderr
    return len(done.stdout.splitlines()), done.stderr


def _rows(data: Path) -> int:
    return store_rows(data / "store.sqlite3")


def _start(
    command: list[str], env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or _env(),
        cwd=REPO,
        start_new_session=True,  # its own process group: a group kill takes the child too
    )


def _wait_for_rows(data: Path, process: subprocess.Popen[str], rows: int) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None and _rows(data) < rows:
        time.sleep(0.05)


def _sightings(data: Path) -> int:
    """How far the two ingests have come: one row per message per list, so the second
    (cross-posted) archive moves it too, though it adds no message."""
    return store_rows(data / "store.sqlite3", "sightings")


def _wait_for_sightings(
    data: Path, process: subprocess.Popen[str], sightings: int
) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT
    while (
        time.monotonic() < deadline
        and process.poll() is None
        and _sightings(data) < sightings
    ):
        time.sleep(0.02)


@pytest.mark.slow
def test_sigkill_at_ten_random_points_then_a_rerun_equals_an_uninterrupted_run(
    archives, reference, tmp_path
):
    """Kill the ingest, or its whole process group, or the index child in the middle
    of its commit, at 12 random points; the next run must end as if none happened.

    Kill points are drawn as store progress, not as wall time, so a fast machine
    cannot finish a run before its kill (the CI box once did)."""
    data = tmp_path / "killed"
    rng = random.Random(20261203)
    commands = _ingest_commands(data, archives)
    total = MESSAGES + CROSS_POSTED
    kills, points = 0, []
    for round_ in range(12):
        mode = ("parent", "group", "during-index-commit")[round_ % 3]
        command = commands[0] if _rows(data) < MESSAGES else commands[1]
        env = _env()
        if mode == "during-index-commit":
            env.update(fault_hook.environment("killpg-soon@index.commit:0.5"))
        process = _start(command, env)
        # 12 steps of at most 1,500 stay well inside the 23,000 sightings.
        _wait_for_sightings(data, process, _sightings(data) + rng.randint(0, 1500))
        if process.poll() is None:
            # "during-index-commit": the parent dies first; its orphaned index child
            # commits what it holds, and the hook kills it somewhere inside that commit.
            target = process.pid
            if mode == "group":
                os.killpg(target, signal.SIGKILL)
            else:
                os.kill(target, signal.SIGKILL)
        process.communicate(timeout=RUN_TIMEOUT)
        kills += process.returncode == -signal.SIGKILL
        _wait_for_group_end(process.pid)
        points.append(_sightings(data))
    assert points[-1] < total, points
    assert kills >= 10, points
    assert len(set(points)) >= 6, f"too few distinct kill points: {points}"

    summaries = _complete(data, archives)
    assert [s["index_lag"] for s in summaries] == [0, 0]
    state = _state(data)
    assert state == reference
    assert state.index_ids == state.store_ids


def _wait_for_group_end(group: int) -> None:
    """An orphaned index child may still be committing; the test waits for it (a user
    need not: the next run's child waits for the index's lock)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise AssertionError("an orphaned index process did not end within 120 s")


@pytest.mark.slow
def test_a_killed_index_child_is_started_again_and_catches_up(archives, tmp_path):
    data = tmp_path / "healed"
    env = _env(
        **fault_hook.environment(f"kill-once@index.add:{tmp_path / 'killed-once'}")
    )
    done = _run(_command(data, "ingest", "--json", str(archives.cross)), env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "killed-once").exists(), "the fault never fired"
    summary = json.loads(done.stdout)
    assert summary["index_restarts"] == 1
    assert summary["index_lag"] == 0
    assert any("starting it again" in line for line in summary["warnings"])
    state = _state(data)
    assert state.counts[0] == CROSS_POSTED
    assert state.index_ids == state.store_ids


@pytest.mark.slow
def test_an_index_child_that_keeps_dying_ends_the_run_with_code_3_and_one_line(
    archives, tmp_path
):
    data = tmp_path / "behind"
    env = _env(**fault_hook.environment("kill@index.add"))
    done = _run(_command(data, "-q", "ingest", str(archives.cross)), env)
    assert done.returncode == 3, done.stderr
    # Even with -q, one line: what is behind, why, and what to run.
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("e2g: error: ")
    assert "e2g reindex" in lines[0] and "SIGKILL" in lines[0]
    assert _state(data).counts[0] == CROSS_POSTED  # the store is complete
    # The next run (nothing new to read) brings the index level, and search agrees.
    again = _run(_command(data, "-q", "ingest", str(archives.cross)))
    assert (again.returncode, again.stderr) == (0, "")
    total, warning = _search_total(data, "has:diff")
    assert warning == ""
    assert total == _state(data).counts[1]


@pytest.mark.slow
def test_a_slow_index_and_long_gaps_between_batches_never_hang(archives, tmp_path):
    """Gaps longer than any poll interval the old child used, and an index slower
    than the store: the run still ends by itself with a complete index."""
    data = tmp_path / "slow"
    env = _env(
        **fault_hook.environment("sleep@ingest.batch:1.2", "sleep@index.wait:0.3")
    )
    started = time.monotonic()
    done = _run(_command(data, "ingest", "--json", str(archives.cross)), env)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < RUN_TIMEOUT
    summary = json.loads(done.stdout)
    assert (summary["new"], summary["index_lag"]) == (CROSS_POSTED, 0)
    state = _state(data)
    assert state.index_ids == state.store_ids


@pytest.mark.slow
def test_searches_during_an_ingest_then_ctrl_c_then_search_finds_everything_kept(
    archives, tmp_path
):
    data = tmp_path / "interrupted"
    settings = config.resolve(data_dir=data, env={}, home=tmp_path)
    process = _start(_command(data, "ingest", str(archives.main)))
    _wait_for_rows(data, process, 1)
    # Readers beside the ingest: never an error, and never a torn answer (the
    # index only grows, and what it says it lacks is said).
    totals = []
    while _rows(data) < 4000 and process.poll() is None:
        result = api_core.search(data_settings := settings, "has:diff", limit=1)
        assert result.index_lag == 0 or "ingest is running" in (result.note or "")
        totals.append(result.total)
        time.sleep(0.1)
    assert totals == sorted(totals) and len(totals) >= 3, totals
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted" in stderr.splitlines()[-1]
    kept = _rows(data)
    assert 0 < kept < MESSAGES
    # The search brings the index level first (a small gap), and says nothing.
    total, warning = _search_total(data, "has:diff")
    assert warning == ""
    state = _state(data)
    assert total == state.counts[1] == api_core.search(data_settings, "has:diff").total
    assert state.index_ids == state.store_ids


def _mount_tmpfs(path: Path, megabytes: int) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None or os.geteuid() != 0:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@pytest.mark.slow
def test_a_full_disk_says_one_line_keeps_the_store_and_a_rerun_completes(
    archives, tmp_path
):
    mount = tmp_path / "small"
    if not _mount_tmpfs(mount, 6):
        pytest.skip("cannot mount a small tmpfs here (needs root and mount)")
    try:
        data = mount / "data"
        full = _run(_command(data, "ingest", str(archives.cross)))
        assert full.returncode == 1, full.stderr
        assert "Traceback" not in full.stderr
        lines = full.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("e2g: error:"), lines
        assert "full" in lines[0]
        kept = _rows(data)
        assert 0 < kept < CROSS_POSTED
        connection = sqlite3.connect(data / "store.sqlite3")
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        connection.close()
        subprocess.run(["mount", "-o", "remount,size=256m", str(mount)], check=True)
        again = _run(_command(data, "ingest", "--json", str(archives.cross)))
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["index_lag"] == 0
        state = _state(data)
        assert state.counts[0] == CROSS_POSTED
        assert state.index_ids == state.store_ids
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _free_pages(data: Path, megabytes: int) -> int:
    """Leave `megabytes` of free pages in the store, as a migration that rewrote a
    table does (schema 9 dropped two columns); the store file's size after."""
    connection = sqlite3.connect(data / "store.sqlite3", isolation_level=None)
    try:
        connection.execute("CREATE TABLE filler(data BLOB)")
        connection.executemany(
            "INSERT INTO filler(data) VALUES (randomblob(?))",
            [(8192,)] * (megabytes * 128),
        )
        connection.execute("DROP TABLE filler")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        free = connection.execute("PRAGMA freelist_count").fetchone()[0]
        assert free * 4096 >= megabytes * 2**20
    finally:
        connection.close()
    return (data / "store.sqlite3").stat().st_size


def test_optimize_killed_while_it_rewrites_the_store_loses_nothing(
    reference_dir, reference, tmp_path
):
    """SIGKILL lands somewhere inside VACUUM (or just before or after it): the store
    is whole and holds every message, and optimize run again finishes the job."""
    data = tmp_path / "data"
    shutil.copytree(reference_dir, data)
    grown = _free_pages(data, 24)
    killed = _start(
        _command(data, "optimize"),
        env=_env(**fault_hook.environment("killpg-soon@store.compact:0.3")),
    )
    killed.communicate(timeout=RUN_TIMEOUT)
    assert killed.returncode in (-signal.SIGKILL, 0)
    assert _state(data) == reference
    again = _run(_command(data, "optimize"))
    assert again.returncode == 0, again.stderr
    assert (data / "store.sqlite3").stat().st_size < grown - 20 * 2**20
    assert _state(data) == reference
    assert (
        _search_total(data, "is:patch")[0]
        == _search_total(reference_dir, "is:patch")[0]
    )


@pytest.mark.slow
def test_optimize_on_a_full_disk_says_one_line_and_keeps_the_store(
    reference_dir, reference, tmp_path
):
    """VACUUM writes the whole store again through the WAL beside it: with too
    little room left it fails, in one line, and the store stays as it was."""
    mount = tmp_path / "small"
    if not _mount_tmpfs(mount, 256):
        pytest.skip("cannot mount a small tmpfs here (needs root and mount)")
    try:
        data = mount / "data"
        shutil.copytree(reference_dir, data)
        grown = _free_pages(data, 8)
        room = os.statvfs(mount)
        ballast = mount / "ballast"
        ballast.write_bytes(b"\0" * (room.f_bavail * room.f_frsize - 4 * 2**20))
        full = _run(_command(data, "optimize"))
        assert full.returncode == 1, full.stderr
        lines = full.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("e2g: error:"), lines
        assert "full" in lines[0]
        assert _state(data) == reference
        ballast.unlink()
        again = _run(_command(data, "optimize"))
        assert again.returncode == 0, again.stderr
        assert (data / "store.sqlite3").stat().st_size < grown - 6 * 2**20
        assert _state(data) == reference
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
