"""Smoke tests for benchmarks/: the archive generator, the mbox splitter, and a tiny run."""

from __future__ import annotations

import importlib.util
import json
import mailbox
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
COUNT = 300


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"bench_{name}", BENCHMARKS / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


gen_archive = _load("gen_archive")
ingest_bench = _load("ingest")


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("archive") / "generated.mbox"
    gen_archive.generate(path, COUNT, seed=7)
    return path


def test_generator_is_deterministic(archive: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.mbox"
    other = tmp_path / "other.mbox"
    written = gen_archive.generate(again, COUNT, seed=7)
    gen_archive.generate(other, COUNT, seed=8)
    assert written == again.stat().st_size
    assert again.read_bytes() == archive.read_bytes()
    assert other.read_bytes() != archive.read_bytes()


def test_generated_mbox_has_exactly_count_realistic_messages(archive: Path) -> None:
    messages = list(mailbox.mbox(archive))
    assert len(messages) == COUNT
    ids = [message["Message-ID"] for message in messages]
    assert len(set(ids)) == COUNT
    assert all(
        message["List-Id"] == "<linux-kernel.vger.kernel.org>" for message in messages
    )
    assert all(message["Date"] and message["Received"] for message in messages)
    average = archive.stat().st_size / COUNT
    assert 2_000 <= average <= 4_000
    subjects = [str(message["Subject"]) for message in messages]
    covers = [s for s in subjects if re.match(r"\[PATCH[^\]]* 0/\d+\]", s)]
    patches = [
        s for s in subjects if re.match(r"\[(RFC )?PATCH[^\]]* [1-9]\d*/\d+\]", s)
    ]
    assert covers and patches
    assert any(s.startswith("Re: ") for s in subjects)


def test_patches_carry_real_diffs_and_replies_quote_with_trailers(
    archive: Path,
) -> None:
    bodies = {
        str(message["Subject"]): message.get_payload(decode=True).decode()
        for message in mailbox.mbox(archive)
    }
    patch = next(
        body
        for subject, body in bodies.items()
        if " 1/" in subject and not subject.startswith("Re:")
    )
    assert "Signed-off-by: " in patch
    assert re.search(r"^diff --git a/(\S+) b/\1$", patch, re.MULTILINE)
    assert re.search(r"^ \d+ files? changed", patch, re.MULTILINE)
    header = re.search(r"^@@ -\d+,(\d+) \+\d+,(\d+) @@", patch, re.MULTILINE)
    assert header is not None
    replies = [
        body for subject, body in bodies.items() if subject.startswith("Re: [PATCH")
    ]
    assert any(re.search(r"^> ", body, re.MULTILINE) for body in replies)
    assert any(
        re.search(r"^(Reviewed|Acked|Tested)-by: ", body, re.MULTILINE)
        for body in replies
    )


def test_hunk_headers_count_their_lines(archive: Path) -> None:
    """Each hunk's old/new line counts match its body, as `git apply` requires."""
    text = archive.read_text()
    hunks = re.findall(
        r"^@@ -\d+,(\d+) \+\d+,(\d+) @@.*\n((?:[ +\-].*\n)*)", text, re.MULTILINE
    )
    assert hunks
    for old, new, body in hunks:
        lines = body.splitlines()
        if lines and lines[-1] == "-- ":  # the signature separator ends the diff
            lines.pop()
        assert int(old) == sum(1 for line in lines if line[0] in " -")
        assert int(new) == sum(1 for line in lines if line[0] in " +")


def test_splitter_agrees_with_stdlib_and_unquotes_from_lines(
    archive: Path, tmp_path: Path
) -> None:
    with archive.open("rb") as stream:
        ours = list(ingest_bench.split_mbox(stream))
    theirs = [message.as_bytes() for message in mailbox.mbox(archive)]
    assert len(ours) == len(theirs) == COUNT
    assert ours[0].startswith(b"Return-Path: ")
    quoted = tmp_path / "quoted.mbox"
    quoted.write_bytes(
        b"From a@b Mon Jan  6 10:00:00 2020\nSubject: one\n\nbody\n>From here\n>>From there\n\n"
        b"From c@d Mon Jan  6 10:00:01 2020\nSubject: two\n\nFrom not a separator\n"
    )
    with quoted.open("rb") as stream:
        assert list(ingest_bench.split_mbox(stream)) == [
            b"Subject: one\n\nbody\nFrom here\n>From there\n",
            b"Subject: two\n\nFrom not a separator\n",
        ]
    maildir = tmp_path / "maildir"
    assert ingest_bench.to_maildir(archive, maildir) == COUNT
    assert len(list((maildir / "new").iterdir())) == COUNT


def test_tree_rss_sees_the_child(tmp_path: Path) -> None:
    measured = ingest_bench.measure(
        [sys.executable, "-c", "x = bytearray(64 << 20); import time; time.sleep(0.3)"],
        env={},
        logs=tmp_path,
    )
    assert measured.returncode == 0
    assert measured.peak_process_rss >= 64 << 20
    assert measured.peak_tree_rss >= 64 << 20
    assert measured.seconds >= 0.3


def _e2g_works() -> bool:
    probe = subprocess.run(
        [sys.executable, "-m", "e2g", "--help"],
        capture_output=True,
        cwd=REPO,
        check=False,
    )
    return probe.returncode == 0


def _run_bench(tmp_path: Path, *extra: str) -> str:
    if not _e2g_works():
        pytest.skip("python -m e2g does not start yet")
    result = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "ingest.py"),
            "--count",
            str(COUNT),
            "--sparse",
            "/nonexistent",
            "--workdir",
            str(tmp_path),
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        timeout=120,
    )
    if result.returncode != 0 and "e2g failed" in result.stdout:
        pytest.skip(f"e2g ingest is not working yet: {result.stdout.splitlines()[-1]}")
    assert result.returncode == 0, result.stderr
    assert "skipping the real archive" in result.stderr
    return result.stdout


