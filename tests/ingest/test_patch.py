"""e2g.mail.patch: finding, parsing and identifying diffs in mail text."""

from __future__ import annotations

import email
import email.policy
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from e2g.mail.patch import (
    diff_lines,
    find_patch,
    parse_diff,
    split_body,
)
from e2g.mail.patch_id import compute_patch_id
from e2g.mail.paths import file_path, normalise_path
from e2g.model import FileStatus

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
PATCHWORK = CORPUS / "patchwork"

SIMPLE = (
    "diff --git a/mm/frob.c b/mm/frob.c\n"
    "index 1111111..2222222 100644\n"
    "--- a/mm/frob.c\n"
    "+++ b/mm/frob.c\n"
    "@@ -1,3 +1,3 @@\n"
    " int frob(void)\n"
    "-\treturn 1;\n"
    "+\treturn 2;\n"
    " }\n"
)
OTHER = (
    "diff --git a/mm/other.c b/mm/other.c\n"
    "index 3333333..4444444 100644\n"
    "--- a/mm/other.c\n"
    "+++ b/mm/other.c\n"
    "@@ -10,2 +10,3 @@ static int x;\n"
    " a\n"
    "+b\n"
    " c\n"
)


def patchwork(*parts: str) -> Path:
    path = PATCHWORK.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared corpus not available: {path}")
    return path


def mail_texts(name: str) -> list[str]:
    """The decoded text parts of a patchwork test mail (html parts left out)."""
    message = email.message_from_bytes(
        patchwork("mail", name).read_bytes(), policy=email.policy.compat32
    )
    texts = []
    for part in message.walk():
        if part.is_multipart() or part.get_content_maintype() != "text":
            continue
        if part.get_content_subtype() == "html":
            continue
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        charset = part.get_content_charset() or "utf-8"
        try:
            texts.append(payload.decode(charset, "replace"))
        except LookupError:
            texts.append(payload.decode("utf-8", "replace"))
    return texts


def patch_file(name: str) -> str:
    return patchwork("patches", name).read_text(encoding="utf-8")


# --- patchwork's expectations (EXPECTATIONS.tsv) ----------------------------------------


def test_pull_request_with_diff_0003():
    commentary, patch = find_patch(mail_texts("0003-git-pull-request-with-diff.mbox"))
    assert patch is not None
    assert patch.diff.startswith("diff --git a/arch/x86/include/asm/smp.h")
    # The test mail was trimmed after three files; a list footer follows them.
    assert patch.paths == (
        "arch/x86/include/asm/smp.h",
        "arch/x86/kernel/acpi/sleep.c",
        "arch/x86/kernel/cpu/mtrr/main.c",
    )
    assert [(change.added, change.removed) for change in patch.files] == [
        (1, 4),
        (1, 1),
        (9, 1),
    ]
    assert patch.diff.endswith("     mtrr_aps_delayed_init = false;\n }\n")
    assert (
        "git://git.kernel.org/pub/scm/linux/kernel/git/tip/linux-2.6-tip.git x86-fixes-for-linus"
        in commentary
    )
    assert "diff --git" not in commentary


@pytest.mark.parametrize(
    "name",
    [
        "0001-git-pull-request.mbox",
        "0002-git-pull-request-wrapped.mbox",
        "0004-git-pull-request-git+ssh.mbox",
        "0017-git-pull-request-git-2-14-3.mbox",
        "0020-multipart-comment.mbox",
    ],
)
def test_mails_without_diff(name):
    commentary, patch = find_patch(mail_texts(name))
    assert patch is None
    assert commentary


def test_cvs_diff_in_attachment_0007():
    texts = mail_texts("0007-cvs-format-diff.mbox")
    assert len(texts) == 2
    commentary, patch = find_patch(texts)
    assert patch is not None
    assert patch.diff.startswith("Index")
    assert patch.paths == ("bfd/elf-bfd.h", "bfd/elflink.c", "bfd/elfxx-mips.c")
    assert (patch.added, patch.removed) == (6, 0)
    assert commentary.startswith("The pr11138 testcase links")
    assert commentary.endswith('no_sym_version for "__RLD_MAP".')


