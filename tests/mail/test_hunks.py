"""mail.hunks: unidiff behind one wrapper, the tolerant scanner behind it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from e2g.mail import hunks
from e2g.mail.hunks import FileHunks, hunks_of
from tests.conftest import CORPUS

DATA = Path(__file__).resolve().parents[1] / "data"


def _shape(files: list[FileHunks]) -> list[tuple[object, ...]]:
    """What both readers must agree on (a hunk's `end` is where each stopped
    looking: after its last line, or at the next header)."""
    return [(file.path, hunk[:-1]) for file in files for hunk in file.hunks]


def _both(text: str) -> tuple[list[FileHunks] | None, list[FileHunks]]:
    lines = text.splitlines()
    counted = hunks._counted(lines)
    scanned = hunks._files(lines, hunks._scanned(lines))
    return (None if counted is None else hunks._files(lines, counted)), scanned


def _git_file(path: str, bodies: list[list[str]], *, quoted: bool = False) -> list[str]:
    old, new = (f'"a/{path}"', f'"b/{path}"') if quoted else (f"a/{path}", f"b/{path}")
    lines = [f"diff --git {old} {new}", "index 1111111..2222222 100644"]
    lines += [f"--- {old}", f"+++ {new}"]
    start = 1
    for body in bodies:
        old_count = sum(line[:1] in (" ", "-", "") for line in body)
        new_count = sum(line[:1] in (" ", "+", "") for line in body)
        lines.append(f"@@ -{start},{old_count} +{start},{new_count} @@ f(void)")
        lines += body
        start += 100
    return lines


BODY = ["  a", "-b", "+c", "", " d"]


def test_a_git_diff_is_read_by_unidiff_with_our_paths() -> None:
    text = "\n".join(_git_file("mm/x.c", [BODY, BODY]) + _git_file("lib/y.c", [BODY]))
    counted, scanned = _both(text + "\n")
    assert counted is not None and _shape(counted) == _shape(scanned)
    assert [(file.path, len(file.hunks)) for file in counted] == [
        ("mm/x.c", 2),
        ("lib/y.c", 1),
    ]
    first = counted[0].hunks[0]
    assert (first.old_start, first.old_count, first.new_count) == (1, 4, 4)
    assert first.lines == tuple(BODY)


def test_crlf_reads_as_lf() -> None:
    text = "\n".join(_git_file("mm/x.c", [BODY])) + "\n"
    assert hunks_of(text.replace("\n", "\r\n")) == hunks_of(text)
    assert hunks._counted(text.replace("\n", "\r\n").splitlines()) is not None


def test_quoted_paths_are_unquoted() -> None:
    text = "\n".join(_git_file("dir/\\303\\251t\\303\\251.c", [BODY], quoted=True))
    counted, scanned = _both(text + "\n")
    assert counted is not None and _shape(counted) == _shape(scanned)
    assert counted[0].path == "dir/été.c"


def test_old_tree_prefixes_are_not_renames() -> None:
    text = "\n".join(
        [
            "diff -urp linux-2.6.20.orig/mm/slab.c linux-2.6.20/mm/slab.c",
            "--- linux-2.6.20.orig/mm/slab.c\t2007-02-04 10:44:54.000000000 -0800",
            "+++ linux-2.6.20/mm/slab.c\t2007-02-05 10:44:54.000000000 -0800",
            "@@ -1,4 +1,4 @@",
            *BODY,
        ]
    )
    counted, scanned = _both(text + "\n")
    assert counted is not None and _shape(counted) == _shape(scanned)
    assert counted[0].path == "mm/slab.c"


def test_a_wrong_count_falls_back_to_the_scanner() -> None:
    lines = _git_file("mm/x.c", [BODY])
    lines[4] = "@@ -1,9 +1,9 @@ f(void)"  # the mailer cut the hunk short
    text = "\n".join(lines) + "\n"
    assert hunks._counted(text.splitlines()) is None
    (file,) = hunks_of(text)
    assert file.path == "mm/x.c" and file.hunks[0].lines == tuple(BODY)
    assert file.hunks[0].old_count == 9


def test_lines_after_a_counted_hunk_fall_back() -> None:
    """Text the scanner takes into a hunk that unidiff's counts leave out."""
    text = "\n".join([*_git_file("mm/x.c", [BODY]), "+extra"]) + "\n"
    assert hunks._counted(text.splitlines()) is None
    assert hunks_of(text)[0].hunks[0].lines == (*BODY, "+extra")


