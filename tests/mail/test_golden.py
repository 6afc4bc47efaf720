"""parse_message on the team's own test mails (tests/data/mail), against golden JSON.

Every tests/data/mail/NAME.eml is parsed and its result, serialised by `to_json`,
must equal tests/data/golden/NAME.json. Regenerate the goldens after an intended
parser change with `pytest tests/mail --update-golden` (or E2G_UPDATE_GOLDEN=1) and
review the diff. The targeted tests below pin what each case is about, so that a
golden regenerated without reading it cannot hide a regression; the hypothesis test
mutates the same mails and checks that the parser never raises and stays bounded.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import time
from datetime import UTC, datetime
from enum import Enum
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from e2g.mail.message import parse_message
from e2g.model import (
    MAX_ADDRESS,
    MAX_BODY,
    MAX_DIFF,
    MAX_FILES,
    MAX_MESSAGE_ID,
    MAX_NAME,
    MAX_REFERENCES,
    MAX_SUBJECT,
    Address,
    DateSource,
    FileStatus,
    Kind,
    Trailer,
)
from e2g.model.mail import Malformed, Message, Origin, RawMessage

DATA = Path(__file__).resolve().parents[1] / "data"
MAIL_DIR = DATA / "mail"
GOLDEN_DIR = DATA / "golden"
NOW = datetime(2026, 1, 15, tzinfo=UTC)  # parse_message never reads the clock
MAX_STRING = 200  # longer strings go into a golden as head + length + digest
MAX_MAIL_SIZE = 4096
BIG_ON_PURPOSE = {"44-broken-huge-headers"}  # size is the point of these

MAILS = sorted(MAIL_DIR.glob("*.eml"))
STEMS = [path.stem for path in MAILS]


# --- serialising a parse result -------------------------------------------------------


def _bounded(text: str) -> object:
    if len(text) <= MAX_STRING:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return {"head": text[:MAX_STRING], "length": len(text), "sha256": digest}


def to_json(value: object) -> object:
    """A JSON-able, deterministic view of a parse result.

    Dataclasses and named tuples are walked field by field in declaration order
    (dataclasses.fields, _fields), so a field added to the model shows up in every
    golden without a change here.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: to_json(getattr(value, field.name))
            for field in dataclasses.fields(value)
        }
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: to_json(getattr(value, name)) for name in value._fields}
    if isinstance(value, Enum):  # before str: the model's enums are StrEnums
        return to_json(value.value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str):
        return _bounded(value)
    if isinstance(value, bytes):
        return {"bytes": len(value), "sha256": hashlib.sha256(value).hexdigest()[:16]}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    if isinstance(value, (set, frozenset)):
        items = [to_json(item) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, dict):
        return {str(key): to_json(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, float):
        return round(value, 6)
    if value is None or isinstance(value, (bool, int)):
        return value
    raise TypeError(f"to_json: no rule for {type(value).__name__}: {value!r}")


def dumps(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def parse_file(path: Path) -> Message | Malformed:
    raw = RawMessage(path.read_bytes(), Origin(path.name, "0"))
    return parse_message(raw, now=NOW)


def golden_view(path: Path) -> object:
    parsed = parse_file(path)
    view = to_json(parsed)
    assert isinstance(view, dict)
    return {"result": type(parsed).__name__, **view}


@cache
def parse(stem: str) -> Message | Malformed:
    return parse_file(MAIL_DIR / f"{stem}.eml")


def message(stem: str) -> Message:
    parsed = parse(stem)
    assert isinstance(parsed, Message), parsed
    return parsed


# --- goldens ----------------------------------------------------------------------------


def test_there_are_mails() -> None:
    assert len(MAILS) >= 20


@pytest.mark.parametrize("path", MAILS, ids=STEMS)
def test_golden(path: Path, update_golden: bool) -> None:
    golden = GOLDEN_DIR / f"{path.stem}.json"
    actual = dumps(golden_view(path))
    if update_golden:
        GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
        if not golden.is_file() or golden.read_text(encoding="utf-8") != actual:
            golden.write_text(actual, encoding="utf-8")
        return
    if not golden.is_file():
        pytest.fail(
            f"no golden for {path.name}: run `pytest tests/mail --update-golden` "
            "(or E2G_UPDATE_GOLDEN=1) and review the new file"
        )
    expected = golden.read_text(encoding="utf-8")
    if json.loads(expected) != json.loads(actual):
        diff = "\n".join(
            difflib.unified_diff(
                dumps(json.loads(expected)).splitlines(),
                actual.splitlines(),
                f"golden/{golden.name}",
                f"parse_message(mail/{path.name})",
                lineterm="",
            )
        )
        pytest.fail(
            f"{path.name} parses differently from its golden:\n{diff}\n\n"
            "If the change is intended: `pytest tests/mail --update-golden` "
            "(or E2G_UPDATE_GOLDEN=1), then review the golden diff.",
            pytrace=False,
        )


def test_goldens_are_stable() -> None:
    """Two parses serialise to the same text (no ordering or clock dependence)."""
    for path in MAILS:
        assert dumps(golden_view(path)) == dumps(golden_view(path)), path.name


def test_no_orphans(update_golden: bool) -> None:
    mails = {path.stem for path in MAILS}
    goldens = {path.stem for path in GOLDEN_DIR.glob("*.json")}
    if update_golden:
        for stem in goldens - mails:
            (GOLDEN_DIR / f"{stem}.json").unlink()
        goldens &= mails
    assert not mails - goldens, f"mails without a golden: {sorted(mails - goldens)}"
    assert not goldens - mails, f"goldens without a mail: {sorted(goldens - mails)}"
    assert not [p.name for p in MAIL_DIR.iterdir() if p.suffix != ".eml"]
    assert not [p.name for p in GOLDEN_DIR.iterdir() if p.suffix != ".json"]


def test_mails_stay_small() -> None:
    big = {
        path.stem
        for path in MAILS
        if path.stat().st_size >= MAX_MAIL_SIZE and path.stem not in BIG_ON_PURPOSE
    }
    assert not big, f"keep test mails under {MAX_MAIL_SIZE} bytes: {sorted(big)}"


# --- targeted assertions: what each mail is there for -----------------------------------

# `git patch-id --stable` (git 2.39.5) of each mail's decoded body; None: git prints none.
GIT_PATCH_IDS = {
    "01-format-patch": "627dbc9553a69b62e582f93dce8f7500c1ad19eb",
    "04-pull-request-with-diff": "627dbc9553a69b62e582f93dce8f7500c1ad19eb",
    "07-rename-only": "1f25f59d6dbc6c26a2363b0a0ac5e40c7accc805",
    "08-rename-with-diff": "57b8b94f8b002583a457117c43affd2b3887faf7",
    "09-empty-new-file": "8519f8fd4795329663ea98de8016c6a57ac478c3",
    "10-mode-change": "446851981f53cf4a2559a267cb0e4828abf6bbf5",
    "11-git-binary-patch": "413ab0ac7fa3547993ca910e4efdff8bd78d9612",
    "12-binary-files-differ": "f36555d7a3a0a228f5d2f0fc42190dcab8fbd9d5",
    "13-cvs-index-diff": "13956e8f0f1c4d07578d9c134dd7aedeb3ae9b4a",
    "14-quilt-index-diff": None,  # no "diff " line at all: git prints no id
    "15-no-newline-at-eof": "d72ffb44a27cf5ad0cab7a11fdb99db0c9b52c19",
    "16-multipart-alternative-patch": "627dbc9553a69b62e582f93dce8f7500c1ad19eb",
    "18-attachment-x-patch": "627dbc9553a69b62e582f93dce8f7500c1ad19eb",
    "19-quoted-printable": "34e4a0b4c9c6ad58ce557393db555e1503c30586",
    "20-base64-body": "ec289ec489beaed29aaf46121349ed5c31fb15c2",
    "22-bogus-charset": "8aa4e97ec4904c5da84d757bd53049b836855539",
    "23-rfc2047-headers": "2973c45c763e61abcf03a3309d7b67255a77b1df",
    "24-raw-8bit-headers": "b34c6014a1a8c03caa95a08521a14c50a188a265",
    "28-dmarc-list-address": "da1d987e966d14de27ed0c35259fd6b1e3f0000f",
    "29-no-subject": "ec289ec489beaed29aaf46121349ed5c31fb15c2",
    "30-crlf-line-endings": "ec289ec489beaed29aaf46121349ed5c31fb15c2",
    "41-broken-nul-charset": "03e8789762b181874f146a060b7f290690df8817",
}


@pytest.mark.parametrize("stem", sorted(GIT_PATCH_IDS))
def test_patch_id_is_gits(stem: str) -> None:
    parsed = message(stem)
    assert parsed.kind in (Kind.PATCH, Kind.PULL)
    assert parsed.patch is not None
    assert parsed.patch.patch_id == GIT_PATCH_IDS[stem]


def files(stem: str) -> list[tuple[str, str | None, FileStatus, bool, int, int]]:
    patch = message(stem).patch
    assert patch is not None
    return [
        (f.path, f.old_path, f.status, f.binary, f.added, f.removed)
        for f in patch.files
    ]


def diff_of(stem: str) -> str:
    patch = message(stem).patch
    assert patch is not None
    return patch.diff


def test_format_patch() -> None:
    parsed = message("01-format-patch")
    assert parsed.kind is Kind.PATCH
    assert parsed.message_id == "20240203081500.4711-1-alice@example.org"
    assert not parsed.synthetic_id
    assert parsed.author == Address("Alice Example", "alice@example.org")
    assert parsed.date == datetime(2024, 2, 3, 8, 15, tzinfo=UTC)
    assert parsed.date_source is DateSource.HEADER
    assert parsed.list_id == "frob-devel.lists.example.org"
    assert parsed.to == (
        "frob-devel@lists.example.org",
        "bruno@example.net",
        "carla@example.com",
    )
    assert parsed.subject.is_patch_tag and parsed.subject.version == 1
    assert (
        parsed.subject.title == "frob: queue: tolerate a NULL queue in frob_queue_len()"
    )
    assert parsed.body.startswith("Callers in the ring code pass NULL")
    assert parsed.trailers == (
        Trailer("Signed-off-by", "Alice Example <alice@example.org>"),
    )
    assert files("01-format-patch") == [
        ("src/frob/queue.c", None, FileStatus.MODIFIED, False, 2, 0)
    ]
    diff = diff_of("01-format-patch")
    assert diff.startswith("diff --git a/src/frob/queue.c b/src/frob/queue.c\n")
    assert "2.39.5" not in diff  # the signature is not part of the diff


PULLS = {
    "02-pull-request": (
        "git://git.example.org/pub/scm/frob/frob.git",
        "tags/frob-fixes-2024-02-10",
    ),
    "03-pull-request-wrapped-url": (
        "git://git.example.org/pub/scm/frob/people/alice/frob-next.git",
        "ring-cleanups",
    ),
    "04-pull-request-with-diff": (
        "https://git.example.org/pub/scm/frob/frob.git",
        "queue-fix",
    ),
    "05-pull-request-git-ssh": (
        "git+ssh://git@git.example.org/frob/frob-docs.git",
        "for-frank",
    ),
    "06-pull-request-https-trailing-space": (
        "https://git.example.org/pub/scm/frob/frob-soc.git/",
        "tags/frob-soc-2024.03",
    ),
}


@pytest.mark.parametrize("stem", sorted(PULLS))
def test_pull_requests(stem: str) -> None:
    parsed = message(stem)
    assert parsed.kind is Kind.PULL
    assert parsed.pull is not None
    assert (parsed.pull.url, parsed.pull.ref) == PULLS[stem]
    assert parsed.body
    if stem == "04-pull-request-with-diff":
        assert files(stem) == [
            ("src/frob/queue.c", None, FileStatus.MODIFIED, False, 2, 0)
        ]
    else:
        assert parsed.patch is None


def test_rename_only() -> None:
    assert files("07-rename-only") == [
        ("docs/NOTES.txt", "docs/notes.txt", FileStatus.RENAMED, False, 0, 0),
        ("src/frob/ringbuf.h", "src/frob/ring.h", FileStatus.RENAMED, False, 0, 0),
    ]
    diff = diff_of("07-rename-only")
    assert diff.count("\nrename from ") == 2 and diff.count("\nrename to ") == 2


def test_rename_with_content_change() -> None:
    assert files("08-rename-with-diff") == [
        ("src/frob/fifo.c", "src/frob/queue.c", FileStatus.RENAMED, False, 1, 1),
        ("tools/make-frob.sh", "tools/build.sh", FileStatus.RENAMED, False, 0, 0),
    ]
    assert "\n-\tq->head = NULL;\n+\tq->head = q->tail = NULL;\n" in diff_of(
        "08-rename-with-diff"
    )
    assert message("08-rename-with-diff").subject.version == 2


def test_empty_new_file_and_mode_change() -> None:
    assert files("09-empty-new-file") == [
        ("include/frob/empty.h", None, FileStatus.ADDED, False, 0, 0)
    ]
    assert files("10-mode-change") == [
        ("tools/build.sh", None, FileStatus.MODIFIED, False, 0, 0)
    ]
    assert "\nold mode 100644\nnew mode 100755" in diff_of("10-mode-change")


def test_binary_patches() -> None:
    assert files("11-git-binary-patch") == [
        ("art/pixel.bmp", None, FileStatus.ADDED, True, 0, 0),
        ("tools/quit.sh", None, FileStatus.ADDED, False, 2, 0),
    ]
    diff = diff_of("11-git-binary-patch")
    assert diff.startswith("diff --git a/art/pixel.bmp b/art/pixel.bmp\n")
    assert "GIT binary patch\nliteral 70\n" in diff and "\nliteral 0\n" in diff
    assert "diff --git a/tools/quit.sh b/tools/quit.sh\n" in diff
    assert files("12-binary-files-differ") == [
        ("art/pixel.bmp", None, FileStatus.MODIFIED, True, 0, 0)
    ]
    assert "Binary files a/art/pixel.bmp and b/art/pixel.bmp differ" in diff_of(
        "12-binary-files-differ"
    )


def test_index_diffs() -> None:
    assert files("13-cvs-index-diff") == [
        ("src/frob/ring.c", None, FileStatus.MODIFIED, False, 1, 1),
        ("src/frob/ring.h", None, FileStatus.MODIFIED, False, 1, 0),
    ]
    assert diff_of("13-cvs-index-diff").startswith("Index: src/frob/ring.c\n")
    assert message("13-cvs-index-diff").date == datetime(2004, 2, 9, 20, 20, tzinfo=UTC)
    # quilt's "frob-2.6.orig/" and "frob-2.6/" prefixes are normalised away
    assert files("14-quilt-index-diff") == [
        ("src/frob/fifo.c", None, FileStatus.MODIFIED, False, 1, 0)
    ]
    assert diff_of("14-quilt-index-diff").startswith("Index: frob-2.6/src/frob/fifo.c")
    quilt = message("14-quilt-index-diff").subject
    assert (quilt.part, quilt.total, quilt.is_patch_tag) == (3, 7, True)


def test_no_newline_at_end_of_file() -> None:
    parsed = message("15-no-newline-at-eof")
    diff = diff_of("15-no-newline-at-eof")
    assert diff.count("\\ No newline at end of file") == 2
    assert diff.rstrip("\n").endswith("\\ No newline at end of file")
    assert "mailing list" not in diff and "____" not in diff  # list footer cut off
    assert not parsed.body.rstrip().endswith("\\ No newline at end of file")
    assert files("15-no-newline-at-eof") == [
        ("docs/VERSION", None, FileStatus.MODIFIED, False, 3, 2)
    ]


def test_multipart_alternative_skips_html() -> None:
    patch = message("16-multipart-alternative-patch")
    assert patch.kind is Kind.PATCH
    assert patch.body.startswith("Callers may pass NULL; return 0 for them.")
    assert "<div" not in patch.body and "<div" not in diff_of(
        "16-multipart-alternative-patch"
    )
    reply = message("17-multipart-alternative-reply")
    assert reply.kind is Kind.REPLY and reply.patch is None
    assert reply.body.startswith("Which callers pass NULL?")
    assert "<div" not in reply.body and "<br>" not in reply.body
    assert reply.in_reply_to == "CAFrob0001-mira@mail.example.com"


def test_patch_attachment() -> None:
    parsed = message("18-attachment-x-patch")
    assert parsed.kind is Kind.PATCH
    assert parsed.author == Address("Pavel Relay", "pavel@example.com")
    assert parsed.patch_author == Address("Olga Writer", "olga@example.org")
    assert parsed.body.startswith("Sending Olga's patch on her behalf")
    assert files("18-attachment-x-patch") == [
        ("src/frob/queue.c", None, FileStatus.MODIFIED, False, 2, 0)
    ]


def test_transfer_encodings() -> None:
    qp = message("19-quoted-printable")
    assert "résumé" in qp.body and "(mode=l, mode=r)" in qp.body
    assert "=3D" not in qp.body and "=\n" not in qp.body
    diff = diff_of("19-quoted-printable")
    assert "value[0] == 'l' ? FROB_MODE_LIFO : FROB_MODE_FIFO);" in diff
    assert (
        '%s=%s, ignored (see frob-config(5) for the list of options)\\n", key' in diff
    )
    assert files("19-quoted-printable") == [
        ("src/frob/config.c", None, FileStatus.MODIFIED, False, 2, 1)
    ]
    b64 = message("20-base64-body")
    assert b64.body.startswith("My mailer base64-encodes every message \u2014 sorry")
    assert files("20-base64-body") == [
        ("docs/usage.md", None, FileStatus.MODIFIED, False, 1, 1)
    ]


def test_charsets() -> None:
    latin = message("21-latin1-body")
    assert latin.author == Address("Jörg Müller", "joerg@example.org")
    assert latin.body.startswith("Grüße,")
    assert "+Café crème: 3 francs" in diff_of("21-latin1-body")
    assert latin.trailers == (
        Trailer("Signed-off-by", "Jörg Müller <joerg@example.org>"),
    )
    bogus = message("22-bogus-charset")  # an unknown charset name: UTF-8 guessed
    assert "naïve" in bogus.body
    assert "+/* A naïve ring buffer. */" in diff_of("22-bogus-charset")


def test_encoded_and_raw_headers() -> None:
    encoded = message("23-rfc2047-headers")
    assert encoded.author == Address("Zoë Ångström", "zoe@example.org")
    assert encoded.subject.title == "frob: résumé support in ringbuf"
    info = encoded.subject
    assert (info.version, info.part, info.total) == (3, 2, 4)
    assert encoded.to == (
        "frob-devel@lists.example.org",
        "rene@example.org",
        "tom@example.org",
    )
    assert encoded.in_reply_to == "cover.1708423871.git.zoe@example.org"
    raw = message("24-raw-8bit-headers")
    assert raw.author == Address("Łukasz Wójcik", "lukasz@example.org")
    assert raw.subject.title == "CREDITS: add Łukasz Wójcik"
    assert "strange@example.org" in raw.to
    for text in (raw.subject.raw, raw.author.name, encoded.subject.raw):
        assert text.isprintable()


def test_cover_letter() -> None:
    parsed = message("25-cover-letter")
    assert parsed.kind is Kind.COVER and parsed.patch is None
    assert (parsed.subject.part, parsed.subject.total) == (0, 3)
    assert parsed.message_id == "cover.1708534800.git.alice@example.org"


def test_reply_with_review_trailers() -> None:
    parsed = message("26-reply-reviewed-by")
    assert parsed.kind is Kind.REPLY and parsed.patch is None
    # the quoted Signed-off-by is the patch's, not this reply's
    assert parsed.trailers == (
        Trailer("Reviewed-by", "Hana Review <hana@example.org>"),
        Trailer("Tested-by", "Hana Review <hana@example.org>"),
    )
    assert parsed.in_reply_to == "20240221170000.1000-2-alice@example.org"
    assert parsed.references == (
        "cover.1708534800.git.alice@example.org",
        "20240221170000.1000-2-alice@example.org",
    )
    assert parsed.subject.is_reply and parsed.subject.part == 1


def test_dmarc_rewritten_from() -> None:
    via = message("27-dmarc-via")
    assert via.author == Address("Ivan Lazy", "ivan@example.net")
    assert via.kind is Kind.REPLY
    assert via.pull is None  # the quoted request is not a pull request
    listed = message("28-dmarc-list-address")
    assert listed.author == Address("Judith Kernel", "judith@example.com")
    assert listed.patch_author == Address("Judith Kernel", "judith@example.com")
    assert listed.kind is Kind.PATCH


def test_no_subject_and_crlf() -> None:
    untitled = message("29-no-subject")
    assert untitled.subject.title == "" and untitled.subject.key == ""
    assert untitled.kind is Kind.PATCH
    assert untitled.message_id == "no-subject-1@example.org"
    crlf = message("30-crlf-line-endings")
    assert crlf.message_id == "crlf-1@example.com"
    assert crlf.subject.title == "docs: point at frob-config(5)"
    assert "\r" not in crlf.body and "\r" not in diff_of("30-crlf-line-endings")
    assert crlf.date == datetime(2024, 2, 26, 17, tzinfo=UTC)


# --- broken mails -----------------------------------------------------------------------

BROKEN = [stem for stem in STEMS if "-broken-" in stem]


def test_only_the_non_mail_is_malformed() -> None:
    malformed = {
        stem: parse(stem) for stem in STEMS if isinstance(parse(stem), Malformed)
    }
    assert sorted(malformed) == ["46-broken-not-a-mail"]
    found = malformed["46-broken-not-a-mail"]
    assert isinstance(found, Malformed) and found.reason == "not a mail"
    assert found.origin == Origin("46-broken-not-a-mail.eml", "0")


@pytest.mark.parametrize("stem", BROKEN)
def test_broken_mails_parse_bounded(stem: str) -> None:
    parsed = parse(stem)
    if isinstance(parsed, Malformed):
        return
    check_bounds(parsed)


def test_broken_bodies_and_dates() -> None:
    bad64 = message("40-broken-bad-base64")  # decoding stops at the bad bytes
    assert bad64.body.startswith("Describe the fix.")
    assert bad64.message_id == "1b"
    nul = message("41-broken-nul-charset")
    # UTF-8 and Latin-1 bytes mixed under a broken charset name: one fallback codec
    assert nul.body.startswith("Caf") and "text." in nul.body
    assert "\x00" not in nul.body
    assert files("41-broken-nul-charset") == [
        ("src/frob/nul.c", None, FileStatus.MODIFIED, False, 1, 1)
    ]
    overflow = message("42-broken-date-overflow")
    assert (overflow.date, overflow.date_source) == (None, DateSource.NONE)
    assert overflow.date_raw == "Sun, 11 Feb 2024 23:22:904070804030804 +0100"
    year = message("43-broken-date-year-range")
    assert (year.date, year.date_source) == (
        datetime(2024, 2, 28, 10, 1, 2, tzinfo=UTC),
        DateSource.RECEIVED,
    )
    unknown = message("48-broken-unknown-encoding")
    assert unknown.date is None and unknown.message_id == "m"


def test_missing_headers_get_a_stable_synthetic_id() -> None:
    parsed = message("45-broken-missing-headers")
    assert parsed.synthetic_id
    assert parsed.message_id.startswith("e2g-")
    assert parsed.message_id.endswith("@synthetic")
    again = parse_file(MAIL_DIR / "45-broken-missing-headers.eml")
    assert isinstance(again, Message) and again.message_id == parsed.message_id
    assert parsed.author == Address("", "")
    assert (parsed.date, parsed.date_source) == (None, DateSource.NONE)
    assert parsed.subject.title == "a mail with only a subject"
    assert parsed.body.startswith("No From, no Date, no Message-ID.")


def test_huge_headers_are_bounded() -> None:
    parsed = message("44-broken-huge-headers")
    assert len(parsed.message_id) <= MAX_MESSAGE_ID + 40
    assert parsed.in_reply_to is None or len(parsed.in_reply_to) <= MAX_MESSAGE_ID
    assert all(len(ref) <= MAX_MESSAGE_ID for ref in parsed.references)
    assert "short@ids.example.org" in parsed.references
    assert len(parsed.author.name) <= MAX_NAME
    assert len(parsed.author.email) <= MAX_ADDRESS


# --- parser bugs found by these mails, now fixed ---------------------------------------


def test_from_without_address_has_no_email() -> None:
    garbled = message("49-broken-garbled-headers")  # From: =?utf-8?b?QWxpY2UgRXhh
    assert garbled.author.email == ""


def test_huge_from_keeps_name_as_name() -> None:
    huge = message("44-broken-huge-headers")
    assert huge.author.name.startswith("Zed Zed")
    assert not huge.author.email.startswith("Zed")


def test_latin1_patch_id_is_gits() -> None:
    patch = message("21-latin1-body").patch
    assert patch is not None
    assert patch.patch_id == "2d29af7a5bad6cadaf497ab7c3f2dc632507b67f"


def test_unknown_text_subtype_is_read_as_plain() -> None:
    parsed = message("48-broken-unknown-encoding")  # Content-Type: text/p
    assert parsed.body.startswith("Unknown transfer encoding, unknown type")


def test_multipart_without_boundary_keeps_its_text() -> None:
    parsed = message("47-broken-multipart-no-boundary")
    assert "The parts have no declared boundary." in parsed.body
    assert parsed.patch is not None
    assert parsed.patch.paths == ("docs/usage.md",)


# --- mutations ----------------------------------------------------------------------------

MAIL_BYTES = {path.stem: path.read_bytes() for path in MAILS}
MAX_MUTATED = 256 * 1024


def check_bounds(parsed: Message) -> None:
    """What the store relies on, whatever the input was."""
    assert len(parsed.message_id) <= MAX_MESSAGE_ID + 40
    assert len(parsed.author.name) <= MAX_NAME
    assert len(parsed.author.email) <= MAX_ADDRESS
    assert len(parsed.subject.raw) <= MAX_SUBJECT
    assert len(parsed.body) <= MAX_BODY
    assert len(parsed.references) <= MAX_REFERENCES
    assert len(parsed.to) <= 256
    assert parsed.date is None or parsed.date.tzinfo is UTC
    assert parsed.received_at is None or parsed.received_at.tzinfo is UTC
    if parsed.patch is not None:
        assert len(parsed.patch.files) <= MAX_FILES
        assert len(parsed.patch.diff) <= MAX_DIFF
    texts = [
        parsed.message_id,
        parsed.author.name,
        parsed.author.email,
        parsed.subject.raw,
        parsed.subject.title,
        parsed.body,
        parsed.date_raw,
        *parsed.references,
        *parsed.to,
        *(f"{t.key}: {t.value}" for t in parsed.trailers),
    ]
    for text in texts:
        text.encode("utf-8")  # no lone surrogates reach the store
    for text in (
        parsed.message_id,
        parsed.author.name,
        parsed.subject.raw,
        parsed.body,
    ):
        assert "\x00" not in text


@st.composite
def mutated_mail(draw: st.DrawFn) -> bytes:
    """One of the test mails, truncated, with bytes flipped, inserted or dropped, CRLF
    line ends, or header lines repeated."""
    data = bytearray(MAIL_BYTES[draw(st.sampled_from(STEMS))])
    operations = st.sampled_from(
        ["truncate", "flip", "insert", "delete", "duplicate-header", "crlf"]
    )
    for operation in draw(st.lists(operations, min_size=1, max_size=4)):
        at = draw(st.integers(0, len(data)))
        if operation == "truncate":
            del data[at:]
        elif operation == "flip" and data:
            for _ in range(draw(st.integers(1, 8))):
                index = draw(st.integers(0, len(data) - 1))
                data[index] = draw(st.integers(0, 255))
        elif operation == "insert":
            data[at:at] = draw(
                st.binary(max_size=40)
                | st.sampled_from(
                    [b"\x00", b"\n\n", b"\r\n", b"=?utf-8?b?", b"--", b"\nFrom x\n"]
                )
            )
        elif operation == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif operation == "duplicate-header":
            lines = bytes(data).split(b"\n")
            end = lines.index(b"") if b"" in lines else len(lines)
            if end:
                index = draw(st.integers(0, end - 1))
                copies = draw(st.integers(1, 200))
                lines[index:index] = [lines[index]] * copies
                data = bytearray(b"\n".join(lines)[:MAX_MUTATED])
        elif operation == "crlf":
            data = bytearray(bytes(data).replace(b"\n", b"\r\n"))
    return bytes(data)


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated_mail())
def test_mutated_mails_never_raise_and_stay_bounded(data: bytes) -> None:
    started = time.perf_counter()
    parsed = parse_message(RawMessage(data, Origin("mutated", "0")), now=NOW)
    elapsed = time.perf_counter() - started
    assert isinstance(parsed, (Message, Malformed))
    assert elapsed < 5.0, f"{elapsed:.1f}s for {len(data)} bytes"
    if isinstance(parsed, Message):
        check_bounds(parsed)
        again = parse_message(RawMessage(data, Origin("mutated", "0")), now=NOW)
        assert again == parsed  # deterministic, as the goldens assume
