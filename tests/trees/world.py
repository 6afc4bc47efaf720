"""A mainline with two stable branches and a rebasing next branch, built in a temp
dir, and the list archive that carried its patches and the backport process's mails.

mainline (master): base, then A..E (each posted and reviewed), tagged v1.0 (base),
v1.1 (after C), v1.2 (after E); then the merge of a signed tag (annotated where gpg
is not installed) of a topic branch T1, T2, whose pull request is in the archive.
linux-1.0.y (from v1.0): A by `cherry-pick -x`, B with `commit B upstream.`, C as a
plain cherry-pick (patch-id only), E with `[ Upstream commit E ]` and other context,
then a revert of the A backport; tagged v1.0.1 after C's backport, v1.0.2 at its tip.
linux-1.1.y (from v1.1): D with `[ Upstream commit D ]` (abbreviated), tagged v1.1.1.
next: N1, N2 on master (posted and reviewed); `rebase()` rewrites them.
The archive also holds an AUTOSEL mail for A, a stable review mail for B, a FAILED
notice for D and a queued notice for C, none of which is mainline's review.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.conftest import git, mail

START = datetime(2021, 3, 1, 12, 0, tzinfo=UTC)
MAINTAINER = "Mia Maint <mia@example.org>"
REVIEWER = "Rita Review <rita@example.org>"
AUTOSEL = "Sasha Sel <sasha@example.org>"
GREG = "Greg Stable <greg@example.org>"
LINES = [f"int line{n} = {n};" for n in range(60)]


@dataclass
class World:
    repo: Path
    archive: Path
    config: Path
    shas: dict[str, str] = field(default_factory=dict)
    mails: list[bytes] = field(default_factory=list)
    clock: datetime = START
    signed: bool = False  # the merged tag is signed (gpg is installed)


def _env(when: datetime) -> dict[str, str]:
    stamp = when.isoformat()
    return {
        **os.environ,
        "GIT_AUTHOR_NAME": "Alice Example",
        "GIT_AUTHOR_EMAIL": "alice@example.org",
        "GIT_COMMITTER_NAME": "Mia Maint",
        "GIT_COMMITTER_EMAIL": "mia@example.org",
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
    }


def _tick(world: World, hours: int = 24) -> datetime:
    world.clock += timedelta(hours=hours)
    return world.clock


def _edit(world: World, line: int, text: str, name: str, *, message: str = "") -> str:
    path = world.repo / "frob.c"
    lines = path.read_text().splitlines()
    lines[line] = text
    path.write_text("\n".join(lines) + "\n")
    when = _tick(world)
    git(world.repo, "add", "frob.c", env=_env(when))
    body = message or f"frob: {name}\n\nChange line {line} for {name}.\n"
    git(world.repo, "commit", "-q", "-m", body, env=_env(when))
    sha = git(world.repo, "rev-parse", "HEAD").strip()
    world.shas[name] = sha
    return sha


def _post(world: World, name: str, *, review: bool = True) -> str:
    """The commit `name`'s patch as its author posted it (a day before it was
    committed, as git am keeps the Date:), and a Reviewed-by reply."""
    sha = world.shas[name]
    patch = git(world.repo, "format-patch", "-1", "--stdout", sha)
    diff = patch[patch.index("\n---\n") + 1 :]
    subject = git(world.repo, "log", "-1", "--format=%s", sha).strip()
    when = datetime.fromisoformat(
        git(world.repo, "log", "-1", "--format=%aI", sha).strip()
    )
    message_id = f"{name}@example.org"
    world.mails.append(
        mail(
            0,
            subject=f"[PATCH] {subject}",
            message_id=message_id,
            date=when,
            body=f"Change for {name}.\n\nSigned-off-by: Alice Example <alice@example.org>\n{diff}",
        )
    )
    if review:
        world.mails.append(
            mail(
                0,
                subject=f"Re: [PATCH] {subject}",
                sender=REVIEWER,
                message_id=f"review-{name}@example.org",
                in_reply_to=message_id,
                date=when + timedelta(hours=2),
                body=f"Looks right.\n\nReviewed-by: {REVIEWER}\n",
            )
        )
    return message_id


def _pick(world: World, name: str, upstream: str, *, note: str | None) -> str:
    """Cherry-pick mainline's `upstream` onto the current branch: `-x` when `note`
    is "-x", else with `note` (a format with {sha}) put first in the body, or none."""
    when = _tick(world)
    options = ["-x"] if note == "-x" else []
    git(world.repo, "cherry-pick", *options, world.shas[upstream], env=_env(when))
    if note not in (None, "-x"):
        subject, _, rest = git(world.repo, "log", "-1", "--format=%B").partition("\n")
        text = note.format(sha=world.shas[upstream])
        message = f"{subject}\n\n{text}\n{rest}"
        git(world.repo, "commit", "-q", "--amend", "-m", message, env=_env(when))
    sha = git(world.repo, "rev-parse", "HEAD").strip()
    world.shas[name] = sha
    return sha


def _process_mails(world: World) -> None:
    """The backport process's mails for A, B, C and D: after mainline took them."""
    when = _tick(world, 1)
    for name, subject, sender in (
        ("A", "[PATCH AUTOSEL 1.0 1/3] frob: A", AUTOSEL),
        ("B", "[PATCH 1.0 002/100] frob: B", GREG),
        ("C", 'Patch "frob: C" has been added to the 1.0-stable tree', GREG),
        (
            "D",
            'FAILED: patch "[PATCH] frob: D" failed to apply to 1.0-stable tree',
            GREG,
        ),
    ):
        patch = git(world.repo, "format-patch", "-1", "--stdout", world.shas[name])
        diff = patch[patch.index("\n---\n") + 1 :]
        world.mails.append(
            mail(
                0,
                subject=subject,
                sender=sender,
                message_id=f"process-{name}@example.org",
                date=when,
                body=f"1.0-stable review patch.\n\ncommit {world.shas[name]} upstream.\n\n{diff}",
            )
        )


