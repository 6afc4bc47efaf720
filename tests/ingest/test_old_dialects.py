"""Pre-2009 list mail: old diff dialects (e2g.mail.paths) and wrapped patches
(e2g.mail.encoded, through e2g.mail.message).

The `5x-*` mails in tests/data/mail were written for these tests in the style of
2001-2005 LKML mail (no text copied from an archive); their goldens are checked by
tests/mail/test_golden.py, and what each is for is pinned here. Hostile wrapped
inputs (huge, truncated, nested, a decompression bomb, corrupt) are built in memory:
each mail must come back kept, with the part's defect named, quickly and within
bounded memory, never as an exception.
"""

from __future__ import annotations

import base64
import binascii
import bz2
import gzip
import importlib.util
import sys
import time
import tracemalloc
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from e2g.mail import encoded
from e2g.mail.message import parse_message
from e2g.mail.patch import diff_lines, parse_diff
from e2g.mail.paths import file_path, is_scratch, normalise_path, side_path
from e2g.matcher.similarity import diff_overlap, pair_files
from e2g.model import FileStatus
from e2g.model.mail import Malformed, Message, Origin, RawMessage

ROOT = Path(__file__).resolve().parents[2]
MAIL = ROOT / "tests" / "data" / "mail"
NOW = datetime(2026, 1, 15, tzinfo=UTC)

PATCH = (
    "diff -urN frob-2.4.5/drivers/frob/kbd.c frob-2.4.5-rate/drivers/frob/kbd.c\n"
    "--- frob-2.4.5/drivers/frob/kbd.c\tFri Apr  6 22:42:55 2001\n"
    "+++ frob-2.4.5-rate/drivers/frob/kbd.c\tTue Jun 12 17:33:00 2001\n"
    "@@ -1,3 +1,4 @@\n"
    " static int frob_kbd_rate;\n"
    "+static int frob_kbd_delay;\n"
    " \n"
    " int frob_kbd_probe(void)\n"
)


def parse(data: bytes) -> Message | Malformed:
    return parse_message(RawMessage(data, Origin("test", "0")), now=NOW)


def fixture(stem: str) -> Message:
    parsed = parse((MAIL / f"{stem}.eml").read_bytes())
    assert isinstance(parsed, Message), parsed
    return parsed


def files(message: Message) -> list[tuple[str, FileStatus, int, int]]:
    assert message.patch is not None
    return [(f.path, f.status, f.added, f.removed) for f in message.patch.files]


def uuencode(data: bytes, name: str = "fix.diff.gz") -> str:
    lines = "".join(
        binascii.b2a_uu(data[i : i + 45]).decode() for i in range(0, len(data), 45)
    )
    return f"begin 644 {name}\n{lines}`\nend\n"


def mail(body: str, *parts: tuple[str, str]) -> bytes:
    """A mail: `body` alone, or multipart/mixed with (headers, payload) parts."""
    head = (
        "From: Olga Writer <olga@example.org>\nTo: frob-devel@lists.example.org\n"
        "Subject: [PATCH] frob: a wrapped patch\nDate: Tue, 12 Jun 2001 18:19:49 +0400\n"
        "Message-ID: <wrapped@example.org>\nMIME-Version: 1.0\n"
    )
    if not parts:
        return (head + "Content-Type: text/plain\n\n" + body).encode()
    text = head + 'Content-Type: multipart/mixed; boundary="B"\n\n--B\n\n' + body
    for headers, payload in parts:
        text += f"\n--B\n{headers}\n\n{payload}"
    return (text + "\n--B--\n").encode()


def gzip_part(data: bytes, name: str = "fix.diff.gz") -> tuple[str, str]:
    return base64_part(gzip.compress(data, mtime=0), name, "application/x-gzip")


def base64_part(data: bytes, name: str, content_type: str) -> tuple[str, str]:
    headers = (
        f'Content-Type: {content_type}; name="{name}"\n'
        "Content-Transfer-Encoding: base64\n"
        f'Content-Disposition: attachment; filename="{name}"'
    )
    return headers, base64.encodebytes(data).decode()


# --- the dialect fixtures: what each is for -------------------------------------------


