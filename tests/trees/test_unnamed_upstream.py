"""A repository with no named trees, matched with `--all`: its branches' copies of
one patch (the same patch-id), and which of them is the upstream.

Without named trees the commit HEAD reaches is the upstream, whatever the dates: a
work-in-progress branch keeps earlier copies of master's commits (committed before
them, never posted as such), and master's commit is not their backport. A backport
whose upstream has no posting is matched on its own. Built in a temp dir: a real
repository and mbox, ingested and matched for real."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from e2g import config
from e2g.api import core
from e2g.api.answers import stored_results
from e2g.api.link import link
from e2g.api.match import match
from tests.conftest import git, mail

START = datetime(2021, 3, 1, 12, 0, tzinfo=UTC)
ALICE = "Alice Example <alice@example.org>"


def _env(authored: datetime, committed: datetime | None = None) -> dict[str, str]:
    return {
        **os.environ,
        "GIT_AUTHOR_NAME": "Alice Example",
        "GIT_AUTHOR_EMAIL": "alice@example.org",
        "GIT_COMMITTER_NAME": "Mia Maint",
        "GIT_COMMITTER_EMAIL": "mia@example.org",
        "GIT_AUTHOR_DATE": authored.isoformat(),
        "GIT_COMMITTER_DATE": (committed or authored).isoformat(),
    }


def _edit(repo: Path, line: int, text: str) -> None:
    path = repo / "frob.c"
    lines = path.read_text().splitlines()
    lines[line] = text
    path.write_text("\n".join(lines) + "\n")


def _commit(repo: Path, message: str, env: dict[str, str]) -> str:
    git(repo, "commit", "-q", "-a", "-m", message, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


def _posting(repo: Path, sha: str, message_id: str) -> bytes:
    """`sha`'s patch as its author posted it: git format-patch's Date: is the
    author date, which git am keeps."""
    patch = git(repo, "format-patch", "-1", "--stdout", sha)
    diff = patch[patch.index("\n---\n") + 1 :]
    subject = git(repo, "log", "-1", "--format=%s", sha).strip()
    when = datetime.fromisoformat(git(repo, "log", "-1", "--format=%aI", sha).strip())
    return mail(
        0,
        subject=f"[PATCH] {subject}",
        message_id=message_id,
        date=when,
        sender=ALICE,
        body=f"{subject}.\n\nSigned-off-by: {ALICE}\n{diff}",
    )


def _repository(root: Path) -> tuple[Path, dict[str, str]]:
    """master: base, A, B (posted on the day they were written, applied a day
    later), tagged v1.0; wip (from base): copies of A and B the author committed
    some 100 days before writing them up for the list (same patch-id, older
    dates; too early for the posting's date window)."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    (repo / "frob.c").write_text("".join(f"int line{n} = {n};\n" for n in range(40)))
    git(repo, "add", "frob.c")
    shas = {"base": _commit(repo, "frob: start", _env(START))}
    posted = START + timedelta(days=100)
    for name, line in (("A", 5), ("B", 25)):
        _edit(repo, line, f"int line{line} = {line * 11};")
        written = posted + timedelta(days=1 if name == "A" else 2)
        shas[name] = _commit(
            repo,
            f"frob: set line{line} for {name}\n\nSigned-off-by: {ALICE}",
            _env(written, written + timedelta(days=1)),
        )
    git(repo, "tag", "v1.0", env=_env(posted + timedelta(days=5)))
    git(repo, "checkout", "-q", "-b", "wip", shas["base"])
    for name, line in (("A", 5), ("B", 25)):
        _edit(repo, line, f"int line{line} = {line * 11};")
        early = START + timedelta(days=3 if name == "A" else 4)
        shas[f"wip-{name}"] = _commit(
            repo, git(repo, "log", "-1", "--format=%B", shas[name]), _env(early)
        )
    git(repo, "checkout", "-q", "master")
    return repo, shas


def _patch_id(repo: Path, sha: str) -> str:
    shown = git(repo, "show", sha)
    found = subprocess.run(
        ["git", "patch-id", "--stable"], input=shown, capture_output=True, text=True
    )
    return found.stdout.split()[0]


def _ingested(root: Path, postings: list[bytes]) -> config.Settings:
    """`postings` ingested, with a mail before and one after, so that the
    archive spans every commit."""
    mbox = root / "list.mbox"
    news = [
        mail(number, subject=f"news {number}", date=START + timedelta(days=days))
        for number, days in ((98, -10), (99, 200))
    ]
    mbox.write_bytes(b"".join([news[0], *postings, news[1]]))
    settings = config.resolve(data_dir=root / "data", env={}, home=root)
    core.ingest(settings, [str(mbox)], workers=1)
    return settings


def _matched(root: Path, postings: list[bytes]) -> config.Settings:
    """`postings` ingested and the repository matched with `--all`, one worker."""
    settings = _ingested(root, postings)
    match(settings, [], repo=root / "repo", all_refs=True, jobs=1)
    return settings


@pytest.fixture(scope="module")
def wip(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("wip")
    repo, shas = _repository(root)
    postings = [_posting(repo, shas[name], f"{name}@example.org") for name in "AB"]
    return _matched(root, postings), repo, shas


def test_the_head_commit_is_the_upstream_of_a_wip_copy(wip) -> None:
    settings, repo, shas = wip
    for name in "AB":
        assert _patch_id(repo, shas[name]) == _patch_id(repo, shas[f"wip-{name}"])
        result = link(settings, shas[name], repo=repo)
        assert result.upstream is None
        applied = [p.message_id for p in result.postings if p.applied]
        assert applied == [f"{name}@example.org"]
        mine = [place for place in result.trees if place.commit == shas[name]]
        assert [(place.how, place.release) for place in mine] == [("applied", "v1.0")]
        # What `match` stored for it, as `match --all-results` reads it back.
        (stored,) = stored_results(settings, str(repo.resolve()), [shas[name]])
        assert stored.upstream is None
        assert [p.message_id for p in stored.postings] == [f"{name}@example.org"]
        # The wip copy HEAD does not reach is the copy: it inherits the posting.
        copy = link(settings, shas[f"wip-{name}"], repo=repo)
        assert copy.upstream is not None and copy.upstream.commit == shas[name]
        assert [p.message_id for p in copy.postings] == [f"{name}@example.org"]


def test_link_names_no_backport_and_the_release(wip) -> None:
    settings, repo, shas = wip
    command = [sys.executable, "-m", "e2g", "--data-dir", str(settings.data_dir)]
    command += ["link", "-C", str(repo), shas["A"]]
    run = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "E2G_PAGER": "cat"},
    )
    assert "backport of" not in run.stdout
    assert "<A@example.org>" in run.stdout
    line = next(
        row for row in run.stdout.splitlines() if row.startswith(f"  {shas['A'][:12]}")
    )
    assert "v1.0" in line and "not released yet" not in line