def test_rename_only_0008():
    commentary, patch = find_patch(mail_texts("0008-git-rename.mbox"))
    assert patch is not None
    assert patch.diff.count("\nrename from ") == 2
    assert patch.diff.count("\nrename to ") == 2
    assert [change.status for change in patch.files] == [FileStatus.RENAMED] * 2
    first = patch.files[0]
    assert (
        first.old_path == "package/rpi-userland/rpi-userland-add-pkgconfig-files.patch"
    )
    assert (
        first.path == "package/rpi-userland/rpi-userland-000-add-pkgconfig-files.patch"
    )
    assert not patch.diff.endswith("1.8.1.2\n")  # the "-- " signature is not diff
    assert commentary.endswith(
        'Signed-off-by: "Yann E. MORIN" <yann.morin.1998@free.fr>'
    )
    assert patch.patch_id is not None  # git gives header-only diffs an id too


def test_rename_with_hunk_0009():
    _, patch = find_patch(mail_texts("0009-git-rename-with-diff.mbox"))
    assert patch is not None
    assert patch.diff.count("\nrename from ") == 2
    assert patch.diff.count("\nrename to ") == 2
    assert patch.diff.count("\n-a\n+b") == 1
    assert (patch.files[0].added, patch.files[0].removed) == (1, 1)


@pytest.mark.parametrize(
    "name",
    ["0010-invalid-charset.mbox", "0016-no-subject.mbox", "0013-with-utf8-body.mbox"],
)
def test_ordinary_patches(name):
    commentary, patch = find_patch(mail_texts(name))
    assert patch is not None and patch.files
    assert commentary
    assert patch.patch_id is not None


def test_no_newline_at_end_of_file_0011():
    commentary, patch = find_patch(mail_texts("0011-no-newline-at-end-of-file.mbox"))
    assert patch is not None
    assert patch.diff.startswith(
        "diff --git a/tools/testing/selftests/powerpc/Makefile"
    )
    assert not commentary.rstrip().endswith("\\ No newline at end of file")
    assert patch.diff.rstrip().endswith("\\ No newline at end of file")
    assert patch.diff.count("\\ No newline at end of file") == 2
    statuses = [(change.path, change.status) for change in patch.files]
    assert statuses[1:] == [
        ("tools/testing/selftests/powerpc/vphn/vphn.c", FileStatus.ADDED),
        ("tools/testing/selftests/powerpc/vphn/vphn.h", FileStatus.ADDED),
    ]


def test_multipart_text_and_html_0019():
    commentary, patch = find_patch(mail_texts("0019-multipart-patch.mbox"))
    assert patch is not None
    assert "<div" not in patch.diff
    assert "<div" not in commentary


def test_new_empty_file_0021():
    commentary, patch = find_patch(mail_texts("0021-git-empty-new-file.mbox"))
    assert patch is not None
    assert patch.diff == (
        "diff --git a/banana b/banana\nnew file mode 100644\nindex 000000000000..e69de29bb2d1\n"
    )
    assert [(change.path, change.status) for change in patch.files] == [
        ("banana", FileStatus.ADDED)
    ]
    assert (
        commentary == "Doing some snowpatching."
    )  # diffstat, signature, footer dropped


def test_mode_change_0022():
    _, patch = find_patch(mail_texts("0022-git-mode-change.mbox"))
    assert patch is not None
    assert patch.diff.endswith("old mode 100644\nnew mode 100755\n")
    assert patch.paths == ("scripts/kconfig/nconf-cfg.sh",)
    assert (patch.added, patch.removed) == (0, 0)


def test_binary_add_0025():
    _, patch = find_patch(mail_texts("0025-git-add-binary-file.mbox"))
    assert patch is not None
    assert patch.diff.startswith("diff --git pixel.bmp pixel.bmp")
    for piece in ("GIT binary patch\n", "literal 142\n", "literal 0\n"):
        assert piece in patch.diff
    assert "2.35.3" not in patch.diff
    assert [(c.path, c.status, c.binary) for c in patch.files] == [
        ("pixel.bmp", FileStatus.ADDED, True)
    ]


def test_binary_and_text_0026():
    _, patch = find_patch(mail_texts("0026-git-add-mixed-binary-text-files.mbox"))
    assert patch is not None
    assert patch.diff.startswith("diff --git pixel.bmp pixel.bmp")
    assert "GIT binary patch\n" in patch.diff
    assert "diff --git quit.sh quit.sh\n" in patch.diff
    assert [(c.path, c.binary, c.added) for c in patch.files] == [
        ("pixel.bmp", True, 0),
        ("quit.sh", False, 3),
    ]


