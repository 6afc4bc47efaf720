"""Long human output goes through a pager on a terminal, as git's does, and never
into a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import mail, patch_body


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pager")
    archive = root / "a.mbox"
    archive.write_bytes(
        b"".join(
            mail(n, subject=f"[PATCH] mm: frob {n}", body=patch_body(n))
            for n in range(1, 4)
        )
    )
    subprocess.run(
        [sys.executable, "-m", "e2g", "--data-dir", str(root / "d"), "-q", "ingest",
         str(archive)],
        check=True,
        timeout=120,
    )  # fmt: skip
    return root / "d"


def _run(data: Path, pager: str, *, terminal: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PAGER", "E2G_DEBUG")}
    env["E2G_PAGER"] = pager
    command = [sys.executable, "-m", "e2g", "--data-dir", str(data), "search", "frob"]
    if not terminal:
        return subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=60, check=True
        ).stdout
    main, side = pty.openpty()
    process = subprocess.Popen(command, env=env, stdout=side, stderr=side)
    os.close(side)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the terminal's other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert process.wait(timeout=60) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_a_terminal_gets_the_pager(data: Path) -> None:
    shown = _run(data, "sed s/^/PAGED:/", terminal=True)
    lines = [line for line in shown.splitlines() if "frob" in line]
    assert len(lines) == 3 and all(line.startswith("PAGED:") for line in lines)


def test_a_pipe_or_cat_gets_plain_output(data: Path) -> None:
    piped = _run(data, "sed s/^/PAGED:/", terminal=False)
    assert piped.count("[PATCH] mm: frob") == 3 and "PAGED:" not in piped
    plain = _run(data, "cat", terminal=True)
    assert plain.count("[PATCH] mm: frob") == 3 and "PAGED:" not in plain