def test_small_run_prints_the_table(tmp_path: Path) -> None:
    stdout = _run_bench(tmp_path, "--skip-notmuch")
    header, first = stdout.splitlines()[:2]
    assert header.split()[:4] == ["archive", "messages", "MB", "e2g"]
    assert "e2g msg/s" in header and "ratio e2g/notmuch msg/s" in header
    cells = first.split()
    assert cells[:2] == ["generated-300", "300"]
    rate = float(cells[5].replace(",", ""))  # e2g msg/s
    assert rate > 0
    assert "peak RSS < 1 GiB" in stdout


@pytest.mark.skipif(shutil.which("notmuch") is None, reason="notmuch is not installed")
def test_small_run_against_notmuch_gives_a_ratio(tmp_path: Path) -> None:
    stdout = _run_bench(tmp_path, "--json")
    result = json.loads(stdout.splitlines()[0])
    assert result["messages"] == COUNT
    assert result["notmuch_indexed"] == COUNT
    assert result["e2g_report"]["messages"] == COUNT
    assert result["ratio"] == pytest.approx(
        result["e2g_messages_per_second"] / result["notmuch_messages_per_second"]
    )


def test_startup_prints_every_figure_next_to_its_target() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "startup.py"), "--rounds", "2"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for label in (
        "python3 -c pass",
        "e2g --version",
        "e2g link REV --json",
        "e2g link BACKPORT --json",
        "e2g search QUERY",
        "import e2g.cli.app",
    ):
        (line,) = [line for line in lines if line.startswith(label)]
        assert "ms" in line
    assert "<60ms" in result.stdout and "<150ms" in result.stdout


def test_patch_queue_prints_every_figure_at_a_tiny_size(tmp_path: Path) -> None:
    """benchmarks/patch_queue.py run as a script on 300 generated messages, once."""
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "patch_queue.py")]
        + ["--messages", "300", "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    found = re.search(
        r"^([\d,]+) messages, ([\d,]+) patch versions: \{", result.stdout, re.M
    )
    assert found is not None, result.stdout
    assert int(found[1].replace(",", "")) >= 300 and int(found[2].replace(",", "")) > 0
    for label in (
        "derive every patch: median",
        "refresh with nothing new: median",
        "listing.patches (default states, 100 rows): median",
        "GET /patches (the default filter, first page): median",
        "GET /patches.atom?state=all (the feed): median",
        "listing.patches (--from, 100 rows): median",
        "e2g patches: median",
        "e2g patches --json: median",
        "e2g patches --flat --state all: median",
    ):
        (line,) = [line for line in lines if line.startswith(label)]
        assert " ms" in line, line


def test_no_benchmark_hides_a_standard_module() -> None:
    """A script's directory comes first on sys.path: benchmarks/queue.py hid the
    standard library's queue from crawl.py (its ThreadPoolExecutor failed)."""
    names = {path.stem for path in BENCHMARKS.glob("*.py")}
    assert names & set(sys.stdlib_module_names) == set()