def test_binary_modify_0027():
    _, patch = find_patch(mail_texts("0027-git-modify-binary-file.mbox"))
    assert patch is not None
    assert patch.diff.startswith("diff --git pixel.bmp pixel.bmp")
    for piece in ("GIT binary patch\n", "literal 0\n", "literal 142\n"):
        assert piece in patch.diff
    assert patch.files[0].status is FileStatus.MODIFIED


# --- patchwork's synthesised mails (patches/0001-add-line.patch, 0002-utf-8.patch) -------


@pytest.mark.parametrize(
    ("comment", "before", "after"),
    [
        ("Test for attached patch", "", ""),
        ("Test comment\nmore comment", "-- \nsig\n", ""),  # signature before the diff
        ("Test comment\nmore comment\n---\nUpdate: test update", "-- \nsig\n", ""),
        ("Test comment\nmore comment\n---\nUpdate: test update", "", ""),
        (
            "Test comment\nmore comment",
            "_______________________________________________\nLinuxppc-dev mailing list\n",
            "",
        ),
        (
            'Lines can start with words beginning in "diff"\ndifficult\nDifferent',
            "",
            "",
        ),
        ("Test comment", "", "-- \nsig\n"),  # signature after the diff
        ("Test comment", "", "---\nUpdate: a comment after the diff\n"),
        (
            "Test comment",
            "",
            "_______________________________________________\nLinuxppc-dev mailing list\n"
            "Linuxppc-dev@lists.ozlabs.org\nhttps://lists.ozlabs.org/listinfo/linuxppc-dev\n",
        ),
    ],
)
@pytest.mark.parametrize("patch_name", ["0001-add-line.patch", "0002-utf-8.patch"])
def test_inline_patch(patch_name, comment, before, after):
    diff = patch_file(patch_name)
    commentary, found = split_body(comment + "\n" + before + diff + after)
    assert found == diff
    assert commentary == comment


@pytest.mark.parametrize("subtype_note", ["x-patch", "x-diff"])
def test_attached_patch(subtype_note):
    diff = patch_file("0001-add-line.patch")
    commentary, patch = find_patch(["Test for attached patch", diff])
    assert patch is not None
    assert patch.diff == diff
    assert commentary == "Test for attached patch"
    assert patch.paths == ("meep.text",)


# --- split_body -------------------------------------------------------------------------


def format_patch_body(diff: str) -> str:
    return (
        "Fix the thing.\n\nSigned-off-by: A U Thor <author@example.org>\n---\n"
        " mm/frob.c | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\n"
        + diff
        + "-- \n2.39.5\n"
    )


def test_format_patch_body():
    commentary, diff = split_body(format_patch_body(SIMPLE))
    assert diff == SIMPLE
    assert (
        commentary == "Fix the thing.\n\nSigned-off-by: A U Thor <author@example.org>"
    )


def test_notes_below_the_line_are_kept():
    body = "Fix.\n---\nv2: rebased\n\n mm/frob.c | 2 +-\n 1 file changed\n\n" + SIMPLE
    commentary, diff = split_body(body)
    assert diff == SIMPLE
    assert commentary == "Fix.\n---\nv2: rebased"


def test_quoted_diff_in_reply_is_not_a_diff():
    quoted = "".join("> " + line + "\n" for line in SIMPLE.splitlines())
    text = (
        "On Monday Alice wrote:\n"
        + quoted
        + "\nLooks good.\n\nReviewed-by: Bob <bob@example.org>\n"
    )
    commentary, diff = split_body(text)
    assert diff is None
    assert commentary == text.rstrip()
    assert find_patch([text]) == (text.rstrip(), None)


def test_several_diffs_in_one_mail():
    text = (
        "Two changes.\n\nFirst:\n"
        + SIMPLE
        + "\nand the second one:\n\n"
        + OTHER
        + "\nThanks.\n"
    )
    commentary, diff = split_body(text)
    assert commentary == "Two changes.\n\nFirst:"
    assert diff == SIMPLE + OTHER
    patch = parse_diff(diff or "")
    assert patch is not None
    assert patch.paths == ("mm/frob.c", "mm/other.c")


def test_crlf_body():
    text = format_patch_body(SIMPLE).replace("\n", "\r\n")
    commentary, diff = split_body(text)
    assert diff == SIMPLE
    assert "\r" not in commentary
    assert compute_patch_id(text) == compute_patch_id(SIMPLE)