def test_scratch_path_on_the_new_side_loses_to_the_tree_path() -> None:
    assert files(fixture("50-scratch-path-new-side")) == [
        ("drivers/frob/frob_irq.c", FileStatus.MODIFIED, 1, 1),
        ("lib/frob/ring.c", FileStatus.MODIFIED, 1, 0),
    ]


def test_bk_diff_revision_directory_and_edited_side() -> None:
    assert files(fixture("51-bk-diff-edited")) == [
        ("fs/frobfs/namei.c", FileStatus.MODIFIED, 3, 1),
        ("fs/frobfs/inode.c", FileStatus.MODIFIED, 1, 1),
    ]


def test_dates_after_spaces_are_not_part_of_the_path() -> None:
    assert files(fixture("52-cvs-tab-turned-spaces")) == [
        ("scripts/frobconf/conf.c", FileStatus.MODIFIED, 0, 1),
        ("scripts/frobconf/zconf.y", FileStatus.MODIFIED, 1, 0),
    ]


def test_cvs_diff_in_a_subdirectory_takes_the_rcs_path() -> None:
    assert [path for path, *_ in files(fixture("53-cvs-subdirectory-rcs-path"))] == [
        "arch/frob/kernel/setup.c",
        "arch/frob/kernel/traps.c",  # its RCS file is in the Attic
    ]


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        (
            "54-uuencoded-gzip-inline",
            [("drivers/frob/kbd.c", FileStatus.MODIFIED, 3, 0)],
        ),
        ("55-gzip-attachment", [("kernel/frob_sched.c", FileStatus.MODIFIED, 1, 1)]),
        (
            "56-uuencode-mime-part",
            [("drivers/frob/frob_tty.c", FileStatus.MODIFIED, 2, 1)],
        ),
        (
            "59-bzip2-attachment",
            [("drivers/frob/frob_pm.c", FileStatus.MODIFIED, 1, 1)],
        ),
    ],
)
def test_wrapped_patches_are_found(stem: str, expected: list[object]) -> None:
    message = fixture(stem)
    assert files(message) == expected
    assert message.kind.value == "patch"
    assert "begin 644" not in message.body  # the commentary stops where the patch is


def test_absolute_paths_start_below_the_tree() -> None:
    assert files(fixture("57-absolute-tree-paths")) == [
        ("drivers/frob/frob_net.c", FileStatus.MODIFIED, 2, 0),
        ("include/frob/frob_net.h", FileStatus.MODIFIED, 1, 0),
    ]


def test_a_bare_file_name_stays_bare() -> None:
    assert files(fixture("58-bare-file-name")) == [
        ("frob_random.c", FileStatus.MODIFIED, 1, 0)
    ]


def test_stored_diff_reparses_to_the_same_paths() -> None:
    """The matcher reads a mail's lines from its stored diff (diff_lines of
    patch.diff): the Index:/RCS file: lines must travel with it."""
    for path in sorted(MAIL.glob("5*.eml")):
        message = fixture(path.stem)
        assert message.patch is not None
        assert sorted(diff_lines(message.patch.diff)) == sorted(
            set(message.patch.paths)
        ), path.name


# --- bare names meet the commit's files in pair_files ---------------------------------


def test_bare_name_pairs_by_basename_only_when_unambiguous() -> None:
    message = fixture("58-bare-file-name")
    assert message.patch is not None
    mail_paths = message.patch.paths
    commit = ("drivers/frob/frob_random.c", "include/frob/frob_random.h")
    pairs, _, _ = pair_files(commit, mail_paths)
    assert pairs == [("drivers/frob/frob_random.c", "frob_random.c")]
    ambiguous = ("drivers/frob/frob_random.c", "lib/frob_random.c")
    assert pair_files(ambiguous, mail_paths)[0] == []
    # and the lines then compare as one file
    mail_lines = diff_lines(message.patch.diff)
    commit_lines = {"drivers/frob/frob_random.c": mail_lines["frob_random.c"]}
    assert diff_overlap(commit_lines, mail_lines).similarity == 1.0


