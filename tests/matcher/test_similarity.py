"""Diff and subject similarity: identical, drifted, edited, unrelated."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from e2g.matcher.similarity import diff_similarity, pair_files, subject_similarity

# Added/removed lines of a real-looking liburing change (test/helpers.c), as
# diff_lines returns them: whitespace-collapsed, without the +/- marker.
ADDED = [
    "int t_create_socket_pair(int fd[2], bool stream)",
    "{",
    "int ret;",
    "int type = stream ? SOCK_STREAM : SOCK_DGRAM;",
    "int val;",
    "struct sockaddr_in serv_addr;",
    "struct sockaddr *paddr;",
    "socklen_t paddrlen;",
    "type |= SOCK_CLOEXEC;",
    "fd[0] = socket(AF_INET, type, 0);",
    "if (fd[0] < 0)",
    "return errno;",
    "fd[1] = socket(AF_INET, type, 0);",
    "if (fd[1] < 0) {",
    "ret = errno;",
    "close(fd[0]);",
    "return ret;",
    "}",
    "val = 1;",
    "if (setsockopt(fd[0], SOL_SOCKET, SO_REUSEADDR, &val, sizeof(val)))",
]
REMOVED = ["int t_create_socket_pair(int fd[2])", "return -1;"]
UNRELATED_ADDED = [
    '.TH io_uring_prep_splice 3 "March 13, 2022" "liburing-2.2"',
    ".SH NAME",
    "io_uring_prep_splice \\- prepare an splice request",
    ".SH SYNOPSIS",
    ".nf",
    ".B #include <fcntl.h>",
    ".B #include <liburing.h>",
    '.BI "void io_uring_prep_splice(struct io_uring_sqe *" sqe ","',
    ".fi",
    ".SH DESCRIPTION",
    "}",
    "",
]


def lines(
    path: str, added: list[str], removed: list[str]
) -> dict[str, tuple[list[str], list[str]]]:
    return {path: (added, removed)}


def test_identical_diff_is_one() -> None:
    diff = lines("test/helpers.c", ADDED, REMOVED)
    assert diff_similarity(diff, diff) == 1.0


def test_context_drift_is_one() -> None:
    # The same +/- lines applied elsewhere, in another order of hunks.
    commit = lines("test/helpers.c", ADDED, REMOVED)
    mail = lines("test/helpers.c", ADDED[10:] + ADDED[:10], list(reversed(REMOVED)))
    assert diff_similarity(commit, mail) == 1.0


def test_one_line_maintainer_edit_stays_high() -> None:
    edited = list(ADDED)
    edited[5] = "struct sockaddr_in6 serv_addr;"
    score = diff_similarity(
        lines("test/helpers.c", ADDED, []), lines("test/helpers.c", edited, [])
    )
    assert 0.9 < score < 1.0


def test_one_line_replaced_outright_still_above_point_eight() -> None:
    edited = list(ADDED)
    edited[12] = "/* completely different statement here */"
    score = diff_similarity(lines("a.c", ADDED, []), lines("a.c", edited, []))
    assert 0.8 < score < 0.99


def test_unrelated_diff_is_low() -> None:
    commit = lines("test/helpers.c", ADDED, REMOVED)
    mail = lines("man/io_uring_prep_splice.3", UNRELATED_ADDED, [])
    assert diff_similarity(commit, mail) < 0.2
    same_path = lines("test/helpers.c", UNRELATED_ADDED, [])
    assert diff_similarity(commit, same_path) < 0.2


def test_files_pair_by_basename_when_top_dirs_differ() -> None:
    commit = lines("fs/io_uring.c", ADDED, REMOVED)
    mail = lines("linux/fs/io_uring.c", ADDED, REMOVED)
    assert diff_similarity(commit, mail) == 1.0


def test_missing_file_costs_its_lines() -> None:
    commit = {"a.c": (ADDED, []), "b.c": (ADDED[:5], [])}
    mail = {"a.c": (ADDED, [])}
    score = diff_similarity(commit, mail)
    assert 0.8 < score < 1.0


def test_added_and_removed_lines_do_not_mix() -> None:
    commit = lines("a.c", ADDED, [])
    mail = lines("a.c", [], ADDED)
    assert diff_similarity(commit, mail) == 0.0


def test_line_free_diffs_compare_by_files() -> None:
    renames = {"new/name.c": ([], [])}
    assert diff_similarity(renames, renames) == 1.0
    assert diff_similarity(renames, {"other.c": ([], [])}) == 0.0
    assert diff_similarity({}, {}) == 0.0


def test_pair_files_reports_leftovers() -> None:
    pairs, commit_only, mail_only = pair_files(
        ["a/x.c", "b/y.c", "z.c"], ["c/x.c", "z.c", "w.c"]
    )
    assert sorted(pairs) == [("a/x.c", "c/x.c"), ("z.c", "z.c")]
    assert commit_only == ["b/y.c"]
    assert mail_only == ["w.c"]


def test_ambiguous_basenames_do_not_pair() -> None:
    pairs, _, _ = pair_files(["a/Makefile", "b/Makefile"], ["c/Makefile"])
    assert pairs == []


def test_subject_similarity() -> None:
    assert subject_similarity("io_uring: fix x", "io_uring: fix x") == 1.0
    assert subject_similarity("fix x in y", "y: fix x in") > 0.7
    assert (
        subject_similarity(
            "man: add io_uring_prep_splice", "test: rewrite socket helper"
        )
        < 0.5
    )
    assert subject_similarity("", "anything") == 0.0


_line = st.text(alphabet="abc{}; ()=+-", max_size=12)
_side = st.lists(_line, max_size=8)
_diff = st.dictionaries(
    st.sampled_from(["a.c", "b/a.c", "x/y.h", "z"]), st.tuples(_side, _side), max_size=3
)


@given(_diff, _diff)
def test_similarity_bounded_and_nearly_symmetric(one, other) -> None:
    forward = diff_similarity(one, other)
    backward = diff_similarity(other, one)
    assert 0.0 <= forward <= 1.0
    assert abs(forward - backward) < 0.2


@given(_diff)
def test_self_similarity_is_one_when_there_are_lines(diff) -> None:
    has_lines = any(added or removed for added, removed in diff.values())
    expected = 1.0 if (has_lines or diff) else 0.0
    assert diff_similarity(diff, diff) == expected


def test_a_revert_is_not_an_edit_of_the_patch() -> None:
    # liburing 15cc446cb8 reverts a one-line fix: the lines swap sides, and the fuzzy
    # pairing must not take "x;" -> "x = { };" for a light edit.
    patch = lines(
        "test/232c93d07b74.c",
        ["char buff[RECV_BUFF_SIZE] = { };"],
        ["char buff[RECV_BUFF_SIZE];"],
    )
    revert = lines(
        "test/232c93d07b74.c",
        ["char buff[RECV_BUFF_SIZE];"],
        ["char buff[RECV_BUFF_SIZE] = { };"],
    )
    assert diff_similarity(revert, patch) == 0.0


def test_lightly_edited_line_earns_partial_credit() -> None:
    ours = lines("a.c", ["ret = io_uring_submit(ring);"], [])
    theirs = lines("a.c", ["ret = io_uring_submit(&ring);"], [])
    assert 0.5 < diff_similarity(ours, theirs) < 1.0


def test_a_posted_diff_contained_in_a_commit_that_added_tests() -> None:
    from e2g.matcher.similarity import diff_overlap

    posted = {
        "evaluate.c": (
            [
                "if (size == bits) return ctype;",
                "if (size != bits) index = cast(index);",
            ],
            [
                "if (size >= bits) return ctype;",
                "if (size < bits) index = cast(index);",
            ],
        )
    }
    tests = {
        f"validation/t{n}.c": (
            [f"int check_{n}_{i}(void) {{ return {i}; }}" for i in range(40)],
            [],
        )
        for n in range(3)
    }
    overlap = diff_overlap({**posted, **tests}, posted)
    assert overlap.similarity < 0.2
    assert overlap.containment == 1.0


_LINE = st.sampled_from(
    ["}", "", "return 0;", "int ret;", "ret = foo(bar);", "ret = foo(baz);", "x++;"]
    + [f"static int helper_{n}(void);" for n in range(4)]
)
_SIDE = st.lists(_LINE, max_size=12)
_DIFF = st.dictionaries(
    st.sampled_from(["a.c", "b.c", "sub/a.c", "Makefile"]),
    st.tuples(_SIDE, _SIDE),
    max_size=3,
)


@given(_DIFF, _DIFF, st.floats(0.01, 1.0))
def test_a_bounded_overlap_never_hides_a_reachable_similarity(
    ours: dict[str, tuple[list[str], list[str]]],
    theirs: dict[str, tuple[list[str], list[str]]],
    needed: float,
) -> None:
    from e2g.matcher.similarity import diff_overlap

    exact = diff_overlap(ours, theirs)
    bounded = diff_overlap(ours, theirs, needed=needed, contained=0.9)
    assert exact.exact
    if bounded.exact:
        assert bounded == exact
    else:
        # Only an answer below what was needed may be a bound, and never below truth.
        assert bounded.similarity < needed and bounded.containment < 0.9
        assert bounded.similarity >= exact.similarity - 1e-6
        assert bounded.containment >= exact.containment - 1e-6


def test_unlike_diffs_get_a_bound_instead_of_a_line_comparison() -> None:
    from e2g.matcher.similarity import diff_overlap

    commit = {
        "test/Makefile": (["multi-op.c \\"], []),
        "test/multi-op.c": (ADDED, REMOVED),
    }
    mail = {
        "test/Makefile": (["splice.c \\"], []),
        "man/io_uring_prep_splice.3": (UNRELATED_ADDED, []),
    }
    overlap = diff_overlap(commit, mail, needed=0.3)
    assert not overlap.exact
    assert overlap.similarity < 0.3
    assert overlap.similarity >= diff_overlap(commit, mail).similarity


def reference_pairs(
    commit_paths: list[str], mail_paths: list[str]
) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """pair_files() as DESIGN.md states it, without its shortcuts."""

    def unique(paths: list[str]) -> dict[str, str]:
        names = [path.rsplit("/", 1)[-1] for path in paths]
        return {n: p for n, p in zip(names, paths, strict=True) if names.count(n) == 1}

    pairs = [(path, path) for path in commit_paths if path in mail_paths]
    rest_commit = [p for p in commit_paths if p not in mail_paths]
    rest_mail = [p for p in mail_paths if p not in commit_paths]
    theirs = unique(rest_mail)
    pairs += [(p, theirs[n]) for n, p in unique(rest_commit).items() if n in theirs]
    return (
        pairs,
        [p for p in commit_paths if p not in {c for c, _ in pairs}],
        [p for p in mail_paths if p not in {m for _, m in pairs}],
    )


_PATHS = st.lists(
    st.builds(
        "/".join,
        st.lists(
            st.sampled_from(["a", "b", "src", "Makefile", "x.c", "y.h"]),
            min_size=1,
            max_size=3,
        ),
    ),
    unique=True,
    max_size=6,
)


@given(_PATHS, _PATHS)
def test_pair_files_equals_its_plain_statement(
    commit: list[str], mail: list[str]
) -> None:
    assert pair_files(commit, mail) == reference_pairs(commit, mail)


def test_subjects_naming_other_versions_are_half_as_alike() -> None:
    from e2g.matcher.similarity import subject_similarity

    same = subject_similarity("sparse v0.6.2-rc2", "sparse v0.6.2-rc2 is now out.")
    other = subject_similarity("sparse v0.6.2-rc2", "sparse v0.6.1-rc2 is now out.")
    assert other < 0.5 < same
    notes = (
        "update draft release notes to 1.7.10",
        "update draft release notes to 1.7.9",
    )
    assert subject_similarity(*notes) < 0.5
    # A version on one side only, or none at all, is no sign of another change.
    assert subject_similarity("bump to 2.39", "bump to version") > 0.5
    assert subject_similarity("mm: fix x", "mm: fix x") == 1.0