def test_plain_unified_diff_without_diff_line():
    diff = "--- frob.c.orig\t2005-01-07 12:00:00.000000000 +0100\n+++ frob.c\t2005-01-07 12:01:00.000000000 +0100\n@@ -1 +1 @@\n-a\n+b\n"
    commentary, found = split_body("Here it is:\n\n" + diff + "\nCheers\n")
    assert found == diff
    assert commentary == "Here it is:"
    patch = parse_diff(diff)
    assert patch is not None
    assert patch.paths == ("frob.c",)
    assert compute_patch_id(diff) is None  # git patch-id needs a "diff " line


def test_old_style_tree_directories():
    diff = (
        "diff -urN linux-2.6.10/drivers/net/x.c linux-2.6.10-mm1/drivers/net/x.c\n"
        "--- linux-2.6.10/drivers/net/x.c\t2005-01-01 00:00:00.000000000 +0000\n"
        "+++ linux-2.6.10-mm1/drivers/net/x.c\t2005-01-02 00:00:00.000000000 +0000\n"
        "@@ -1 +1 @@\n-a\n+b\n"
        "diff -urN linux-2.6.10/drivers/net/new.c linux-2.6.10-mm1/drivers/net/new.c\n"
        "--- linux-2.6.10/drivers/net/new.c\t1970-01-01 00:00:00.000000000 +0000\n"
        "+++ linux-2.6.10-mm1/drivers/net/new.c\t2005-01-02 00:00:00.000000000 +0000\n"
        "@@ -0,0 +1 @@\n+new\n"
        "--- linux.orig/kernel/sched.c\n+++ linux/kernel/sched.c\n@@ -5 +5 @@\n-x\n+y\n"
    )
    patch = parse_diff("Patch for 2.6.10:\n" + diff)
    assert patch is not None
    assert patch.diff == diff
    assert [(c.path, c.status) for c in patch.files] == [
        ("drivers/net/x.c", FileStatus.MODIFIED),
        ("drivers/net/new.c", FileStatus.ADDED),
        ("kernel/sched.c", FileStatus.MODIFIED),
    ]


def test_cvs_index_and_rcs_lines_name_the_file():
    """cvs diff run in a subdirectory names only the file; Index: and RCS file: go
    with the diff, so the stored diff reparses to the same paths."""
    diff = (
        "Index: ptrace.c\n"
        "===================================================================\n"
        "RCS file: /home/cvs/linux-2.5/arch/s390/kernel/ptrace.c,v\n"
        "retrieving revision 1.35\n"
        "diff -u -r1.35 ptrace.c\n"
        "--- ptrace.c      6 May 2005 18:59:13 -0000     1.35\n"
        "+++ ptrace.c      31 May 2005 16:50:50 -0000\n"
        "@@ -39,3 +39,4 @@\n"
        " #include <asm/system.h>\n"
        " #include <asm/uaccess.h>\n"
        "+#include <asm/unistd.h>\n"
        " \n"
    )
    commentary, found = split_body("Slightly modified:\n\n" + diff + "\nMartin\n")
    assert found == diff
    patch = parse_diff(diff)
    assert patch is not None
    assert patch.paths == ("arch/s390/kernel/ptrace.c",)
    assert list(diff_lines(diff)) == ["arch/s390/kernel/ptrace.c"]


def test_scratch_side_loses_in_every_header_form():
    hunk = "@@ -1 +1 @@\n-a\n+b\n"
    forms = [
        "--- drivers/block/rd.c\tFri May  3 03:26:05 2002\n+++ /tmp/rd.c\tMon May  6 2002\n",
        "diff -uN drivers/block/rd.c /tmp/rd.c\n--- drivers/block/rd.c\n+++ /tmp/rd.c\n",
        "===== rd.c 1.24 vs edited =====\n--- 1.24/drivers/block/rd.c\n+++ edited/rd.c\n",
    ]
    for header in forms:
        patch = parse_diff(header + hunk)
        assert patch is not None, header
        assert patch.paths == ("drivers/block/rd.c",), header


def test_diff_ends_where_hunks_stop():
    mangled = SIMPLE.replace(" }\n", "}\n")  # a mailer ate the context line's space
    commentary, diff = split_body("Fix.\n" + mangled + "more text\n")
    assert diff == mangled[: -len("}\n")]
    assert commentary == "Fix."
    # A hunk header whose counts run past the text: the diff stops at the text's end.
    short = SIMPLE.replace("@@ -1,3 +1,3 @@", "@@ -1,9 +1,9 @@")
    assert split_body(short)[1] == short


