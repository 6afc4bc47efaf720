#!/usr/bin/env python3
"""Regenerate the bundled sample: sample-repo.bundle, the archives and expected.json.

    python sample-mbox/make_sample.py [--out DIR]

Builds a fictional git repository ("frobnicator", the story is in sample_tree.py)
with real git plumbing and fixed dates, posts its patches with real `git
format-patch` output wrapped in list mail (the story is in sample_mail.py), and
writes the ground truth to expected.json. Only the standard library and the `git`
program are used. The output is byte-identical from run to run: git runs with no
user or system config, fixed identities and dates, one pack thread, and gzip
members carry no name or time.
"""

from __future__ import annotations

import argparse
import email.utils
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True  # keep sample-mbox/ free of __pycache__
sys.path.insert(0, str(HERE))

import sample_mail  # noqa: E402
import sample_tree  # noqa: E402
from sample_mailer import FormattedPatch, Ledger, Mail, OldMail  # noqa: E402
from sample_tree import COMMIT_BY_KEY, COMMITS, GRACE, Person, Tree  # noqa: E402

PULL_URL = "https://git.example.org/frob/frob.git"
GIT_VERSION_SIGNATURE = (
    "2.37.3"  # what format-patch writes after "-- ", whatever git runs
)
OUTPUTS = (
    "sample-repo.bundle",
    "frob-devel.mbox",
    "frob-net.mbox.gz",
    "pipermail/frob-users/2007-March.txt.gz",
    "expected.json",
)


# --- git ---------------------------------------------------------------------------
def git_date(moment: datetime) -> str:
    offset = moment.utcoffset()
    minutes = int(offset.total_seconds()) // 60 if offset else 0
    sign = "-" if minutes < 0 else "+"
    return f"@{int(moment.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


def identity(
    author: Person, authored: datetime, committer: Person, committed: datetime
) -> dict[str, str]:
    return {
        "GIT_AUTHOR_NAME": author.name,
        "GIT_AUTHOR_EMAIL": author.email,
        "GIT_AUTHOR_DATE": git_date(authored),
        "GIT_COMMITTER_NAME": committer.name,
        "GIT_COMMITTER_EMAIL": committer.email,
        "GIT_COMMITTER_DATE": git_date(committed),
    }