def test_link_of_a_commit_never_matched_beside_a_matched_wip_copy(
    tmp_path: Path,
) -> None:
    """Only the wip branch was matched: `e2g link` of master's commit (never
    answered) finds its upstream in the store as `match` would, and master's
    commit is no backport of the wip copy."""
    repo, shas = _repository(tmp_path)
    settings = _ingested(tmp_path, [_posting(repo, shas["A"], "A@example.org")])
    match(settings, ["wip"], repo=repo, jobs=1)
    result = link(settings, shas["A"], repo=repo)
    assert result.upstream is None
    assert [p.message_id for p in result.postings if p.applied] == ["A@example.org"]


def test_a_backport_whose_upstream_has_no_posting_is_matched_on_its_own(
    tmp_path: Path,
) -> None:
    """master's U was never posted to the list; its backport S on `stable` (its
    note names U, its context differs: another patch-id) was, when it was made,
    long after U. S inherits nothing from U then: it is matched on its own, by
    `match` and by `link`, and still says whose backport it is."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    (repo / "frob.c").write_text("".join(f"int line{n} = {n};\n" for n in range(40)))
    git(repo, "add", "frob.c")
    base = _commit(repo, "frob: start", _env(START))
    _edit(repo, 5, "int line5 = 55;")
    upstream = _commit(repo, "frob: set line5", _env(START + timedelta(days=10)))
    git(repo, "checkout", "-q", "-b", "stable", base)
    _edit(repo, 4, "int line4 = 44;")  # the context S meets on this branch
    _commit(repo, "frob: set line4", _env(START + timedelta(days=20)))
    _edit(repo, 5, "int line5 = 55;")
    when = START + timedelta(days=150)
    backport = _commit(
        repo,
        f"frob: set line5\n\ncommit {upstream} upstream.\n\nSigned-off-by: {ALICE}",
        _env(when, when + timedelta(days=1)),
    )
    git(repo, "checkout", "-q", "master")
    assert _patch_id(repo, backport) != _patch_id(repo, upstream)
    settings = _matched(tmp_path, [_posting(repo, backport, "S@example.org")])

    assert link(settings, upstream, repo=repo).postings == ()
    for result in (
        link(settings, backport, repo=repo),
        *stored_results(settings, str(repo.resolve()), [backport]),
    ):
        assert result.upstream is not None and result.upstream.commit == upstream
        applied = [p.message_id for p in result.postings if p.applied]
        assert applied == ["S@example.org"]