def test_blank_context_line_from_a_mailer():
    diff = SIMPLE.replace("@@ -1,3 +1,3 @@\n", "@@ -1,4 +1,4 @@\n \n")
    mangled = diff.replace("\n \n", "\n\n", 1)  # trailing space stripped by the mailer
    assert split_body("Fix.\n" + mangled + "Thanks\n") == ("Fix.", mangled)
    assert compute_patch_id(mangled) == compute_patch_id(diff)


def test_no_newline_marker_inside_hunk():
    diff = (
        "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n"
        "-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n"
    )
    commentary, found = split_body("Text\n" + diff + "Trailing words\n")
    assert found == diff
    patch = parse_diff(diff)
    assert patch is not None
    assert (patch.added, patch.removed) == (1, 1)


def test_binary_without_literal_data():
    diff = "diff --git a/logo.png b/logo.png\nindex 1111111..2222222 100644\nBinary files a/logo.png and b/logo.png differ\n"
    patch = parse_diff(diff)
    assert patch is not None
    assert patch.files[0].binary
    assert patch.patch_id is not None


def test_quoted_unicode_path():
    diff = (
        'diff --git "a/t\\303\\251st file.txt" "b/t\\303\\251st file.txt"\n'
        "index 1111111..2222222 100644\n"
        '--- "a/t\\303\\251st file.txt"\n'
        '+++ "b/t\\303\\251st file.txt"\n'
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    patch = parse_diff(diff)
    assert patch is not None
    assert patch.paths == ("tést file.txt",)


def test_commentary_words_are_not_headers():
    text = "diff --git is what I ran\nIndex: 5\n--- not a diff\n+++ still not\nbye\n"
    assert split_body(text) == (text.rstrip(), None)


# --- parse_diff, diff_lines, find_patch --------------------------------------------------


def test_parse_diff_counts_and_id():
    patch = parse_diff(SIMPLE + OTHER)
    assert patch is not None
    assert patch.diff == SIMPLE + OTHER
    assert [(c.path, c.added, c.removed) for c in patch.files] == [
        ("mm/frob.c", 1, 1),
        ("mm/other.c", 1, 0),
    ]
    assert (patch.added, patch.removed) == (2, 1)
    assert patch.patch_id == compute_patch_id(SIMPLE + OTHER)
    assert parse_diff("no diff here\n") is None


def test_diff_lines():
    lines = diff_lines(SIMPLE.replace("+\treturn 2;", "+\treturn    2;  ") + OTHER)
    assert lines == {
        "mm/frob.c": (["return 2;"], ["return 1;"]),
        "mm/other.c": (["b"], []),
    }


def test_find_patch_combines_and_deduplicates_parts():
    commentary, patch = find_patch(["Body.\n" + SIMPLE, SIMPLE, OTHER])
    assert commentary == "Body."
    assert patch is not None
    assert patch.diff == SIMPLE + OTHER
    assert find_patch([]) == ("", None)


# --- compute_patch_id -------------------------------------------------------------------


def test_patch_id_ignores_commentary_line_numbers_and_whitespace():
    reference = compute_patch_id(SIMPLE)
    assert reference is not None and len(reference) == 40
    assert compute_patch_id(format_patch_body(SIMPLE)) == reference
    assert (
        compute_patch_id(SIMPLE.replace("@@ -1,3 +1,3 @@", "@@ -41,3 +42,3 @@ int x;"))
        == reference
    )
    assert compute_patch_id(SIMPLE.replace("\treturn 2;", "  return  2 ;")) == reference
    assert compute_patch_id(SIMPLE.replace("return 2", "return 3")) != reference
    assert compute_patch_id("just words\n") is None


def test_patch_id_stops_at_next_commit_line():
    text = (
        "commit "
        + "1" * 40
        + "\n\n    msg\n\n"
        + SIMPLE
        + "commit "
        + "2" * 40
        + "\n"
        + OTHER
    )
    assert compute_patch_id(text) == compute_patch_id(SIMPLE)


# --- normalise_path ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a/drivers/net/x.c", "drivers/net/x.c"),
        ("b/drivers/net/x.c", "drivers/net/x.c"),
        ("/dev/null", "/dev/null"),
        ('"a/t\\303\\251st"', "tést"),
        ('"b/tab\\there"', "tab\there"),
        ("linux-2.6.10/drivers/x.c", "drivers/x.c"),
        ("linux-2.6.11-rc2-mm1/mm/slab.c", "mm/slab.c"),
        ("linux.orig/kernel/sched.c", "kernel/sched.c"),
        ("kernel/sched.c", "kernel/sched.c"),
        ("include/linux-2.6/x.h", "include/linux-2.6/x.h"),
        ("sparse-0.6.4.tar.gz", "sparse-0.6.4.tar.gz"),
        ("./Makefile", "Makefile"),
        # an absolute path into a checkout starts below its tree directory
        ("/usr/src/linux-2.4.18/drivers/net/x.c", "drivers/net/x.c"),
        ("/usr/src/linux/include/linux/fs.h", "include/linux/fs.h"),
        ("/home/me/trees/linux.orig/mm/slab.c", "mm/slab.c"),
        ("/tmp/x.c", "/tmp/x.c"),  # outside any tree: stays, a scratch copy
        ("edited/./sr_ioctl.c", "edited/sr_ioctl.c"),
    ],
)
def test_normalise_path(raw, expected):
    assert normalise_path(raw) == expected


