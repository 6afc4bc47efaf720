"""Reading commits from real git repositories built in tmp_path."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from e2g.errors import RepoError, UnknownCommit
from e2g.git.repo import Repo
from e2g.model import MAX_DIFF, Address, FileStatus, Trailer
from tests.conftest import clone
from tests.ingest.conftest import BASE, commit_all, git_patch_ids, repo_path, run_git


def read(history: dict[str, str | Path], name: str):
    repo = Repo.open(repo_path(history))
    (commit,) = list(repo.commits([str(history[name])]))
    return commit


def test_rev_list_skips_merges_and_counts_them(history) -> None:
    repo = Repo.open(repo_path(history))
    shas = repo.rev_list([])
    assert len(shas) == 9
    assert history["merge"] not in shas
    assert shas[-1] == history["root"]
    assert repo.count_merges([]) == 1
    assert (
        repo.rev_list([f"{history['binary']}..main"], all_refs=False)[-1]
        == history["empty"]
    )
    assert len(repo.rev_list([], all_refs=True)) == 9


def test_commits_follow_the_order_given_and_skip_merges(history) -> None:
    repo = Repo.open(repo_path(history))
    wanted = [str(history[name]) for name in ("unicode", "root", "merge", "binary")]
    got = [commit.sha for commit in repo.commits(wanted, batch_size=2)]
    assert got == [history["unicode"], history["root"], history["binary"]]


def test_patch_ids_equal_git_patch_id_stable(history) -> None:
    repo = Repo.open(repo_path(history))
    expected = git_patch_ids(repo_path(history))
    commits = list(repo.commits(repo.rev_list([])))
    assert {c.sha: c.patch.patch_id for c in commits if c.patch.patch_id} == expected
    assert history["empty"] not in expected  # git prints no id for an empty commit


def test_root_commit_adds_its_files(history) -> None:
    commit = read(history, "root")
    assert commit.patch.paths == (".mailmap", "src/queue.c")
    assert commit.patch.files[1].status is FileStatus.ADDED
    assert commit.patch.added == 41
    assert commit.subject == "initial import"


def test_rename_fields_trailers_mailmap_and_dates(history) -> None:
    commit = read(history, "rename")
    (change,) = commit.patch.files
    assert (change.path, change.old_path, change.status) == (
        "src/ring.c",
        "src/queue.c",
        FileStatus.RENAMED,
    )
    assert (change.added, change.removed) == (1, 1)
    assert commit.author == Address("Jöhn Doe", "john@new.example")  # .mailmap applied
    assert commit.author_date == BASE + timedelta(hours=1)
    assert commit.author_date.utcoffset() == timedelta(hours=2)
    assert commit.commit_date == BASE + timedelta(hours=1, minutes=30)
    assert commit.subject_key == "src: rename queue.c to ring.c"
    assert commit.trailers[0] == Trailer(
        "Link", "https://lore.kernel.org/r/20230501.1-1-john%40old.example"
    )
    assert commit.body.startswith("Body text.")


def test_binary_only_commit(history) -> None:
    commit = read(history, "binary")
    (change,) = commit.patch.files
    assert change.path == "logo.png"
    assert change.binary
    assert commit.patch.patch_id is not None


def test_empty_commit_has_an_empty_patch(history) -> None:
    commit = read(history, "empty")
    assert commit.patch.files == ()
    assert commit.patch.diff == ""
    assert commit.patch.patch_id is None
    assert commit.subject == "empty: nothing changes"


def test_messages_in_other_encodings(history) -> None:
    latin = read(history, "latin")
    # git commit took the latin-1 message for latin-1 and stored it as UTF-8.
    assert latin.subject == "latin: add café file"
    assert latin.body == "Écrit en français."
    assert latin.patch.paths == ("latin.txt",)
    assert "\ufffd" in latin.patch.diff
    bad = read(history, "bad-utf8")
    assert bad.subject == "bad: \ufffd\ufffd bytes in message"
    unicode = read(history, "unicode")
    assert unicode.subject == "docs: 日本語 ✓ title"


def test_declared_encoding_is_converted(tmp_path: Path) -> None:
    run_git(tmp_path, "init", "-q")
    (tmp_path / "a").write_text("a\n")
    run_git(tmp_path, "add", "-A")
    run_git(
        tmp_path,
        "-c",
        "i18n.commitEncoding=ISO-8859-1",
        "commit",
        "-q",
        "-F",
        "-",
        stdin="fix: naïve café\n".encode("latin-1"),
    )
    sha = run_git(tmp_path, "rev-parse", "HEAD").strip()
    (commit,) = list(Repo.open(tmp_path).commits([sha]))
    assert commit.subject == "fix: naïve café"


def test_resolve_accepts_what_git_accepts(history) -> None:
    repo = Repo.open(repo_path(history))
    assert repo.resolve("HEAD~1") == history["main-side"]
    assert repo.resolve(str(history["root"])[:8]) == history["root"]
    assert repo.resolve("v1.0") == history["binary"]
    with pytest.raises(UnknownCommit, match="unknown revision 'nope'"):
        repo.resolve("nope")
    with pytest.raises(UnknownCommit, match="unknown revision '--all'"):
        repo.resolve("--all")


def test_rev_list_unknown_revision(history) -> None:
    repo = Repo.open(repo_path(history))
    with pytest.raises(UnknownCommit, match="unknown revision 'no-such-branch'"):
        repo.rev_list(["no-such-branch"])


def test_commits_accept_revision_names(history) -> None:
    repo = Repo.open(repo_path(history))
    (commit,) = list(repo.commits(["v1.0"]))
    assert commit.sha == history["binary"]


def test_open_finds_the_root_from_a_subdirectory(history) -> None:
    repo = Repo.open(repo_path(history) / "src")
    assert repo.root == repo_path(history)


def test_open_outside_a_repository(tmp_path: Path) -> None:
    with pytest.raises(RepoError, match=r"not a git repository: .* \(or any parent\)"):
        Repo.open(tmp_path)
    with pytest.raises(RepoError, match="no such directory"):
        Repo.open(tmp_path / "missing")


def test_open_from_inside_the_git_dir_and_from_a_linked_work_tree(
    history, tmp_path: Path
) -> None:
    assert Repo.open(repo_path(history) / ".git").root == repo_path(history)
    linked = tmp_path / "linked"
    run_git(repo_path(history), "worktree", "add", "-q", "--detach", str(linked))
    repo = Repo.open(linked)
    assert repo.root == linked
    assert repo.shallow_boundary() == frozenset()
    (commit,) = list(repo.commits([str(history["rename"])]))
    assert commit.patch.patch_id == read(history, "rename").patch.patch_id


def test_unborn_head_has_no_commits(tmp_path: Path) -> None:
    run_git(tmp_path, "init", "-q")
    repo = Repo.open(tmp_path)
    assert repo.rev_list([]) == []
    assert repo.count_merges([]) == 0


def test_bare_clone_reads_the_same(history, tmp_path: Path) -> None:
    bare = clone(repo_path(history), tmp_path / "bare.git", "--bare")
    repo = Repo.open(bare)
    assert repo.root == bare
    (commit,) = list(repo.commits([str(history["rename"])]))
    assert commit.author.email == "john@new.example"  # HEAD:.mailmap in a bare repo
    assert commit.patch.patch_id == read(history, "rename").patch.patch_id


def test_user_diff_config_does_not_change_patch_ids(history, tmp_path: Path) -> None:
    copy = clone(repo_path(history), tmp_path / "clone")
    for setting in (
        "diff.noprefix=true",
        "diff.suppressBlankEmpty=true",
        "color.ui=always",
        "diff.context=1",
    ):
        key, value = setting.split("=")
        run_git(copy, "config", key, value)
    repo = Repo.open(copy)
    expected = git_patch_ids(repo_path(history))
    commits = list(repo.commits(repo.rev_list([])))
    assert {c.sha: c.patch.patch_id for c in commits if c.patch.patch_id} == expected


def test_shallow_clone_boundary_has_no_diff(history, tmp_path: Path) -> None:
    shallow = clone(repo_path(history), tmp_path / "shallow", "--depth", "3")
    repo = Repo.open(shallow)
    shas = repo.rev_list([])
    assert history["root"] not in shas
    commits = {commit.sha: commit for commit in repo.commits(shas)}
    side = commits[str(history["main-side"])]
    assert side.patch.paths == ("main.c",)
    assert side.patch.patch_id == read(history, "main-side").patch.patch_id
    boundary = (shallow / ".git" / "shallow").read_text().split()
    assert boundary == [history["unicode"]]
    # git would show the grafted commit as adding the whole tree
    assert commits[str(history["unicode"])].patch.files == ()
    only = Repo.open(clone(repo_path(history), tmp_path / "depth-one", "--depth", "1"))
    (tip,) = list(only.commits(only.rev_list([])))
    # A depth-1 merge has lost its parents: git lists it as a root commit.
    assert tip.sha == history["merge"]
    assert tip.patch.files == ()


def test_huge_commit_is_bounded_but_lists_every_file(tmp_path: Path) -> None:
    run_git(tmp_path, "init", "-q")
    line = "x" * 99 + "\n"
    lines = (MAX_DIFF // 2) // len(line) + 10
    (tmp_path / "a.txt").write_text(line * lines)
    (tmp_path / "b.txt").write_text(line * lines)
    (tmp_path / "c.c").write_text("int c;\nint d;\n")
    sha = commit_all(tmp_path, b"huge\n", when=0)
    (commit,) = list(Repo.open(tmp_path).commits([sha]))
    patch = commit.patch
    assert [(f.path, f.added) for f in patch.files] == [
        ("a.txt", lines),
        ("b.txt", lines),
        ("c.c", 2),
    ]
    assert patch.added == 2 * lines + 2
    assert len(patch.diff) <= MAX_DIFF
    assert patch.diff.startswith("diff --git a/a.txt b/a.txt")
    assert "b.txt" not in patch.diff
    assert patch.patch_id is None  # the diff was cut: no id rather than a wrong one


def test_stopping_early_ends_git(history) -> None:
    import gc
    import warnings

    repo = Repo.open(repo_path(history))
    shas = repo.rev_list([])
    # Earlier tests' garbage must not be collected inside the window below: the
    # CI once counted two of their unclosed files against this test.
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        stream = repo.commits(shas)
        first = next(stream)
        stream.close()
        gc.collect()
    assert first.sha == history["main-side"]
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert not leaks


def test_mailmap_lookup(history) -> None:
    repo = Repo.open(repo_path(history))
    got = repo.mailmap_lookup(
        [Address("Jöhn Doe", "john@old.example"), Address("Other", "o@example.org")]
    )
    assert got == [
        Address("Jöhn Doe", "john@new.example"),
        Address("Other", "o@example.org"),
    ]


def test_dated_rev_list_gives_commit_times(history) -> None:
    repo = Repo.open(repo_path(history))
    dated, merges = repo.dated_rev_list([])
    assert [sha for sha, _ in dated] == repo.rev_list([])
    assert (
        merges
        == int(run_git(repo_path(history), "rev-list", "--count", "--merges", "HEAD"))
        == 1
    )
    stamps = dict(dated)
    root = read(history, "root")
    assert stamps[str(history["root"])] == int(root.commit_date.timestamp())


def test_commits_without_diffs_keep_files_and_metadata(history) -> None:
    """Read without diffs (git compares trees, no file is read): every file the
    diff names, in its order, and no counts."""
    repo = Repo.open(repo_path(history))
    shas = repo.rev_list([])
    full = {commit.sha: commit for commit in repo.commits(shas)}
    light = list(repo.commits(shas, diffs=False))
    assert [commit.sha for commit in light] == shas
    for commit in light:
        other = full[commit.sha]
        assert (commit.subject, commit.author, commit.commit_date, commit.trailers) == (
            other.subject,
            other.author,
            other.commit_date,
            other.trailers,
        )
        assert commit.patch.diff == "" and commit.patch.patch_id is None
        assert commit.patch.added == commit.patch.removed == 0
        if commit.sha != str(history["rename"]):
            assert commit.patch.paths == other.patch.paths, commit.subject
    by_sha = {commit.sha: commit for commit in light}
    assert by_sha[str(history["binary"])].patch.paths == ("logo.png",)
    assert by_sha[str(history["unicode"])].patch.paths == ("unicode.md",)
    # Without rename detection a rename is a deletion and an addition.
    assert set(by_sha[str(history["rename"])].patch.paths) == {
        "src/queue.c",
        "src/ring.c",
    }


@pytest.mark.parametrize("size", [1, 7, 64])
def test_reading_in_tiny_blocks_gives_the_same_commits(
    history, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    import e2g.git.commits as gitrepo

    repo = Repo.open(repo_path(history))
    shas = repo.rev_list([])
    expected = list(repo.commits(shas))
    light = list(repo.commits(shas, diffs=False))
    monkeypatch.setattr(gitrepo, "_READ_SIZE", size)
    assert list(repo.commits(shas)) == expected
    assert list(repo.commits(shas, diffs=False)) == light
