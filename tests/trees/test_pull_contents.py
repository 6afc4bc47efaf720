"""A merge whose message names another ref and URL than its pull request did: the
request is found by its shortlog and diffstat (what `git request-pull` wrote, in
a repository built in a temp dir), and one listing other commits is not taken."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from e2g import config
from e2g.api import core
from e2g.api.link import link
from e2g.mail.pull import parse_diffstat, parse_shortlog, same_path
from tests.conftest import git, mail
from tests.trees.world import MAINTAINER, World, _env, _tick, build

LONG = "drivers/frobnicator/very/deeply/nested/directory/for/the/frob_main_driver.c"
FIXES_URL = "git://git.example.org/frob-fixes.git"


def _fixes(world: World) -> tuple[list[str], str]:
    """Two commits by two authors on a branch `fixes` off master, one touching a
    path long enough for the diffstat to cut; the request-pull text for its tag."""
    repo = world.repo
    git(repo, "checkout", "-q", "-b", "fixes", "master")
    subjects = []
    for number, (author, path) in enumerate(
        [("Bob Fixer <bob@example.org>", LONG), ("Carol <carol@example.org>", "x.h")]
    ):
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"int fix{number};\n")
        git(repo, "add", path)
        subject = f"frob: fix {number} of the frobnicator"
        env = _env(_tick(world)) | {"GIT_AUTHOR_NAME": author.split(" <")[0]}
        git(repo, "commit", "-q", "--author", author, "-m", subject, env=env)
        subjects.append(subject)
    git(repo, "tag", "-a", "-m", "frob fixes", "frob-fixes-1.4", env=_env(world.clock))
    text = git(repo, "request-pull", "master", str(repo), "frob-fixes-1.4")
    git(repo, "checkout", "-q", "master")
    # The request names where the maintainer published the tag, not this directory.
    return subjects, text.replace(str(repo), FIXES_URL)


def test_shortlog_and_diffstat_of_a_request(tmp_path: Path) -> None:
    world = build(tmp_path)
    subjects, text = _fixes(world)
    assert parse_shortlog(text) == tuple(subjects)
    paths = parse_diffstat(text)
    assert len(paths) == 2
    assert any(path.startswith(".../") for path in paths)  # git cut the long one
    assert all(any(same_path(p, f) for p in paths) for f in (LONG, "x.h"))
    assert parse_shortlog("> Bob (1):\n>       frob: quoted\n") == ()


def test_a_merge_finds_its_pull_request_by_what_it_lists(tmp_path: Path) -> None:
    world = build(tmp_path)
    _, text = _fixes(world)
    when = _tick(world)
    decoy = git(world.repo, "request-pull", world.shas["E"], str(world.repo), "topic")
    for message_id, subject, body in (
        ("fixes-pull@example.org", "[GIT PULL] frob fixes for 1.4", text),
        ("decoy-pull@example.org", "[GIT PULL] frob topic again", decoy),
    ):
        world.mails.append(
            mail(
                0,
                subject=subject,
                sender=MAINTAINER,
                message_id=message_id,
                date=when,
                body=body.replace(str(world.repo), FIXES_URL),
            )
        )
    world.archive.write_bytes(b"".join(world.mails))
    # Merged from another mirror and under another name than the request gave.
    git(
        world.repo,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge branch 'fixes-for-linus' of git://git.other.example.org/frob",
        "frob-fixes-1.4",
        env=_env(when + timedelta(days=1)),
    )
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    core.ingest(settings, [world.archive])

    result = link(settings, "HEAD", repo=world.repo)

    assert result.merge
    assert [p.message_id for p in result.postings] == ["fixes-pull@example.org"]
    (found,) = result.postings
    assert found.method == "pull-request" and found.applied and found.score == 1.0
    assert [e.signal for e in found.evidence] == ["shortlog", "diffstat"]
    assert "lists 2 of the 2 merged commits' subjects" in found.evidence[0].detail