# --- properties -------------------------------------------------------------------------

DIFF_LINES = st.sampled_from(
    [
        "diff --git a/x b/x",
        "diff -u a b",
        "Index: x",
        "=====",
        "index 1234..5678 100644",
        "new file mode 100644",
        "rename from x",
        "rename to y",
        "--- a/x",
        "+++ b/x",
        "--- /dev/null",
        "@@ -1 +1 @@",
        "@@ -1,2 +1,3 @@ f",
        "@@ -0,0 +1 @@",
        "@@ -1,-5 +1,99999999999 @@",
        "+a",
        "-b",
        " c",
        "",
        "\\ No newline at end of file",
        "GIT binary patch",
        "literal 5",
        "Hcmb=7",
        "Binary files a/x and b/x differ",
        "-- ",
        "____________________",
        "> +quoted",
        "commit " + "a" * 40,
        "\r",
        "+\t x \r",
    ]
)
DIFFISH = st.lists(st.one_of(DIFF_LINES, st.text(max_size=20)), max_size=40).map(
    "\n".join
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), DIFFISH))
def test_never_raises(text):
    commentary, diff = split_body(text)
    assert isinstance(commentary, str)
    patch = parse_diff(text)
    if diff is not None:
        assert patch is not None
    pid = compute_patch_id(text)
    assert pid is None or len(pid) == 40
    diff_lines(text)
    find_patch([text, text])


@st.composite
def file_diffs(draw):
    """Well-formed git file diffs with hunks, distinct names."""
    names = draw(
        st.lists(
            st.from_regex(r"[a-z]{1,8}(/[a-z]{1,8})?", fullmatch=True),
            min_size=1,
            max_size=5,
            unique=True,
        )
    )
    files = []
    for name in names:
        hunks = []
        for _ in range(draw(st.integers(1, 3))):
            body = draw(
                st.lists(
                    st.tuples(
                        st.sampled_from("+- "), st.text("ab \t(){};=xyz", max_size=12)
                    ),
                    min_size=1,
                    max_size=8,
                )
            )
            old = sum(1 for marker, _ in body if marker in "- ")
            new = sum(1 for marker, _ in body if marker in "+ ")
            start = draw(st.integers(1, 500))
            hunks.append(
                f"@@ -{start},{old} +{start},{new} @@\n"
                + "".join(m + t + "\n" for m, t in body)
            )
        files.append(
            f"diff --git a/{name} b/{name}\nindex 1111111..2222222 100644\n--- a/{name}\n+++ b/{name}\n"
            + "".join(hunks)
        )
    return files


@settings(max_examples=200, deadline=None)
@given(file_diffs(), st.randoms(use_true_random=False))
def test_patch_id_ignores_file_order(files, rng):
    shuffled = list(files)
    rng.shuffle(shuffled)
    assert compute_patch_id("".join(files)) == compute_patch_id("".join(shuffled))
    assert parse_diff("".join(files)) is not None