class Git:
    """Runs git in one repository with no user/system config and a fixed environment."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(path.parent),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
            "TZ": "UTC",
            "GIT_TERMINAL_PROMPT": "0",
        }
        self.blobs: dict[bytes, str] = {}

    def run(
        self, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
    ) -> bytes:
        command = [
            "git",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "tag.gpgsign=false",
            "-c",
            "core.autocrlf=false",
            "-c",
            "core.abbrev=12",
            "-c",
            "pack.threads=1",
            "-c",
            "diff.algorithm=myers",
            *args,
        ]
        done = subprocess.run(
            command,
            cwd=self.path,
            env={**self.env, **(env or {})},
            input=stdin,
            capture_output=True,
            check=False,
        )
        if done.returncode:
            raise RuntimeError(
                f"git {' '.join(args)}: {done.stderr.decode(errors='replace')}"
            )
        return done.stdout

    def text(self, *args: str, env: dict[str, str] | None = None) -> str:
        return self.run(*args, env=env).decode()

    def blob(self, content: bytes) -> str:
        if content not in self.blobs:
            self.blobs[content] = (
                self.run("hash-object", "-w", "--stdin", stdin=content).decode().strip()
            )
        return self.blobs[content]

    def write_tree(self, tree: Tree) -> str:
        index = {"GIT_INDEX_FILE": str(self.path / ".git" / "sample-index")}
        self.run("read-tree", "--empty", env=index)
        entries = "".join(
            f"100644 {self.blob(data)}\t{path}\n" for path, data in sorted(tree.items())
        )
        self.run(
            "update-index", "--add", "--index-info", stdin=entries.encode(), env=index
        )
        return self.text("write-tree", env=index).strip()

    def commit(
        self, tree: Tree, parent: str | None, message: str, env: dict[str, str]
    ) -> str:
        parents = ["-p", parent] if parent else []
        return (
            self.run(
                "commit-tree",
                self.write_tree(tree),
                *parents,
                "-F",
                "-",
                stdin=message.encode(),
                env=env,
            )
            .decode()
            .strip()
        )


class GitSources:
    """The repository: builds main, posts patches, and answers sample_mail's questions."""

    def __init__(self, git: Git) -> None:
        self.git = git
        self.shas: dict[str, str] = {}
        self.trees: dict[str, Tree] = {}
        self.parents: dict[str, str | None] = {}

    def build(self) -> None:
        parent: str | None = None
        tree: Tree = {}
        for spec in COMMITS:
            tree = sample_tree.apply_edits(tree, spec.edits)
            env = identity(spec.author, spec.authored, spec.committer, spec.committed)
            sha = self.git.commit(tree, parent, spec.applied_message(), env)
            self.shas[spec.key], self.trees[spec.key], self.parents[spec.key] = (
                sha,
                tree,
                parent,
            )
            parent = sha
        self.git.run("update-ref", "refs/heads/main", self.shas[COMMITS[-1].key])
        self.git.run("symbolic-ref", "HEAD", "refs/heads/main")
        tag_env = identity(GRACE, sample_tree.TAG_DATE, GRACE, sample_tree.TAG_DATE)
        self.git.run(
            "tag",
            "-a",
            sample_tree.TAG,
            "-F",
            "-",
            self.shas[COMMITS[-1].key],
            stdin=sample_tree.TAG_MESSAGE.encode(),
            env=tag_env,
        )

    def sha(self, key: str) -> str:
        return self.shas[key]

    def posted(self, keys: tuple[str, ...], *, early: bool) -> tuple[str, str]:
        """Commit the versions that were posted (dangling, so not bundled): (base, tip)."""
        base = self.parents[keys[0]]
        if base is None:
            raise ValueError("the root commit is never posted")
        parent_key = next(k for k, v in self.shas.items() if v == base)
        tree, tip = self.trees[parent_key], base
        for key in keys:
            spec = COMMIT_BY_KEY[key]
            edits = spec.posted_edits if early and spec.posted_edits else spec.edits
            tree = sample_tree.apply_edits(tree, edits)
            env = identity(spec.author, spec.authored, spec.author, spec.authored)
            tip = self.git.commit(tree, tip, spec.posted_message(), env)
        return base, tip

    def patches(
        self,
        keys: tuple[str, ...],
        *,
        prefix: str = "PATCH",
        early: bool = False,
        cover: tuple[Person, datetime] | None = None,
        sender: Person | None = None,
    ) -> list[FormattedPatch]:
        base, tip = self.posted(keys, early=early)
        options = [f"--subject-prefix={prefix}", f"--signature={GIT_VERSION_SIGNATURE}"]
        options += ["--cover-letter"] if cover else []
        options += [f"--from={sender.ident}"] if sender else []
        env = identity(cover[0], cover[1], cover[0], cover[1]) if cover else None
        output = self.git.text(
            "format-patch",
            "--stdout",
            "-M",
            "--binary",
            "--no-thread",
            *options,
            f"{base}..{tip}",
            env=env,
        )
        return split_format_patch(output)

    def old_style_diff(
        self, key: str, *, stamps: tuple[str, str], diff_lines: bool
    ) -> str:
        """The commit's diff as `diff -urp linux-2.6.20.orig linux-2.6.20` printed it."""
        parent = self.parents[key] or ""
        diff = self.git.text(
            "diff-tree",
            "-p",
            "--no-color",
            "--src-prefix=linux-2.6.20.orig/",
            "--dst-prefix=linux-2.6.20/",
            parent,
            self.shas[key],
        )
        lines: list[str] = []
        for line in diff.splitlines():
            if line.startswith("diff --git "):
                lines += (
                    ["diff -urp " + line.removeprefix("diff --git ")]
                    if diff_lines
                    else []
                )
            elif line.startswith("--- "):
                lines.append(f"{line}\t{stamps[0]}")
            elif line.startswith("+++ "):
                lines.append(f"{line}\t{stamps[1]}")
            elif not line.startswith("index "):
                lines.append(line)
        return "\n".join(lines) + "\n"

    def request_pull(self, base: str, tip: str) -> str:
        """Real `git request-pull` output; the local path then becomes the public URL."""
        if (
            self.shas[tip]
            != self.git.text("rev-parse", f"{sample_tree.TAG}^{{commit}}").strip()
        ):
            raise ValueError("the pull request must end at the tag")
        text = self.git.text(
            "request-pull", self.shas[base], str(self.git.path), sample_tree.TAG
        )
        return text.replace(f"  {self.git.path} ", f"  {PULL_URL} ")