# --- path rules, one at a time --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mm/vmscan.c\t18 Feb 2004 17:45:28 -0000\t1.45", "mm/vmscan.c"),
        ("mm/vmscan.c   18 Feb 2004 17:45:28 -0000    1.45", "mm/vmscan.c"),
        ("a/drivers/x.c     Thu Jun 12 04:26:48 2003", "a/drivers/x.c"),
        ("/usr/src/linux/x.c Wed Apr 16 23:30:30 2003", "/usr/src/linux/x.c"),
        ("x.c  Mon Sep 23 11:47:26 PDT 2002", "x.c"),
        ("edited/x.c  2004-10-26 12:55:42 +09:00", "edited/x.c"),
        ("x.c 2005-01-07 12:00:00.000000000 +0100", "x.c"),
        ("x.c\t(revision 123)", "x.c"),
        ("My Documents/notes 2003.txt", "My Documents/notes 2003.txt"),
        ("a/2004-10-26 notes", "a/2004-10-26 notes"),
    ],
)
def test_side_path_drops_trailing_stamps(text: str, expected: str) -> None:
    assert side_path(text) == expected


@pytest.mark.parametrize(
    ("old", "new", "named", "rcs", "expected"),
    [
        # the brief's cases
        (
            "arch/alpha/kernel/traps.c",
            "/tmp/traps.c",
            None,
            None,
            "arch/alpha/kernel/traps.c",
        ),
        ("1.24/fs/ufs/namei.c", "edited/namei.c", None, None, "fs/ufs/namei.c"),
        (
            "scripts/kconfig/conf.c      29 Jul 2003 17:02:27 -0000      1.1",
            "scripts/kconfig/conf.c      4 Aug 2003 10:00:00 -0000",
            "scripts/kconfig/conf.c",
            None,
            "scripts/kconfig/conf.c",
        ),
        ("random.c.orig", "random.c", None, None, "random.c"),
        # scratch copies in other shapes
        ("drivers/x.c", "new/x.c", None, None, "drivers/x.c"),
        ("drivers/x.c", "drivers/x.c~", None, None, "drivers/x.c"),
        ("linux/fs/char_dev.c", "/tmp/char_dev.c", None, None, "fs/char_dev.c"),
        # a copy named by a suffix on one side: the other side is the file
        (
            "k-2.5/arch/x/smp.c",
            "k-2.5/arch/x/smp.c.fixed",
            None,
            None,
            "arch/x/smp.c",
        ),
        ("drivers/ide.c", "drivers/ide.c~tcq-fix", None, None, "drivers/ide.c"),
        ("/tmp/x.c.orig", "/tmp/x.c", "drivers/x.c", None, "drivers/x.c"),
        # trees, as before
        (
            "linux-2.6.10/mm/slab.c",
            "linux-2.6.10-mm1/mm/slab.c",
            None,
            None,
            "mm/slab.c",
        ),
        ("linux.orig/mm/slab.c", "linux/mm/slab.c", None, None, "mm/slab.c"),
        ("1.57/arch/ppc/x.c", "edited/arch/ppc/x.c", None, None, "arch/ppc/x.c"),
        (
            "v2.4.5/linux/drivers/kbd.c",
            "linux/drivers/kbd.c",
            None,
            None,
            "drivers/kbd.c",
        ),
        (
            "/usr/src/linux-2.4.20/Documentation/Configure.help",
            "/usr/src/linux/Documentation/Configure.help",
            None,
            None,
            "Documentation/Configure.help",
        ),
        # quilt: Index: names the tree path, the sides agree below it
        (
            "linux.orig/mm/slab.c",
            "linux/mm/slab.c",
            "linux/mm/slab.c",
            None,
            "mm/slab.c",
        ),
        # CVS in a subdirectory; an RCS path outside any tree is no help
        (
            "setup.c",
            "setup.c",
            "setup.c",
            "/cvs/linux-2.5/arch/x/setup.c,v",
            "arch/x/setup.c",
        ),
        ("setup.c", "setup.c", "setup.c", "/cvs/frob/arch/x/setup.c,v", "setup.c"),
        (
            "Config.in",
            "Config.in",
            "Config.in",
            "/cvs/linux/drivers/Attic/Config.in,v",
            "drivers/Config.in",
        ),
        # added and deleted files keep their one path
        ("/dev/null", "/tmp/new.c", "drivers/new.c", None, "drivers/new.c"),
        ("drivers/gone.c", "/dev/null", None, None, "drivers/gone.c"),
        # two tree paths that disagree: the new side, as patch(1) would create it
        ("drivers/a/x.c", "drivers/b/x.c", None, None, "drivers/b/x.c"),
    ],
)
def test_file_path(
    old: str, new: str, named: str | None, rcs: str | None, expected: str
) -> None:
    assert file_path(side_path(old), side_path(new), named=named, rcs=rcs) == expected


