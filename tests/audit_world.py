"""A repository and a list archive built for `e2g audit`: one commit per verdict.

Each case is a commit of a real git repository in a temp dir and the mail that
posted and reviewed it (the patches cut from `git format-patch` of the commit or of
a variant of it, so patch-ids are git's own), ingested for real. `build` returns
the data dir's settings, the repository and the sha of each case by name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from e2g import config
from e2g.api.core import ingest
from e2g.api.link import link
from e2g.api.match import match
from e2g.model.links import LinkResult
from tests.conftest import BASE_DATE, git, mail

ALICE = "Alice Author <alice@example.org>"
BOB = "Bob Reviewer <bob@example.org>"
CAROL = "Carol Tester <carol@example.org>"
MAINT = "Mia Maintainer <mia@example.org>"
COMMIT_DATE = BASE_DATE + timedelta(days=9)
LINES = 12  # lines of each file the cases edit


def _identity(who: str) -> tuple[str, str]:
    name, _, email = who.partition(" <")
    return name, email.rstrip(">")


@dataclass
class World:
    root: Path
    repo: Path = field(init=False)
    mails: list[bytes] = field(default_factory=list)
    shas: dict[str, str] = field(default_factory=dict)
    clock: int = 0  # minutes after BASE_DATE of the next mail

    def __post_init__(self) -> None:
        self.repo = self.root / "repo"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        for name in "abcdefghijklmn":
            (self.repo / f"{name}.c").write_text(
                "".join(f"int {name}{n} = {n};\n" for n in range(LINES))
            )
        # Written before the archive's first mail: the archive cannot say.
        self.shas["initial"] = self.commit(
            "initial import", author=MAINT, days=-60, add_all=True
        )

    # -- git ------------------------------------------------------------------------

    def env(self, author: str, committer: str, days: int) -> dict[str, str]:
        when = (COMMIT_DATE + timedelta(days=days)).isoformat()
        (author_name, author_email), (name, email) = (
            _identity(author),
            _identity(committer),
        )
        return {
            **os.environ,
            "GIT_AUTHOR_NAME": author_name,
            "GIT_AUTHOR_EMAIL": author_email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_AUTHOR_DATE": when,
            "GIT_COMMITTER_DATE": when,
        }

    def edit(self, path: str, line: int, text: str) -> None:
        file = self.repo / path
        lines = file.read_text().splitlines(keepends=True)
        lines[line] = text + "\n"
        file.write_text("".join(lines))

    def commit(  # noqa: PLR0913 - keyword-only
        self,
        message: str,
        *,
        author: str = ALICE,
        committer: str = MAINT,
        days: int = 0,
        add_all: bool = False,
    ) -> str:
        env = self.env(author, committer, days)
        git(self.repo, "add", "-A" if add_all else "-u", env=env)
        git(self.repo, "commit", "-q", "-m", message, env=env)
        return git(self.repo, "rev-parse", "HEAD").strip()

    def diff_of(self, sha: str, *, renames: bool = True) -> str:
        """The diff `git format-patch` posts for `sha` (from `diff --git` on);
        without `renames`, as git before 2.9 posted a renamed file."""
        form = "-M" if renames else "--no-renames"
        text = git(self.repo, "format-patch", form, "-1", "--stdout", sha)
        body = text[text.index("diff --git ") :]
        return body[: body.rindex("\n-- \n") + 1]

    def variant(self, edits: list[tuple[str, int, str]]) -> str:
        """The diff `git format-patch` posts for HEAD with `edits` (path, line,
        text) made to it: a posted version that differs from what was committed."""
        original = git(self.repo, "rev-parse", "HEAD").strip()
        for path, line, text in edits:
            self.edit(path, line, text)
        env = self.env(ALICE, ALICE, 0)
        git(self.repo, "commit", "-q", "--amend", "--no-edit", "-a", env=env)
        diff = self.diff_of("HEAD")
        git(self.repo, "reset", "-q", "--hard", original)
        return diff

    # -- mail -----------------------------------------------------------------------

    def post(  # noqa: PLR0913 - keyword-only
        self,
        subject: str,
        diff: str,
        *,
        version: int = 1,
        sender: str = ALICE,
        changelog: str = "",
        message_id: str,
        part: str = "",  # "1/2": a patch of the series under the cover `parent`
        parent: str | None = None,
    ) -> str:
        tag = (f"PATCH v{version}" if version > 1 else "PATCH") + (
            f" {part}" if part else ""
        )
        body = (
            f"{subject.capitalize()}, for the audit.\n\nSigned-off-by: {sender}\n---\n"
            + (f"{changelog}\n\n" if changelog else "")
            + diff
        )
        return self._send(f"[{tag}] {subject}", body, sender, message_id, parent)

    def cover(self, subject: str, *, version: int, parts: int, message_id: str) -> str:
        """A cover letter of `parts` patches."""
        tag = f"PATCH v{version} 0/{parts}" if version > 1 else f"PATCH 0/{parts}"
        body = f"This series does {subject}.\n"
        return self._send(f"[{tag}] {subject}", body, ALICE, message_id, None)

    def announce(self, *, days: int, list_id: str | None = None) -> None:
        """A mail that is no patch, dated `days` after COMMIT_DATE: the archive's
        last (or, on another list, one that must not widen this list's dates)."""
        self.clock += 1
        self.mails.append(
            mail(
                self.clock,
                subject=f"news of day {days}",
                message_id=f"news{days}@x",
                date=COMMIT_DATE + timedelta(days=days),
                **({"list_id": list_id} if list_id else {}),
            )
        )

    def reply(self, to: str, body: str, *, sender: str = BOB, message_id: str) -> str:
        return self._send("Re: patch", body, sender, message_id, to)

    def _send(
        self,
        subject: str,
        body: str,
        sender: str,
        message_id: str,
        parent: str | None,
    ) -> str:
        self.clock += 1
        self.mails.append(
            mail(
                self.clock,
                subject=subject,
                body=body,
                sender=sender,
                message_id=message_id,
                in_reply_to=parent,
            )
        )
        return message_id


def quoted(diff: str) -> str:
    return "".join(f"> {line}\n" for line in diff.splitlines())


def build(root: Path) -> tuple[config.Settings, Path, dict[str, str]]:  # noqa: PLR0915 - one story
    world = World(root)
    shas = world.shas

    # reviewed: Bob's Reviewed-by on the very patch; the commit also names Carol,
    # whom no mail backs.
    world.edit("a.c", 3, "int a3 = 33;")
    shas["reviewed"] = world.commit(
        "a: set a3\n\nSigned-off-by: Alice Author <alice@example.org>\n"
        "Reviewed-by: Bob Reviewer <bob@example.org>\n"
        "Reviewed-by: Carol Tester <carol@example.org>"
    )
    posted = world.post("a: set a3", world.diff_of(shas["reviewed"]), message_id="a1@x")
    world.reply(
        posted, f"{quoted('+int a3 = 33;')}\nReviewed-by: {BOB}\n", message_id="a1r@x"
    )

    # changed-after-review: v2 reviewed, v3 (applied) changes one line of it.
    world.edit("b.c", 4, "int b4 = 44;")
    world.edit("b.c", 8, "int b8 = 88;")
    shas["changed"] = world.commit("b: set b4 and b8")
    v3 = world.diff_of(shas["changed"])
    v2 = world.variant([("b.c", 8, "int b8 = 80;")])
    v2_id = world.post("b: set b4 and b8", v2, version=2, message_id="b2@x")
    world.reply(v2_id, f"Reviewed-by: {BOB}\n", message_id="b2r@x")
    world.post("b: set b4 and b8", v3, version=3, message_id="b3@x")

    # reviewed-trivial-change: the reviewed patch's context differs (a rebase).
    world.edit("c.c", 5, "int c5 = 55;")
    shas["trivial"] = world.commit("c: set c5")
    rebased = world.diff_of(shas["trivial"]).replace(" int c3 = 3;", " int c3 = 30;")
    posted = world.post("c: set c5", rebased, message_id="c1@x")
    world.reply(posted, f"Acked-by: {BOB}\n", message_id="c1r@x")

    # posted-unreviewed: the author acks her own patch; the commit says so too.
    world.edit("d.c", 2, "int d2 = 22;")
    shas["self-acked"] = world.commit(
        "d: set d2\n\nSigned-off-by: Alice Author <alice@example.org>\n"
        "Acked-by: Alice Author <alice@example.org>"
    )
    posted = world.post(
        "d: set d2", world.diff_of(shas["self-acked"]), message_id="d1@x"
    )
    world.reply(posted, f"Acked-by: {ALICE}\n", sender=ALICE, message_id="d1r@x")
    world.reply(posted, "Thanks, I will look at it next week.\n", message_id="d1s@x")

    # changed-after-review, disclosed: the maintainer edits a reviewed patch and
    # says so between the Signed-off-by lines.
    world.edit("e.c", 6, "int e6 = 66;")
    world.edit("e.c", 9, "int e9 = 99;")
    shas["maintainer-edit"] = world.commit(
        "e: set e6 and e9\n\nSigned-off-by: Alice Author <alice@example.org>\n"
        "[mia: e9 is 99, not 90]\nSigned-off-by: Mia Maintainer <mia@example.org>"
    )
    posted_diff = world.variant([("e.c", 9, "int e9 = 90;")])
    posted = world.post("e: set e6 and e9", posted_diff, message_id="e1@x")
    world.reply(posted, f"Reviewed-by: {CAROL}\n", sender=CAROL, message_id="e1r@x")

    # reviewed by comments on the quoted patch, and by the committer alone.
    world.edit("f.c", 1, "int f1 = 11;")
    shas["commented"] = world.commit("f: set f1")
    diff = world.diff_of(shas["commented"])
    posted = world.post("f: set f1", diff, message_id="f1@x")
    world.reply(
        posted, f"Alice wrote:\n{quoted(diff)}\nThis looks right to me.\n",
        message_id="f1r@x",
    )  # fmt: skip
    world.edit("g.c", 7, "int g7 = 77;")
    shas["committer-only"] = world.commit("g: set g7")
    posted = world.post(
        "g: set g7", world.diff_of(shas["committer-only"]), message_id="g1@x"
    )
    world.reply(posted, f"Reviewed-by: {MAINT}\n", sender=MAINT, message_id="g1r@x")

    # earlier-version-reviewed: v1 changed other lines than the applied v2.
    world.edit("h.c", 0, "int h0 = 100;")
    world.edit("h.c", 1, "int h1 = 101;")
    world.edit("h.c", 2, "int h2 = 102;")
    shas["earlier"] = world.commit("h: renumber h")
    v2 = world.diff_of(shas["earlier"])
    v1 = world.variant(
        [("h.c", n, f"int h{n} = {n};") for n in (0, 1, 2)]
        + [("h.c", n, f"int h{n} = {n}00;") for n in (8, 9, 10)]
    )
    v1_id = world.post("h: renumber h", v1, message_id="h1@x")
    world.reply(v1_id, f"Reviewed-by: {BOB}\n", message_id="h1r@x")
    world.post(
        "h: renumber h", v2, version=2, changelog="v2: renumber h0-h2 instead",
        message_id="h2@x",
    )  # fmt: skip

    # reviewed by a bare "Ack." (the kernel's shorthand for Acked-by) to the cover
    # letter, which says v2 over patches that say no version (sparse's "[SPARSE v2
    # 00/28]" over "[PATCH v1 NN/28]"): the ack is of the series' patches, and
    # backs the commit's Acked-by.
    world.edit("l.c", 4, "int l4 = 44;")
    world.edit("m.c", 4, "int m4 = 44;")
    shas["acked"] = world.commit(
        f"l: set l4 and m4\n\nSigned-off-by: {ALICE}\nAcked-by: {CAROL}"
    )
    cover = world.cover("l: set l4 and m4", version=2, parts=1, message_id="l0@x")
    world.post(
        "l: set l4 and m4",
        world.diff_of(shas["acked"]),
        message_id="l1@x",
        part="1/1",
        parent=cover,
    )
    world.reply(
        cover,
        "> This series does l: set l4 and m4.\n\nAck. I only read it.\n",
        sender=CAROL,
        message_id="l0r@x",
    )

    # posted-unreviewed, not-posted, and the exempt: a revert and a version bump.
    world.edit("i.c", 4, "int i4 = 44;")
    shas["unreviewed"] = world.commit("i: set i4")
    world.post("i: set i4", world.diff_of(shas["unreviewed"]), message_id="i1@x")
    world.edit("j.c", 4, "int j4 = 44;")
    shas["not-posted"] = world.commit("j: set j4", author=MAINT)
    git(
        world.repo,
        "revert",
        "--no-edit",
        shas["not-posted"],
        env=world.env(MAINT, MAINT, 1),
    )
    shas["revert"] = git(world.repo, "rev-parse", "HEAD").strip()
    (world.repo / "VERSION").write_text("1.2.3\n")
    shas["release"] = world.commit("v1.2.3", author=MAINT, days=2, add_all=True)

    # The list's last mail comes 30 days after the commits, so they are inside its
    # dates; another list's mail, years before and after, is not this repository's
    # archive. A commit written after the last mail: the archive cannot say.
    world.announce(days=30)
    world.announce(days=-3650, list_id="other.lists.example.org")
    world.announce(days=1500, list_id="other.lists.example.org")
    world.edit("k.c", 4, "int k4 = 44;")
    shas["postdates"] = world.commit(
        f"k: set k4\n\nSigned-off-by: {ALICE}\nReviewed-by: {BOB}", days=45
    )

    return ingested(world), world.repo, shas


def ingested(world: World) -> config.Settings:
    """The world's mail as one mbox beside its repository (`list.mbox`), ingested
    into a data dir of its own; its settings."""
    mbox = world.root / "list.mbox"
    mbox.write_bytes(b"".join(world.mails))
    settings = config.resolve(data_dir=world.root / "data", env={}, home=world.root)
    ingest(settings, [str(mbox)], workers=1)
    return settings


def matched(world: World) -> tuple[config.Settings, World]:
    """The world ingested (`ingested`) and its HEAD matched, with one worker."""
    settings = ingested(world)
    match(settings, ["HEAD"], repo=world.repo, jobs=1)
    return settings, world


def linked(matched: tuple[config.Settings, World], name: str) -> LinkResult:
    """`e2g link` of the matched world's commit `name`."""
    settings, world = matched
    return link(settings, world.shas[name], repo=world.repo)