def split_format_patch(output: str) -> list[FormattedPatch]:
    """Split `format-patch --stdout` into messages: headers, body and the whole text."""
    starts = [
        m.start()
        for m in re.finditer(
            r"^From [0-9a-f]{40} Mon Sep 17 00:00:00 2001$", output, flags=re.MULTILINE
        )
    ]
    patches = []
    for start, end in zip(starts, [*starts[1:], len(output)], strict=True):
        text = output[start:end].rstrip("\n") + "\n"
        head, body = text.split("\n\n", 1)
        headers: list[tuple[str, str]] = []
        for line in head.splitlines()[1:]:
            if line[:1] in (" ", "\t"):
                headers[-1] = (headers[-1][0], headers[-1][1] + "\n" + line)
            else:
                name, value = line.split(": ", 1)
                headers.append((name, value))
        patches.append(FormattedPatch(tuple(headers), body, text))
    return patches


# --- archives ----------------------------------------------------------------------
def asctime(moment: datetime) -> str:
    return f"{moment:%a %b} {moment.day:2d} {moment:%H:%M:%S %Y}"


def mboxrd_quote(data: bytes) -> bytes:
    """mboxrd: every line that starts with zero or more '>' and 'From ' gains a '>'."""
    return re.sub(rb"(?m)^(>*From )", rb">\1", data)


def queue_id(*parts: str) -> str:
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest().upper()
    return "4M" + digest[:10]


def list_copy(mail: Mail, list_name: str) -> bytes:
    """One list's copy of a mail, as its mbox archive holds it (From_ line first)."""
    received = mail.received.astimezone(UTC)
    domain = mail.envelope.rsplit("@", 1)[-1]
    host_number = int(hashlib.sha256(domain.encode()).hexdigest(), 16) % 250 + 2
    address = f"{list_name}@lists.example.org"
    headers = [
        (
            "Received",
            f"from mail.{domain} (mail.{domain} [192.0.2.{host_number}])\n"
            f"\tby lists.example.org (Postfix) with ESMTPS id "
            f"{queue_id(mail.message_id or mail.subject, list_name)}\n"
            f"\tfor <{address}>; {email.utils.format_datetime(received)} (UTC)",
        )
    ]
    headers += mail.headers
    headers += [
        ("List-Id", f"<{list_name}.lists.example.org>"),
        ("List-Archive", f"<https://lists.example.org/pipermail/{list_name}/>"),
        ("List-Post", f"<mailto:{address}>"),
        ("Sender", f'"{list_name}" <{list_name}-bounces@lists.example.org>'),
    ]
    head = "".join(f"{name}: {value}\n" for name, value in headers).encode("ascii")
    message = head + b"\n" + mail.body.rstrip(b"\n") + b"\n"
    return (
        f"From {mail.envelope} {asctime(received)}\n".encode()
        + mboxrd_quote(message)
        + b"\n"
    )


def mbox(mails: Iterable[Mail], list_name: str) -> bytes:
    chosen = sorted(
        (m for m in mails if list_name in m.lists), key=lambda m: m.received
    )
    return b"".join(list_copy(mail, list_name) for mail in chosen)


def obfuscate(text: str) -> str:
    """pipermail's address hiding: user@host -> user at host."""
    return re.sub(r"([\w.+-]+)@([\w-]+(?:\.[\w-]+)+)", r"\1 at \2", text)