def test_no_newline_markers_are_left_out() -> None:
    body = ["-a", "\\ No newline at end of file", "+b", "\\ No newline at end of file"]
    text = "\n".join(_git_file("x", [body])) + "\n"
    counted, scanned = _both(text)
    assert counted is not None and _shape(counted) == _shape(scanned)
    assert counted[0].hunks[0].lines == ("-a", "+b")


def test_hunks_with_no_file_header_keep_an_empty_path() -> None:
    assert [file.path for file in hunks_of("@@ -1 +1 @@\n-a\n+b\n")] == [""]
    assert hunks_of("") == [] and hunks_of("no diff here\n") == []


_TEXT = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
    ),
    max_size=12,
)
# Hunk lines: a removed line starting "-- " before an added one starting "++ " is a
# file header to the scanner (see the module's docstring), so content never starts
# with a marker.
_CONTENT = _TEXT.filter(lambda text: not text.startswith(("-", "+", "\\")))
_LINE = st.one_of(
    st.builds(lambda text: " " + text, _CONTENT),
    st.builds(lambda text: "-" + text, _CONTENT),
    st.builds(lambda text: "+" + text, _CONTENT),
    st.just(""),
)
_PATH = st.sampled_from(
    ["mm/x.c", "lib/a b.c", "linux-2.6.11/fs/y.c", "Documentation/z.rst", "t"]
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            _PATH,
            st.booleans(),
            st.lists(st.lists(_LINE, min_size=1, max_size=8), min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=4,
    ),
    st.booleans(),
)
def test_unidiff_and_the_scanner_agree_on_well_formed_diffs(
    files: list[tuple[str, bool, list[list[str]]]], crlf: bool
) -> None:
    lines: list[str] = []
    for path, quoted, bodies in files:
        lines += _git_file(path, bodies, quoted=quoted)
    text = "\n".join(lines) + "\n"
    text = text.replace("\n", "\r\n") if crlf else text
    counted, scanned = _both(text)
    assert counted is not None, "a well-formed diff is unidiff's"
    assert _shape(counted) == _shape(scanned)
    assert hunks_of(text) == counted


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            _LINE,
            _TEXT,
            st.sampled_from(
                [
                    "@@ -1,2 +1 @@",
                    "--- a/x",
                    "+++ b/x",
                    "diff --git a/x b/x",
                    "\\ No newline at end of file",
                ]
            ),
        ),
        max_size=30,
    )
)
def test_any_text_reads_without_raising(lines: list[str]) -> None:
    text = "\n".join(lines)
    counted, scanned = _both(text)
    if counted is not None:
        assert _shape(counted) == _shape(scanned)
    assert hunks_of(text) in (counted, scanned)


def _real_texts() -> list[Path]:
    found = sorted((DATA / "mail").glob("*.eml"))
    for folder in ("mail", "patches"):
        found += sorted((CORPUS / "patchwork" / folder).glob("*"))
    return found


@pytest.mark.parametrize("path", _real_texts(), ids=lambda path: path.name)
def test_real_diffs_read_alike(path: Path) -> None:
    """Whole mails (headers and commentary too): what unidiff accepts, the scanner
    reads the same; what it rejects, the scanner reads."""
    text = path.read_bytes().decode("utf-8", "replace")
    counted, scanned = _both(text)
    if counted is not None:
        assert _shape(counted) == _shape(scanned)
    assert hunks_of(text) in (counted, scanned)


def test_the_web_view_colours_hunks_by_the_wrapper() -> None:
    """A removed `-- x` line is a removal; a non-git diff's `---`/`+++` lines are
    its file header (they were coloured as a removal and an addition)."""
    from e2g.web.render import diff_lines

    text = "\n".join(
        [
            "--- linux-2.6.20.orig/mm/slab.c",
            "+++ linux-2.6.20/mm/slab.c",
            "@@ -1,2 +1,2 @@",
            "--- x",
            " y",
            "+++ z",
        ]
    )
    assert [kind for kind, _ in diff_lines(text)] == [
        "meta",
        "meta",
        "hunk",
        "del",
        "ctx",
        "add",
    ]