@pytest.mark.parametrize(
    ("path", "scratch"),
    [
        ("/tmp/x.c", True),
        ("edited/x.c", True),
        ("drivers/x.c.orig", True),
        ("x.c~", True),
        ("drivers/x.c", False),
        ("x.c", False),
        ("/dev/null", False),
        ("newsletter/x.c", False),
    ],
)
def test_is_scratch(path: str, scratch: bool) -> None:
    assert is_scratch(path) is scratch


def test_git_diffs_keep_both_sides() -> None:
    """A rename in a git diff is two paths: the non-git rules never merge them."""
    diff = (
        "diff --git a/old/name.c b/new/name.c\nsimilarity index 90%\n"
        "rename from old/name.c\nrename to new/name.c\n"
        "--- a/old/name.c\n+++ b/new/name.c\n@@ -1 +1 @@\n-a\n+b\n"
    )
    patch = parse_diff(diff)
    assert patch is not None
    change = patch.files[0]
    assert (change.path, change.old_path, change.status) == (
        "new/name.c",
        "old/name.c",
        FileStatus.RENAMED,
    )


def test_absolute_paths_normalise_below_their_tree() -> None:
    assert normalise_path("/usr/src/linux-2.4.18/mm/slab.c") == "mm/slab.c"
    assert normalise_path("/home/me/linux/include/linux/fs.h") == "include/linux/fs.h"
    assert normalise_path("/tmp/slab.c") == "/tmp/slab.c"
    assert normalise_path("edited/./sr_ioctl.c") == "edited/sr_ioctl.c"


# --- wrapped patches: the good cases ---------------------------------------------------


def test_inline_uuencoded_plain_diff() -> None:
    parsed = parse(mail("Fix below.\n\n" + uuencode(PATCH.encode(), "kbd.diff")))
    assert isinstance(parsed, Message) and parsed.patch is not None
    assert parsed.patch.paths == ("drivers/frob/kbd.c",)
    assert parsed.body == "Fix below."


def test_uuencode_dash_m_base64_block() -> None:
    block = base64.encodebytes(gzip.compress(PATCH.encode(), mtime=0)).decode()
    text = f"begin-base64 644 kbd.diff.gz\n{block}====\n"
    parsed = parse(mail("Fix below.\n\n" + text))
    assert isinstance(parsed, Message) and parsed.patch is not None
    assert parsed.patch.paths == ("drivers/frob/kbd.c",)


def test_octet_stream_part_holding_a_uuencoded_file() -> None:
    part = (
        'Content-Type: application/octet-stream; name="kbd.diff.gz"',
        uuencode(gzip.compress(PATCH.encode(), mtime=0)),
    )
    parsed = parse(mail("Attached.\n", part))
    assert isinstance(parsed, Message) and parsed.patch is not None
    assert parsed.patch.paths == ("drivers/frob/kbd.c",)


def test_concatenated_gzip_members_are_one_patch() -> None:
    half = PATCH.index("@@")
    data = gzip.compress(PATCH[:half].encode(), mtime=0) + gzip.compress(
        PATCH[half:].encode(), mtime=0
    )
    parsed = parse(
        mail(
            "Attached.\n", base64_part(data, "kbd.diff.gz", "application/octet-stream")
        )
    )
    assert isinstance(parsed, Message) and parsed.patch is not None
    assert parsed.patch.paths == ("drivers/frob/kbd.c",)