def pipermail_entry(mail: OldMail) -> bytes:
    references: list[str] = []
    parent = mail.parent
    while parent is not None:  # iterative, oldest first
        references.insert(0, parent.message_id)
        parent = parent.parent
    lines = [
        f"From {obfuscate(mail.sender.email)}  {asctime(mail.sent.astimezone(UTC))}",
        f"From: {obfuscate(mail.sender.email)} ({mail.sender.name})",
        f"Date: {email.utils.format_datetime(mail.sent)}",
        f"Subject: {mail.subject}",
    ]
    if references:
        lines += [
            f"In-Reply-To: <{references[-1]}>",
            "References: " + "\n\t".join(f"<{ref}>" for ref in references),
        ]
    lines.append(f"Message-ID: <{mail.message_id}>")
    body = mboxrd_quote(obfuscate(mail.body).encode())
    return ("\n".join(lines) + "\n\n").encode() + body.rstrip(b"\n") + b"\n\n"


def gzip_bytes(data: bytes) -> bytes:
    """gzip with no file name and mtime 0, so the same input gives the same bytes."""
    return gzip.compress(data, compresslevel=9, mtime=0)


# --- expected.json -----------------------------------------------------------------
def expected(
    sources: GitSources, ledger: Ledger, counts: dict[str, int], cross_posted: list[str]
) -> dict[str, object]:
    commits = []
    for spec in COMMITS:
        postings = [
            (mid, match) for key, mid, match in ledger.postings if key == spec.key
        ]
        applied = [mid for mid, match in postings if match != "earlier-version"]
        link = next(
            (t.split("/r/", 1)[1] for t in spec.trailers if t.startswith("Link:")), None
        )
        commits.append(
            {
                "sha": sources.sha(spec.key),
                "subject": spec.subject,
                "key": spec.key,
                "author": spec.author.ident,
                "postings": [mid for mid, _ in postings],
                "matches": dict(postings),
                "applied_posting": applied[-1] if applied else None,
                "covers": [mid for keys, mid in ledger.covers if spec.key in keys],
                "link_trailer": link,
            }
        )
    return {
        "about": "Ground truth for the bundled sample; generated by make_sample.py.",
        "demo_commit": sources.sha("net-ethtool"),
        "repository": {
            "bundle": "sample-repo.bundle",
            "branch": "main",
            "commits": len(COMMITS),
            "tag": sample_tree.TAG,
        },
        "archives": {name: {"messages": count} for name, count in counts.items()},
        "match_kinds": {
            "exact": "the posted diff is the commit's diff (equal git patch-id --stable)",
            "edited": "the maintainer changed a line when applying it: patch-id differs",
            "earlier-version": "an earlier version of the patch (v1): patch-id differs",
            "old-style": "plain diff -u with linux-2.6.20.orig/ paths: patch-id differs",
        },
        "commits": commits,
        "cross_posted": cross_posted,
        "cases": ledger.cases,
    }


# --- main --------------------------------------------------------------------------
def generate(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="frob-sample-") as scratch:
        repo = Path(scratch) / "frobnicator"
        repo.mkdir()
        git = Git(repo)
        git.run("init", "-q", "--initial-branch=main")
        sources = GitSources(git)
        sources.build()
        ledger = Ledger()
        mails = sample_mail.frob_devel_and_net(sources, ledger)
        old_mails = sample_mail.frob_users_2007(sources, ledger)
        files = {
            "frob-devel.mbox": mbox(mails, "frob-devel"),
            "frob-net.mbox.gz": gzip_bytes(mbox(mails, "frob-net")),
            "pipermail/frob-users/2007-March.txt.gz": gzip_bytes(
                b"".join(pipermail_entry(m) for m in old_mails)
            ),
        }
        counts = {
            "frob-devel.mbox": sum("frob-devel" in m.lists for m in mails),
            "frob-net.mbox.gz": sum("frob-net" in m.lists for m in mails),
            "pipermail/frob-users/2007-March.txt.gz": len(old_mails),
        }
        cross = [m.message_id for m in mails if len(m.lists) > 1 and m.message_id]
        truth = expected(sources, ledger, counts, cross)
        files["expected.json"] = (
            json.dumps(truth, indent=2, ensure_ascii=False) + "\n"
        ).encode()
        bundle = Path(scratch) / "sample-repo.bundle"
        git.run("bundle", "create", "-q", str(bundle), "--all")
        files["sample-repo.bundle"] = bundle.read_bytes()
    for name in OUTPUTS:
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(files[name])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=HERE, help="output directory (default: %(default)s)"
    )
    arguments = parser.parse_args(argv)
    generate(arguments.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
