"""The bundled sample (sample-mbox/): it regenerates byte for byte and tells the truth.

The archives, the repository bundle and expected.json are checked against each other
with the standard library and real git, so that tests and the README demo can rely on
expected.json as ground truth.
"""

from __future__ import annotations

import email.message
import email.utils
import gzip
import json
import mailbox
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SAMPLE = Path(__file__).resolve().parents[1] / "sample-mbox"
EXPECTED: dict[str, Any] = json.loads(
    (SAMPLE / "expected.json").read_text(encoding="utf-8")
)
ARCHIVES = tuple(EXPECTED["archives"])
GENERATED = ("sample-repo.bundle", "expected.json", *ARCHIVES)
SUBJECT_PREFIXES = re.compile(r"^(?:Re:\s*)?(?:\[[^\]]*\]\s*)+")


def git(repo: Path, *args: str, stdin: bytes = b"") -> bytes:
    command = ["git", "-c", "core.autocrlf=false", *args]
    return subprocess.run(
        command, cwd=repo, input=stdin, capture_output=True, check=True
    ).stdout


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("regenerated")
    script = SAMPLE / "make_sample.py"
    subprocess.run(
        [sys.executable, str(script), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    return out


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("clone") / "sample-repo"
    bundle = SAMPLE / "sample-repo.bundle"
    subprocess.run(
        ["git", "clone", "-q", str(bundle), str(target)],
        check=True,
        capture_output=True,
    )
    return target


@pytest.fixture(scope="module")
def messages(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, list[email.message.Message]]:
    """Every archive split with the standard library's mailbox.mbox."""
    scratch = tmp_path_factory.mktemp("archives")
    result: dict[str, list[email.message.Message]] = {}
    for name in ARCHIVES:
        data = (SAMPLE / name).read_bytes()
        plain = scratch / Path(name).name.removesuffix(".gz")
        plain.write_bytes(gzip.decompress(data) if name.endswith(".gz") else data)
        found: list[email.message.Message] = list(mailbox.mbox(plain, create=False))
        result[name] = found
    return result


def message_ids(found: list[email.message.Message]) -> list[str]:
    return [str(m["Message-ID"]).strip("<>") for m in found if m["Message-ID"]]


def by_id(
    messages: dict[str, list[email.message.Message]],
) -> dict[str, email.message.Message]:
    return {
        str(m["Message-ID"]).strip("<>"): m
        for found in messages.values()
        for m in found
        if m["Message-ID"]
    }


@pytest.mark.parametrize("name", GENERATED)
def test_regenerates_byte_identical(regenerated: Path, name: str) -> None:
    assert (regenerated / name).read_bytes() == (SAMPLE / name).read_bytes()


def test_generates_exactly_the_committed_files(regenerated: Path) -> None:
    made = {
        str(p.relative_to(regenerated)) for p in regenerated.rglob("*") if p.is_file()
    }
    assert made == set(GENERATED)


def test_sample_is_small() -> None:
    sizes = sum((SAMPLE / name).stat().st_size for name in GENERATED)
    assert sizes < 300_000


@pytest.mark.parametrize("name", ARCHIVES)
def test_archive_splits_into_expected_count(
    messages: dict[str, list[email.message.Message]], name: str
) -> None:
    assert len(messages[name]) == EXPECTED["archives"][name]["messages"]
    assert len(messages[name]) >= 7


def test_cross_posts_are_in_both_lists(
    messages: dict[str, list[email.message.Message]],
) -> None:
    devel = message_ids(messages["frob-devel.mbox"])
    net = message_ids(messages["frob-net.mbox.gz"])
    cross = EXPECTED["cross_posted"]
    assert EXPECTED["cases"]["cross_post"]["message_id"] in cross
    assert cross and all(mid in devel and mid in net for mid in cross)
    list_ids = {str(m["List-Id"]) for m in messages["frob-net.mbox.gz"]}
    assert list_ids == {"<frob-net.lists.example.org>"}


def test_message_ids_are_unique_per_archive(
    messages: dict[str, list[email.message.Message]],
) -> None:
    for found in messages.values():
        ids = message_ids(found)
        assert len(ids) == len(set(ids))
    assert sum(m["Message-ID"] is None for m in messages["frob-devel.mbox"]) == 1


def test_bundle_clones_with_expected_commits(clone: Path) -> None:
    count = int(git(clone, "rev-list", "--count", "HEAD"))
    assert count == EXPECTED["repository"]["commits"] == len(EXPECTED["commits"])
    tag = EXPECTED["repository"]["tag"]
    assert git(clone, "rev-parse", f"{tag}^{{commit}}") == git(
        clone, "rev-parse", "HEAD"
    )
    assert (
        (clone / "drivers" / "frob" / "firmware.bin").read_bytes().startswith(b"FROBFW")
    )


def test_expected_shas_and_subjects_exist_in_bundle(clone: Path) -> None:
    for commit in EXPECTED["commits"]:
        subject = git(clone, "log", "-1", "--format=%s", commit["sha"]).decode().strip()
        assert subject == commit["subject"]
    shas = {commit["sha"] for commit in EXPECTED["commits"]}
    assert EXPECTED["demo_commit"] in shas


def test_every_posting_carries_its_commit_subject(
    messages: dict[str, list[email.message.Message]],
) -> None:
    index = by_id(messages)
    for commit in EXPECTED["commits"]:
        for message_id in commit["postings"]:
            subject = str(index[message_id]["Subject"])
            assert not subject.startswith("Re:")
            assert SUBJECT_PREFIXES.sub("", subject) == commit["subject"]
        for message_id in commit["covers"]:
            assert re.match(r"\[PATCH[^\]]* 0/\d+\]", str(index[message_id]["Subject"]))


def diff_text(message: email.message.Message) -> str:
    """The decoded text of the part that carries the diff (inline or attached)."""
    for part in message.walk():
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            text = payload.decode(part.get_content_charset() or "utf-8")
            if "\ndiff --git " in text:
                return text
    raise AssertionError(f"no diff in {message['Message-ID']}")


def patch_id(repo: Path, diff: bytes) -> str:
    output = git(repo, "patch-id", "--stable", stdin=diff).decode().split()
    return output[0] if output else ""


def test_patch_ids_agree_with_match_kinds(
    clone: Path, messages: dict[str, list[email.message.Message]]
) -> None:
    index = by_id(messages)
    checked = set()
    for commit in EXPECTED["commits"]:
        commit_diff = git(
            clone, "diff-tree", "-p", "-M", "--full-index", "--binary", commit["sha"]
        )
        expected_id = patch_id(clone, commit_diff)
        for message_id, match in commit["matches"].items():
            if match == "old-style":
                continue
            mail_id = patch_id(clone, diff_text(index[message_id]).encode())
            assert mail_id, message_id
            assert (mail_id == expected_id) == (match == "exact"), message_id
            checked.add(match)
    assert checked == {"exact", "edited", "earlier-version"}


def test_negative_commits_and_link_to_a_discussion(
    messages: dict[str, list[email.message.Message]],
) -> None:
    unposted = [c for c in EXPECTED["commits"] if not c["postings"]]
    assert len(unposted) == 2
    linked = [c for c in unposted if c["link_trailer"]]
    assert len(linked) == 1
    target = by_id(messages)[linked[0]["link_trailer"]]
    assert "diff --git" not in str(target.get_payload())
    assert linked[0]["link_trailer"] == EXPECTED["cases"]["discussion"]["message_id"]


def test_cases_are_in_their_archives(
    messages: dict[str, list[email.message.Message]],
) -> None:
    for name, case in EXPECTED["cases"].items():
        found = messages[case["archive"]]
        if case["message_id"] is None:
            assert any(
                m["Message-ID"] is None and m["Subject"] == case["subject"]
                for m in found
            )
        else:
            assert case["message_id"] in message_ids(found), name


def test_odd_headers_are_really_there(
    messages: dict[str, list[email.message.Message]],
) -> None:
    index = by_id(messages)
    cases = EXPECTED["cases"]
    ancient = index[cases["date_1970"]["message_id"]]
    assert ancient["Date"] == "Thu, 1 Jan 1970 00:00:00 +0000"
    received = email.utils.parsedate_to_datetime(
        str(ancient["Received"]).rsplit(";", 1)[1]
    )
    assert received.year == 2022
    assert (
        email.utils.parsedate_to_datetime(
            str(index[cases["date_2040"]["message_id"]]["Date"])
        ).year
        == 2040
    )
    assert "=?UTF-8?B?" in str(index[cases["rfc2047_from"]["message_id"]]["From"])
    assert "via frob-devel" in str(index[cases["dmarc_from"]["message_id"]]["From"])
    assert index[cases["dmarc_from"]["message_id"]]["X-Original-From"]
    assert index[cases["latin1"]["message_id"]].get_content_charset() == "iso-8859-1"
    assert (
        index[cases["quoted_printable"]["message_id"]]["Content-Transfer-Encoding"]
        == "quoted-printable"
    )
    assert (
        index[cases["base64_attachment"]["message_id"]].get_content_type()
        == "multipart/mixed"
    )
    forwarded = index[cases["in_body_from"]["message_id"]]
    assert str(forwarded.get_payload()).startswith("From: Chen Wei")


def test_mboxrd_quotes_from_lines() -> None:
    raw = (SAMPLE / "frob-devel.mbox").read_bytes()
    assert b"\n>From the disassembly" in raw
    assert not re.search(rb"\n\nFrom (?!\S+@\S+ \w{3} \w{3} [ \d]\d )", raw)
    pipermail = gzip.decompress(
        (SAMPLE / "pipermail/frob-users/2007-March.txt.gz").read_bytes()
    )
    assert pipermail.startswith(b"From hal at example.org  Thu Mar  1 ")
    assert b"linux-2.6.20.orig/drivers/frob/frob.c" in pipermail


def test_readme_documents_every_case() -> None:
    readme = (SAMPLE / "README.md").read_text(encoding="utf-8")
    for case in EXPECTED["cases"].values():
        assert (case["message_id"] or case["subject"]) in readme
    for commit in EXPECTED["commits"]:
        assert commit["sha"][:12] in readme