def test_compressed_non_patch_is_not_a_patch() -> None:
    part = gzip_part(b"CONFIG_FROB=y\nCONFIG_FROB_DEBUG=n\n" * 50, "config.gz")
    parsed = parse(mail("My .config is attached.\n", part))
    assert isinstance(parsed, Message)
    assert parsed.patch is None
    assert parsed.body == "My .config is attached."


@pytest.mark.parametrize(
    "prose",
    [
        "Then run:\n\nbegin 644 my file\nand see what happens\nend\n",  # no encoded line
        "Then run:\n\nbegin 644 notes.txt\nHELLO\n",  # capitals, but not a whole line
        "> begin 644 fix.diff.gz\n> M'XL(\n",  # quoted: someone else's block
    ],
)
def test_prose_about_uuencode_is_neither_a_patch_nor_malformed(prose: str) -> None:
    parsed = parse(mail(prose))
    assert isinstance(parsed, Message)
    assert parsed.patch is None


# --- wrapped patches: hostile inputs ---------------------------------------------------


def _zeros_gzip(size: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b"\0" * (1 << 20)
    body = b"".join(compressor.compress(chunk) for _ in range(size >> 20))
    return body + compressor.flush()


GZ = gzip.compress(PATCH.encode(), mtime=0)
BZ = bz2.compress(PATCH.encode())

BOMB = 64 << 20  # what the bombs below expand to

# Built when their test runs (the bombs take a second to make), as
# case -> () -> (part headers, part payload, the defect named).
HOSTILE: dict[str, Callable[[], tuple[str, str, str]]] = {
    "gzip bomb": lambda: (
        *gzip_part(b"")[:1],
        _b64(_zeros_gzip(BOMB)),
        encoded.TOO_LARGE,
    ),
    "bzip2 bomb": lambda: (
        *base64_part(bz2.compress(bytes(BOMB)), "x.bz2", "application/x-bzip2"),
        encoded.TOO_LARGE,
    ),
    # refused by its size, before any decompression
    "huge input": lambda: (
        *base64_part(
            GZ[:10] + bytes(encoded.MAX_ENCODED), "x.gz", "application/x-gzip"
        ),
        encoded.TOO_LARGE,
    ),
    "truncated gzip": lambda: (
        *base64_part(GZ[: len(GZ) // 2], "x.gz", "application/x-gzip"),
        encoded.TRUNCATED,
    ),
    "truncated bzip2": lambda: (
        *base64_part(BZ[: len(BZ) // 2], "x.bz2", "application/x-bzip2"),
        encoded.TRUNCATED,
    ),
    "gzip in gzip": lambda: (*gzip_part(GZ), encoded.NESTED),
    "bzip2 in gzip": lambda: (*gzip_part(BZ), encoded.NESTED),
    "corrupt gzip": lambda: (
        *base64_part(GZ[:10] + b"\xff" * 64, "x.gz", "application/x-gzip"),
        encoded.CORRUPT,
    ),
    "truncated uuencoded part": lambda: (
        'Content-Type: application/x-gzip; name="x.gz"\nContent-Transfer-Encoding: x-uue',
        uuencode(GZ).replace("`\nend\n", ""),
        encoded.TRUNCATED,
    ),
}


def _b64(data: bytes) -> str:
    return base64.encodebytes(data).decode()


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_parts_are_named_defects_bounded_and_never_raise(case: str) -> None:
    headers, payload, reason = HOSTILE[case]()
    data = mail("Patch attached.\n", (headers, payload))
    tracemalloc.start()
    started = time.perf_counter()
    try:
        parsed = parse(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    elapsed = time.perf_counter() - started
    assert isinstance(parsed, Message), parsed
    assert parsed.defects == (reason,)
    assert parsed.message_id == "wrapped@example.org"  # the mail itself is kept
    assert parsed.patch is None
    assert elapsed < 10
    # what the stdlib needs to read the mail, plus a few times the output bound:
    # never what a bomb would expand to (BOMB)
    assert peak < 10 * len(data) + 4 * encoded.MAX_DECODED


def test_truncated_inline_uuencode_is_a_defect() -> None:
    parsed = parse(mail("Fix:\n\n" + uuencode(GZ).replace("`\nend\n", "") + "\nBye\n"))
    assert isinstance(parsed, Message) and parsed.defects == (encoded.TRUNCATED,)


def test_inline_uuencoded_bomb_is_a_defect() -> None:
    parsed = parse(mail("Fix:\n\n" + uuencode(_zeros_gzip(32 << 20))))
    assert isinstance(parsed, Message) and parsed.defects == (encoded.TOO_LARGE,)


def test_parts_share_one_budget() -> None:
    """Each part decompresses to less than MAX_DECODED, together to more than the
    message may: many honest-looking parts cannot add up without bound."""
    each = encoded.MAX_DECODED - 1024
    count = encoded.MAX_MESSAGE_DECODED // each + 1
    part = base64_part(
        gzip.compress(b"\0" * each, mtime=0), "x.gz", "application/x-gzip"
    )
    parsed = parse(mail("Logs attached.\n", *([part] * count)))
    assert isinstance(parsed, Message) and parsed.defects == (encoded.TOO_LARGE,)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([b"", b"\x1f\x8b\x08", b"BZh91AY&SY", GZ[:12], BZ[:12]]),
    st.binary(max_size=300),
)
def test_unwrap_never_raises(prefix: bytes, rest: bytes) -> None:
    result = encoded.unwrap(prefix + rest, encoded.Budget())
    assert result.defect is None or result.data == b""
    assert result.defect is None or result.defect.reason in (
        encoded.TOO_LARGE,
        encoded.TRUNCATED,
        encoded.NESTED,
        encoded.CORRUPT,
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "begin 644 x.gz",
                    "begin-base64 644 x",
                    "end",
                    "`",
                    "====",
                    "M" + "!" * 60,
                ]
            ),
            st.text(
                alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=70
            ),
        ),
        max_size=30,
    ).map("\n".join)
)
def test_uudecode_blocks_never_raise(text: str) -> None:
    for block in encoded.uudecode_blocks(text, encoded.Budget()):
        assert block.result.defect is not None or block.result.changed


# --- the benchmark script over the fixtures --------------------------------------------


def test_old_dialects_benchmark_reports_the_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location(
        "bench_old_dialects", ROOT / "benchmarks" / "old_dialects.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    for stem in ("50-scratch-path-new-side", "58-bare-file-name"):
        (tmp_path / f"{stem}.eml").write_bytes((MAIL / f"{stem}.eml").read_bytes())
    (tmp_path / "expected.tsv").write_text(
        "# mail\tfiles\n"
        "50-scratch-path-new-side.eml\tlib/frob/ring.c drivers/frob/frob_irq.c\n"
        "58-bare-file-name.eml\tdrivers/frob/frob_random.c\n"
    )
    assert module.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ok     50-scratch-path-new-side.eml" in out
    assert "WRONG  58-bare-file-name.eml" in out
    assert out.rstrip().endswith(
        f"1/2 listed mails parse to exactly the expected files (50%); 2 mails in {tmp_path}"
    )


def test_ingest_keeps_a_mail_with_a_damaged_part_and_counts_it(
    tmp_path: Path, settings
) -> None:
    """The run stores the mail (its author and thread count) and says what was
    left out, in the summary and its JSON."""
    from e2g.api import core as api_core
    from e2g.index.store import Store
    from e2g.render import ingest_json

    truncated = base64_part(GZ[: len(GZ) // 2], "fix.diff.gz", "application/x-gzip")
    archive = tmp_path / "old.mbox"
    archive.write_bytes(
        b"From olga@example.org Tue Jun 12 18:19:49 2001\n"
        + mail("Patch attached.\n", truncated)
        + b"\n"
    )
    report = api_core.ingest(settings, [str(archive)], workers=1)
    assert (report.new, report.malformed, report.damaged) == (1, 0, 1)
    assert report.damaged_reasons == {encoded.TRUNCATED: 1}
    assert ingest_json(report)["damaged_reasons"] == {encoded.TRUNCATED: 1}
    with Store(settings.store_path) as store:
        kept = store.message("wrapped@example.org")
    assert kept is not None and kept.author_email == "olga@example.org"