def build(root: Path) -> World:
    repo = root / "linux"
    repo.mkdir()
    world = World(repo, root / "list.mbox", root / "xdg" / "e2g" / "config.toml")
    git(repo, "init", "-q", "-b", "master")
    (repo / "frob.c").write_text("\n".join(LINES) + "\n")
    git(repo, "add", "frob.c")
    git(repo, "commit", "-q", "-m", "frob: base", env=_env(_tick(world)))
    git(repo, "tag", "v1.0")
    for number, name in enumerate("ABC"):
        _edit(world, 10 * number + 5, f"int {name.lower()} = {number};", name)
        _post(world, name)
    git(repo, "tag", "v1.1")
    _edit(world, 35, "int d = 3;", "D")
    _post(world, "D")
    _edit(world, 45, "int e = 4;", "E")
    _post(world, "E")
    git(repo, "tag", "v1.2")
    _pull(world)
    _process_mails(world)
    _stable(world)
    _next(world)
    world.archive.write_bytes(b"".join(world.mails))
    world.config.parent.mkdir(parents=True)
    world.config.write_text(
        f'[trees.mainline]\nrepo = "{repo}"\nbranches = ["master"]\n\n'
        f'[trees.stable]\nrepo = "{repo}"\nbranches = ["linux-1.0.y", "linux-1.1.y"]\n\n'
        f'[trees.next]\nrepo = "{repo}"\nbranches = ["next"]\n'
    )
    return world


PULL_URL = "git://git.example.org/frob.git"


def _tag(world: World, name: str, when: datetime) -> None:
    """A signed tag (a key made for the test) where gpg is installed, else an
    annotated one: what the merge and its pull request look like is the same."""
    home = world.repo.parent / "gnupg"
    if shutil.which("gpg") is None:
        git(world.repo, "tag", "-a", "-m", "frob for 1.3", name, env=_env(when))
        return
    home.mkdir(mode=0o700)
    env = {**_env(when), "GNUPGHOME": str(home)}
    subprocess.run(
        ["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", ""]
        + ["--quick-gen-key", MAINTAINER, "ed25519", "sign", "never"],
        env=env,
        check=True,
        capture_output=True,
    )
    try:
        git(
            world.repo,
            "-c",
            "user.signingkey=mia@example.org",
            "tag",
            "-s",
            "-m",
            "frob for 1.3",
            name,
            env=env,
        )
    finally:  # gpg started an agent for this home: it must not outlive the test
        subprocess.run(
            ["gpgconf", "--kill", "gpg-agent"],
            env=env,
            check=False,
            capture_output=True,
        )
    world.signed = True


