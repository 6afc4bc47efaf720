"""The crawl of benchmarks/crawl.py: every page of a served store answers, on the
sample always and on linux-sparse's real archive and repository where the corpus is."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import corpus_path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample-mbox"


def _crawl_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_crawl", ROOT / "benchmarks" / "crawl.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


crawl = _crawl_module()


def test_a_5xx_a_failure_and_a_slow_page_fail_the_crawl(capsys) -> None:
    answers = [
        crawl.Answer("commit", "/commit/a", 200, 0.1),
        crawl.Answer("optional", "/metrics", 404, 0.1),
        crawl.Answer("search", "/search?q=)(", 400, 0.1),
    ]
    assert crawl.report("t", answers, 0, 30.0)
    for bad in (
        crawl.Answer("merge", "/commit/b", 500, 0.1),
        crawl.Answer("thread", "/thread/x", "TimeoutError", 35.0),
        crawl.Answer("blame", "/blame/HEAD/x", 200, 31.0),
        crawl.Answer("commit", "/commit/c", 404, 0.1)._replace(status=503),
    ):
        assert not crawl.report("t", [*answers, bad], 0, 30.0)
    assert "FAILED 500 0.1 s /commit/b" in capsys.readouterr().out


def _merge_an_unposted_branch(repo: Path) -> None:
    """The shape that broke liburing's merge pages: a merge whose commits no mail carried."""

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=M", "-c", "user.email=m@x.org"]
            + ["-c", "commit.gpgsign=false", *args],
            check=True,
            capture_output=True,
        )

    git("checkout", "-q", "-b", "side", "HEAD~1")
    (repo / "side.c").write_text("int side;\n")
    git("add", "side.c")
    git("commit", "-q", "-m", "side: a commit no list saw")
    git("checkout", "-q", "-")
    git("merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side")


def test_the_sample_crawls_with_no_5xx(tmp_path: Path, capsys) -> None:
    repo = tmp_path / "repo"
    subprocess.run(
        ["git", "clone", "-q", str(SAMPLE / "sample-repo.bundle"), str(repo)],
        check=True,
    )
    _merge_an_unposted_branch(repo)
    archives = ["frob-devel.mbox", "frob-net.mbox.gz", "pipermail"]
    code = crawl.main(
        ["--repo", str(repo), "--data-dir", str(tmp_path / "data"), "--files", "4"]
        + [part for name in archives for part in ("--archive", str(SAMPLE / name))]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    line = out.strip().splitlines()[-1]
    assert "0 5xx, errors or over 30 s" in line
    assert "(1 merges)" in line  # its page was asked, and answered
    assert "  merge       200: " in out and "  way-back    200: " in out
    # The queue's pages are required kinds, each asked and answered.
    for kind in ("patches", "api-patches", "patches-atom", "events-atom"):
        assert f"  {kind:<11} 200: " in out, kind
    for kind in ("api-events", "series", "api-series"):
        assert f"  {kind:<11} 200: " in out, kind
    assert "  tree        200: " in out and "  api-tree    200: " in out


def test_a_missing_queue_page_fails_the_crawl() -> None:
    """The queue's pages are no longer optional: a 404 there is a finding."""
    assert not crawl.is_bad(crawl.Answer("optional", "/metrics", 404, 0.1), 30.0)
    assert crawl.is_bad(crawl.Answer("patches", "/patches", 404, 0.1), 30.0)
    assert crawl.is_bad(crawl.Answer("series", "/series/a@x", 404, 0.1), 30.0)
    assert crawl.is_bad(crawl.Answer("tree", "/tree/HEAD/mm", 404, 0.1), 30.0)


@pytest.mark.corpus
@pytest.mark.slow
def test_linux_sparse_crawls_with_no_5xx(capsys) -> None:
    corpus_path("sparse", "sparse.bundle")
    corpus_path("sparse", "linux-sparse.mbox.gz")
    code = crawl.main(["--set", "sparse"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "(259 merges)" in out and "0 5xx, errors or over 30 s" in out
