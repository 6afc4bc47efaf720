"""git-pw and b4, the real clients from PyPI, against a real `e2g serve` of the
sparse archive and its repository (../shared/corpus/sparse): Patchwork's API and
lore's URL shapes as their users will meet them.

The store is built once for the module (ingest and match, about 15 s); each test
runs a client as a user would and checks what it printed or wrote. Skipped when
the corpus or a client is absent, with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT, corpus_path

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

# A two-part series whose first part got a Tested-by in a reply (superseded by a v2).
TESTED = "20260102114449.535597-2-ben.dooks@codethink.co.uk"


@dataclass(frozen=True)
class Served:
    base: str
    repo: Path
    home: Path


def client(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed: pip install -e '.[dev]' brings it")
    return found


def run(*command: str, cwd: Path, home: Path) -> str:
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
    env.pop("GIT_DIR", None)
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"{command[0]} failed: {done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _e2g(*args: str, data: Path, cwd: Path) -> None:
    env = {**os.environ, "E2G_DATA_DIR": str(data), "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "e2g", *args], cwd=cwd, env=env, check=True,
        capture_output=True, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    archive = corpus_path("sparse", "linux-sparse.mbox.gz")
    bundle = corpus_path("sparse", "sparse.bundle")
    root = tmp_path_factory.mktemp("clients")
    repo, data, home = root / "sparse", root / "data", root / "home"
    home.mkdir()
    subprocess.run(
        ["git", "clone", "-q", str(bundle), str(repo)], check=True, capture_output=True
    )
    _e2g("ingest", str(archive), data=data, cwd=repo)
    _e2g("match", data=data, cwd=repo)
    port = _free_port()
    env = {**os.environ, "E2G_DATA_DIR": str(data), "PYTHONPATH": str(ROOT)}
    with (root / "serve.log").open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "e2g", "serve", "--host", "127.0.0.1"]
            + ["--port", str(port), "-C", str(repo)],
            stdout=log, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(base + "/static/style.css", timeout=5):
                    break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
        yield Served(base, repo, home)
    finally:
        server.terminate()
        server.wait(timeout=10)


def api(served: Served, path: str) -> object:
    with urllib.request.urlopen(f"{served.base}/api/1.3/{path}", timeout=30) as answer:
        return json.load(answer)


def git_pw(served: Served, *args: str) -> str:
    return run(
        client("git-pw"), "--server", f"{served.base}/api/1.3",
        "--project", "linux-sparse", *args, cwd=served.repo, home=served.home,
    )  # fmt: skip


def test_git_pw_lists_patches_and_series(served: Served):
    patches = git_pw(served, "patch", "list")
    # git-pw's default: the new and under-review patches, newest first.
    assert "Oleg Nesterov (oleg@redhat.com)" in patches
    assert " new " in patches and " under-review " in patches
    assert " accepted " not in patches
    accepted = git_pw(served, "patch", "list", "--state", "accepted", "--limit", "5")
    assert accepted.count(" accepted ") == 5
    series = git_pw(served, "series", "list")
    assert "[PATCH" not in series  # a series' name is its title
    assert "Ben Dooks (ben.dooks@codethink.co.uk)" in series


def _phi_series(served: Served) -> dict:
    covers = api(served, "covers/?q=fix+2+problems+with+phi-sources")
    assert isinstance(covers, list) and len(covers) == 1
    series = covers[0]["series"][0]["id"]
    found = api(served, f"series/{series}/")
    assert isinstance(found, dict)
    return found


def test_git_pw_shows_a_patch_and_a_series(served: Served):
    series = _phi_series(served)
    shown = git_pw(served, "series", "show", str(series["id"]))
    assert "fix 2 problems with phi-sources" in shown
    assert "4 of 4" in shown and "Luc Van Oostenryck" in shown
    first = series["patches"][0]["id"]
    patch = api(served, f"patches/{first}/")
    assert isinstance(patch, dict) and patch["state"] == "accepted"
    shown = git_pw(served, "patch", "show", str(first))
    assert patch["commit_ref"] in shown and "accepted" in shown
    assert "additional testcase for remove_merging_phisrc()" in shown


def test_git_pw_applies_a_series_at_its_base(served: Served, tmp_path: Path):
    series = _phi_series(served)
    refs = [api(served, f"patches/{p['id']}/")["commit_ref"] for p in series["patches"]]
    clone = tmp_path / "clone"
    git(served.repo.parent, "clone", "-q", str(served.repo), str(clone))
    git(clone, "checkout", "-q", f"{refs[0]}^")
    git(clone, "config", "user.name", "Tester")
    git(clone, "config", "user.email", "tester@example.org")
    out = run(
        client("git-pw"), "--server", f"{served.base}/api/1.3",
        "--project", "linux-sparse", "series", "apply", str(series["id"]),
        cwd=clone, home=served.home,
    )  # fmt: skip
    assert out.count("Applying:") == 4
    # The four commits git am made hold what the four applied commits did.
    assert git(clone, "diff", "HEAD", refs[-1]) == ""


def b4(served: Served, *args: str, cwd: Path) -> str:
    return run(
        client("b4"), "-c", f"b4.midmask={served.base}/all/%s",
        "-c", "b4.attestation-policy=off", *args, cwd=cwd, home=served.home,
    )  # fmt: skip


def test_b4_am_collects_trailers_and_applies(served: Served, tmp_path: Path):
    out = b4(served, "am", "-o", str(tmp_path), TESTED, cwd=served.repo)
    assert "Total patches: 2" in out
    (mbx,) = tmp_path.glob("*.mbx")
    assert mbx.read_text().count("Tested-by: Paul Walmsley <pjw@kernel.org>") == 2
    clone = tmp_path / "clone"
    git(served.repo.parent, "clone", "-q", str(served.repo), str(clone))
    git(clone, "config", "user.name", "Tester")
    git(clone, "config", "user.email", "tester@example.org")
    git(clone, "am", str(mbx))
    assert "Tested-by: Paul Walmsley" in git(clone, "log", "-1", "--format=%B")


def test_b4_mbox_fetches_a_thread(served: Served, tmp_path: Path):
    b4(served, "mbox", "-o", str(tmp_path), TESTED, cwd=served.repo)
    (mbox,) = tmp_path.glob("*.mbx")
    assert (
        mbox.read_bytes().count(b"\nMessage-ID: ")
        + mbox.read_bytes().count(b"\nMessage-Id: ")
        >= 5
    )