def _pull(world: World) -> None:
    """A topic branch of two posted patches, tagged (annotated, as a signed tag is)
    and merged into master as `git pull URL tag` does, after its pull request."""
    repo = world.repo
    git(repo, "checkout", "-q", "-b", "topic", "master")
    for number, name in enumerate(("T1", "T2")):
        _edit(world, 55 + 2 * number, f"int {name.lower()} = {number};", name)
        _post(world, name)
    when = _tick(world)
    _tag(world, "frob-for-1.3", when)
    world.mails.append(
        mail(
            0,
            subject="[GIT PULL] frob for 1.3",
            sender=MAINTAINER,
            message_id="pull-1.3@example.org",
            date=when + timedelta(hours=1),
            body=(
                "Hi,\n\nThe following changes since commit "
                f"{world.shas['E']}:\n\n  frob: E\n\nare available in the Git "
                f"repository at:\n\n  {PULL_URL} tags/frob-for-1.3\n\n"
                f"for you to fetch changes up to {world.shas['T2']}:\n\n  frob: T2\n"
            ),
        )
    )
    git(repo, "checkout", "-q", "master")
    when = _tick(world)
    git(
        repo,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        f"Merge tag 'frob-for-1.3' of {PULL_URL.removesuffix('.git')}",
        "frob-for-1.3",
        env=_env(when),
    )
    world.shas["merge"] = git(repo, "rev-parse", "HEAD").strip()


def _stable(world: World) -> None:
    repo = world.repo
    git(repo, "checkout", "-q", "-b", "linux-1.0.y", "v1.0")
    _pick(world, "A-1.0", "A", note="-x")
    _pick(world, "B-1.0", "B", note="commit {sha} upstream.")
    _pick(world, "C-1.0", "C", note=None)
    git(repo, "tag", "v1.0.1")
    # E's context differs on 1.0.y: the lines around it were changed there first.
    _edit(world, 43, "int stable_only = 1;", "S-1.0")
    _pick(world, "E-1.0", "E", note="[ Upstream commit {sha} ]")
    when = _tick(world)
    git(repo, "revert", "--no-edit", world.shas["A-1.0"], env=_env(when))
    world.shas["revert-A-1.0"] = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "tag", "v1.0.2")
    git(repo, "checkout", "-q", "-b", "linux-1.1.y", "v1.1")
    _pick(world, "D-1.1", "D", note="[ Upstream commit {sha} ]")
    message = git(repo, "log", "-1", "--format=%B")
    short = message.replace(world.shas["D"], world.shas["D"][:12])
    git(repo, "commit", "-q", "--amend", "-m", short, env=_env(world.clock))
    world.shas["D-1.1"] = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "tag", "v1.1.1")
    git(repo, "checkout", "-q", "master")


def _next(world: World) -> None:
    git(world.repo, "checkout", "-q", "-b", "next", "master")
    _edit(world, 50, "int n1 = 1;", "N1")
    _post(world, "N1")
    _edit(world, 52, "int n2 = 2;", "N2")
    _post(world, "N2")
    git(world.repo, "checkout", "-q", "master")


def rebase_next(world: World) -> None:
    """Rewrite next's commits (new committer dates): new ids, the same patches."""
    git(world.repo, "checkout", "-q", "next")
    when = _tick(world)
    git(
        world.repo,
        "rebase",
        "-q",
        "--force-rebase",
        "master",
        env={**_env(when), "GIT_COMMITTER_DATE": when.isoformat()},
    )
    git(world.repo, "checkout", "-q", "master")
    for name, back in (("N2", 0), ("N1", 1)):
        world.shas[f"{name}'"] = git(world.repo, "rev-parse", f"next~{back}").strip()