@settings(max_examples=200, deadline=None)
@given(file_diffs(), st.integers(0, 2**32))
def test_patch_id_ignores_whitespace_inside_lines(files, seed):
    rng = random.Random(seed)
    text = "".join(files)
    changed = []
    for line in text.split("\n"):
        if line[:1] in ("+", "-", " ") and not line.startswith(("--- ", "+++ ")):
            body = "".join(
                char + rng.choice(["", " ", "\t", "  "]) for char in line[1:]
            )
            line = line[:1] + body.replace(" ", rng.choice([" ", "", "\t"]), 1)
        changed.append(line)
    assert compute_patch_id("\n".join(changed)) == compute_patch_id(text)


PATH_PARTS = st.sampled_from(
    [
        "a",
        "b",
        ".",
        "linux-2.6.10",
        "linux.orig",
        '"a',
        'x"',
        "\\303",
        "dev",
        "null",
        "src",
        "x.c",
        " ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(PATH_PARTS, max_size=6).map("/".join)))
def test_normalise_path_idempotent(path):
    once = normalise_path(path)
    assert normalise_path(once) == once


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        PATH_PARTS | st.sampled_from(["1.24", "edited", "tmp", "", "x.c~"]), max_size=5
    ).map("/".join),
    st.lists(
        PATH_PARTS | st.sampled_from(["1.24", "edited", "tmp", "", "x.c~"]), max_size=5
    ).map("/".join),
    st.one_of(st.none(), st.lists(PATH_PARTS, max_size=3).map("/".join)),
)
def test_file_path_is_a_normalised_path(old, new, named):
    """Whatever the sides, choosing never raises and gives a normalise_path fixed
    point, so a path read from the stored diff again is the same path."""
    path = file_path(old, new, named=named)
    assert path is None or normalise_path(path) == path


@settings(max_examples=100, deadline=None)
@given(file_diffs())
def test_split_body_finds_exactly_the_diff(files):
    diff = "".join(files)
    commentary, found = split_body(
        "Subject words\n\nSigned-off-by: X <x@y>\n---\n" + diff + "-- \n2.39.5\n"
    )
    assert found == diff
    assert commentary == "Subject words\n\nSigned-off-by: X <x@y>"


_DIFF_LINE = st.text(
    alphabet=st.sampled_from(list("ab \t{}();\u00a0\u2028x1")), max_size=12
)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a.c", "lib/c.h", "mm/frob.c"]),
            st.lists(_DIFF_LINE, min_size=1, max_size=5),
        ),
        min_size=1,
        max_size=3,
        unique_by=lambda item: item[0],
    )
)
def test_parse_diff_with_lines_gives_diff_lines_when_asked(files) -> None:
    import e2g.mail.patch as patch

    text = "".join(
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,{len(lines)} +1,{len(lines)} @@\n"
        + "".join(f"-{line}\n" for line in lines)
        + "".join(f"+{line} \n" for line in lines)
        for path, lines in files
    )
    calls = []
    original = patch._collapse

    def counting(line: str) -> str:
        calls.append(line)
        return original(line)

    patch._collapse = counting
    try:
        parsed, lines = patch.parse_diff_with_lines(text)
        assert parsed == parse_diff(text)
        assert calls == []  # nothing collapsed before the lines are asked for
        assert dict(lines) == diff_lines(text)
        assert lines == diff_lines(text) and list(lines) == list(diff_lines(text))
    finally:
        patch._collapse = original


def test_weights_from_the_one_scan_equal_a_rescan_of_the_stored_diff() -> None:
    """find_patch() weighs each file from the lines of its one scan of the mail; the
    matcher later reads diff_lines() of the stored diff. They must agree, or the
    matcher's bounds would be wrong (every mail of tests/data/mail, wrapped or old)."""
    from datetime import UTC, datetime

    from e2g.mail.message import parse_message
    from e2g.mail.patch import file_weights
    from e2g.model.mail import Message, Origin, RawMessage

    mails = sorted((Path(__file__).parents[1] / "data" / "mail").glob("*.eml"))
    checked = 0
    for path in mails:
        raw = RawMessage(path.read_bytes(), Origin(path.name, "0"))
        parsed = parse_message(raw, now=datetime(2026, 1, 1, tzinfo=UTC))
        if not isinstance(parsed, Message) or parsed.patch is None:
            continue
        rescanned = file_weights(parsed.patch.diff)
        for change in parsed.patch.files:
            assert change.weight == rescanned.get(change.path, 0.0), path.name
        checked += 1
    assert checked >= 20
