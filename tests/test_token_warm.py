"""`e2g tokens warm`: one walk of the history for every file (the same revisions
`git log -- PATH` gives each), the tree's files blamed ahead and read back byte for
byte as single-file use answers, what .gitattributes leaves out, a kill -9 in the
middle and the run after, a warm tree kept by the cache's bound, and a later
revision warmed by redoing only the files its commits changed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from e2g import config
from e2g.git.ancestry import Ancestry
from e2g.git.filehistory import file_history
from e2g.git.repo import Repo
from e2g.git.treehistory import touched_since, tree_histories
from tests.conftest import SAMPLE_ARCHIVES, git, sample_repo

ROOT = Path(__file__).resolve().parents[1]


class Builder:
    """Commits with fixed identities and dates, one second apart."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = 1_600_000_000
        root.mkdir(parents=True)
        git(root, "init", "-q", "-b", "main")

    def env(self) -> dict[str, str]:
        self.clock += 1
        date = f"{self.clock} +0000"
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": "/nonexistent",
            "GIT_AUTHOR_NAME": "A U Thor",
            "GIT_AUTHOR_EMAIL": "author@example.org",
            "GIT_COMMITTER_NAME": "C O Mitter",
            "GIT_COMMITTER_EMAIL": "committer@example.org",
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_DATE": date,
        }

    def commit(
        self, message: str, files: dict[str, str | bytes | None] | None = None
    ) -> str:
        for path, text in (files or {}).items():
            target = self.root / path
            if text is None:
                git(self.root, "rm", "-q", "-r", path)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, bytes):
                target.write_bytes(text)
            else:
                target.write_text(text)
            git(self.root, "add", path)
        git(self.root, "commit", "-q", "--allow-empty", "-m", message, env=self.env())
        return self.head()

    def head(self) -> str:
        return git(self.root, "rev-parse", "HEAD").strip()

    def merge(self, *branches: str, strategy: str | None = None) -> str:
        extra = ["-s", strategy] if strategy else []
        git(
            self.root,
            "merge",
            "-q",
            "--no-ff",
            *extra,
            "-m",
            f"merge {' '.join(branches)}",
            *branches,
            env=self.env(),
        )
        return self.head()


def body(name: str, lines: int, tag: str = "") -> str:
    return "".join(
        f"int {name}_{n}(int value) {{ return value + {n}; }} /* {tag} */\n"
        for n in range(lines)
    )


def build_tangled(root: Path) -> Builder:
    """A history with everything git's path simplification treats specially."""
    repo = Builder(root)
    repo.commit(
        "base",
        {
            "a.c": body("a", 30),
            "b.c": body("b", 30),
            "d.c": body("d", 10),
            "x/inner.c": body("inner", 5),
        },
    )
    repo.commit("a twice", {"a.c": body("a", 31)})
    git(root, "mv", "b.c", "lib-b.c")
    repo.commit("rename b")
    repo.commit("copy a", {"copy.c": body("a", 31, "copied"), "a.c": body("a", 32)})
    repo.commit("drop d", {"d.c": None})
    repo.commit("d again", {"d.c": body("d", 12)})
    git(root, "checkout", "-q", "-b", "side")
    repo.commit("side a", {"a.c": body("a", 32, "side"), "e.c": body("e", 3)})
    git(root, "checkout", "-q", "main")
    repo.commit("main lib", {"lib-b.c": body("b", 33)})
    repo.merge("side")
    git(root, "checkout", "-q", "-b", "ignored", "HEAD~1")
    repo.commit("ignored a", {"a.c": body("a", 40, "thrown away")})
    git(root, "checkout", "-q", "main")
    repo.merge("ignored", strategy="ours")
    for name in ("one", "two"):
        git(root, "checkout", "-q", "-b", name, "main")
        repo.commit(f"{name}", {f"{name}.c": body(name, 4)})
    git(root, "checkout", "-q", "-b", "three", "main")
    repo.commit("three a", {"a.c": body("a", 32, "three")})
    git(root, "checkout", "-q", "main")
    repo.merge("one", "two", "three")
    repo.commit("x becomes a file", {"x/inner.c": None})
    repo.commit("x file", {"x": body("x", 3)})
    # criss-cross: two branches merging each other, then main merging both
    git(root, "checkout", "-q", "-b", "left", "main")
    repo.commit("left", {"lib-b.c": body("b", 34, "left")})
    git(root, "checkout", "-q", "-b", "right", "main")
    repo.commit("right", {"d.c": body("d", 13, "right")})
    git(root, "checkout", "-q", "left")
    repo.merge("right")
    git(root, "checkout", "-q", "right")
    repo.merge("left~1")
    repo.commit("right again", {"d.c": body("d", 14, "right")})
    git(root, "checkout", "-q", "main")
    repo.merge("left", "right")
    return repo


def _shape(history: tuple[list, str | None]) -> tuple[object, ...]:
    revisions, tip = history
    return tip, sorted(
        (r.key, tuple(r.parents), r.blob, r.author, r.committed, r.subject)
        for r in revisions
    )


def test_one_walk_gives_each_file_the_history_git_log_gives_it(
    tmp_path: Path,
) -> None:
    """Merges (one that took a file from its second parent, `-s ours`, an octopus
    that took a file from its third, criss-cross), a rename, a copy, a file
    deleted and added back: every file's revisions, parents and blobs are those of
    file_history (`git log --parents -- PATH` per file), at HEAD and before."""
    repo = build_tangled(tmp_path / "repo")
    opened = Repo.open(repo.root)
    for rev in ("HEAD", "HEAD~3", "HEAD^2"):
        head = opened.resolve(rev)
        paths = [
            line
            for line in git(repo.root, "ls-tree", "-r", "--name-only", head).split("\n")
            if line
        ]
        shared = tree_histories(opened, head, paths)
        # A path that was a directory before: git counts the directory's changes
        # as the path's; the walk leaves it to file_history.
        assert {path for path, found in shared.items() if found is None} == (
            {"x"} & set(paths)
        )
        for path in paths:
            found = shared[path]
            if found is not None:
                assert _shape(found) == _shape(file_history(opened, head, path)), path
    head = opened.resolve("HEAD")
    walked = tree_histories(opened, head, ["a.c", "lib-b.c", "copy.c", "d.c"])
    lib = walked["lib-b.c"]
    assert lib is not None and any(r.path == "b.c" for r in lib[0])  # the rename
    a_c = walked["a.c"]
    assert a_c is not None
    subjects = {r.subject for r in a_c[0]}
    assert "ignored a" not in subjects  # -s ours: git log never goes there
    assert {"side a", "a twice", "three a"} <= subjects


# -- the warm, through the command line, against the sample's mail ------------------------


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[config.Settings, Path]:
    from e2g.api.core import ingest

    for path in SAMPLE_ARCHIVES:
        if not path.exists():
            pytest.skip(f"{path} is not there")
    root = tmp_path_factory.mktemp("sample-warm")
    repo = sample_repo(root / "repo")
    settings = config.resolve(data_dir=root / "data", env={}, home=root)
    ingest(settings, [str(path) for path in SAMPLE_ARCHIVES], workers=1)
    from e2g.api.match import match

    match(settings, [], repo=repo)
    return settings, repo


def e2g(
    data: Path, repo: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "e2g", "--data-dir", str(data), *args],
        capture_output=True,
        text=True,
        cwd=repo,
        env={
            **os.environ,
            "E2G_PAGER": "cat",
            "PYTHONPATH": str(ROOT),
            **(env or {}),
        },
        check=False,
        start_new_session=True,
    )


def fresh_data(settings: config.Settings, target: Path) -> Path:
    """A copy of the sample's store and index, without any token cache."""
    shutil.copytree(
        settings.data_dir,
        target,
        ignore=shutil.ignore_patterns("tokens", "token-trees"),
    )
    return target


def token_json(data: Path, repo: Path, path: str, rev: str = "HEAD") -> str:
    found = e2g(data, repo, "blame", path, rev, "--tokens", "--json")
    assert found.returncode == 0, found.stderr
    return found.stdout


def text_files(repo: Path, rev: str = "HEAD") -> list[str]:
    listed = git(repo, "ls-tree", "-r", "--name-only", rev).split("\n")
    return [path for path in listed if path and not path.endswith(".bin")]


def test_a_warm_tree_answers_every_file_as_single_file_use_does(
    sample, tmp_path: Path
) -> None:
    settings, repo = sample
    warmed = fresh_data(settings, tmp_path / "warmed")
    done = e2g(warmed, repo, "tokens", "warm", "-j", "2", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    files = text_files(repo)
    assert report["warmed"] == len(files)
    assert report["skipped"] == {"binary": 1}  # drivers/frob/firmware.bin
    assert "tokens of" in done.stderr and "blamed" in done.stderr
    # Beside the kept log, the commits' changed paths the workers' line blames
    # walked (e2g.git.lineblame), of the warmed revision.
    (written,) = (warmed / "token-trees").glob("*.ancestry")
    ancestry = Ancestry.read(written)
    assert ancestry is not None and ancestry.head == report["rev"]
    single = fresh_data(settings, tmp_path / "single")
    for path in files:
        assert token_json(warmed, repo, path) == token_json(single, repo, path), path
    # A single file read through the commit-graph the warm wrote (e2g.git.lens):
    # the same answer.
    lensed = fresh_data(settings, tmp_path / "lensed")
    shutil.copytree(warmed / "token-lens", lensed / "token-lens")
    assert list((lensed / "token-lens").glob("*/objects/info/commit-graph"))
    for path in files[:10]:
        assert token_json(lensed, repo, path) == token_json(single, repo, path), path
    # The work tree's files are HEAD's: `blame --tokens FILE` reads the same answers.
    answers = sorted((warmed / "tokens").glob("*/results/*.json"))
    worktree = e2g(warmed, repo, "blame", "mm/frob_alloc.c", "--tokens", "--json")
    assert worktree.stdout == token_json(single, repo, "mm/frob_alloc.c")
    assert sorted((warmed / "tokens").glob("*/results/*.json")) == answers
    again = json.loads(e2g(warmed, repo, "tokens", "warm", "--json").stdout)
    assert again["warmed"] == 0 and again["cached"] == len(files)
    assert again["walk_seconds"] == 0  # known, at this revision: no walk


def test_gitattributes_sizes_and_pathspecs_choose_the_files(tmp_path: Path) -> None:
    from e2g.api.token_warm import warm

    repo = Builder(tmp_path / "repo")
    repo.commit(
        "files",
        {
            ".gitattributes": "gen.c linguist-generated\nvendor/** linguist-vendored\n"
            "table.dat -diff\npic.c binary\n",
            "main.c": body("main", 5),
            "gen.c": body("gen", 5),
            "vendor/lib.c": body("lib", 5),
            "table.dat": "1 2 3\n",
            "pic.c": "int pic;\n",
            "blob.c": b"int x;\0binary\n",
            "big.c": body("big", 400),
            "sub/keep.c": body("keep", 2),
        },
    )
    (repo.root / "link.c").symlink_to("main.c")
    git(repo.root, "add", "link.c")
    repo.commit("link")
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    report = warm(settings, repo=repo.root, jobs=1, max_bytes=10_000)
    assert report.files == 10
    assert report.warmed == 3  # main.c, sub/keep.c, .gitattributes
    assert dict(report.skipped) == {
        "marked linguist-generated": 1,
        "marked linguist-vendored": 1,
        "marked -diff": 1,
        "marked binary": 1,
        "binary": 1,
        "larger than the size bound": 1,
        "not a regular file": 1,
    }
    only = warm(settings, repo=repo.root, pathspecs=["sub"], jobs=1)
    assert only.files == 1 and only.cached == 1


def test_a_warm_killed_midway_goes_on_where_it_stopped(sample, tmp_path: Path) -> None:
    """kill -9 of the whole run (workers too) after the first files are done: the
    next run blames only the others, and every answer is a fresh run's."""
    from tests import fault_hook

    settings, repo = sample
    data = fresh_data(settings, tmp_path / "data")
    killed = e2g(
        data,
        repo,
        "tokens",
        "warm",
        "-j",
        "2",
        env=fault_hook.environment(
            "sleep@tokens.warmed:0.3", "killpg-soon@tokens.warmed:0.2"
        ),
    )
    assert killed.returncode == -9, killed.stderr
    done = len(list((data / "tokens").glob("*/results/*.spans.json")))
    files = text_files(repo)
    assert 0 < done < len(files)
    again = e2g(data, repo, "tokens", "warm", "-j", "2", "--json")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["cached"] == done
    assert report["warmed"] == len(files) - done
    single = fresh_data(settings, tmp_path / "single")
    for path in files:
        assert token_json(data, repo, path) == token_json(single, repo, path), path


def test_a_warm_tree_is_kept_by_the_cache_bound(sample, tmp_path: Path) -> None:
    """With a bound smaller than the tree, blaming a file of another repository
    evicts nothing of the warmed tree."""
    from e2g.api.token_cache import cache_root
    from e2g.api.token_warm import manifest_of, warm
    from e2g.api.tokens import token_blame

    settings, repo = sample
    data = fresh_data(settings, tmp_path / "data")
    small = settings._replace(data_dir=data, token_cache_bytes=1)
    warm(small, repo=repo, rev="HEAD~3", pathspecs=["lib"], jobs=1)
    other = sample_repo(tmp_path / "other")
    token_blame(small, "mm/frob_alloc.c", "HEAD", repo=other, match=False)
    token_blame(small, "net/frob_net.c", "HEAD", repo=other, match=False)
    manifest = manifest_of(small, Repo.open(repo))
    assert manifest is not None and len(manifest.files) == 2
    kept = {path.name for path in cache_root(small).iterdir()}
    assert {entry[0] for entry in manifest.files.values()} <= kept
    assert len(kept) == 3  # the tree's two, and the last file blamed


def test_a_warm_brings_the_other_caches_within_the_bound(
    sample, tmp_path: Path
) -> None:
    """The warm's prune at its end (the caches measured while it walked, those it
    wrote measured again) evicts a single file's cache of another repository when
    the bound is smaller than the tree, and none of the tree's."""
    from e2g.api.token_cache import cache_root
    from e2g.api.token_warm import manifest_of, warm
    from e2g.api.tokens import token_blame

    settings, repo = sample
    data = fresh_data(settings, tmp_path / "data")
    small = settings._replace(data_dir=data, token_cache_bytes=1)
    other = sample_repo(tmp_path / "other")
    token_blame(small, "mm/frob_alloc.c", "HEAD", repo=other, match=False)
    alone = {path.name for path in cache_root(small).iterdir()}
    assert len(alone) == 1
    report = warm(small, repo=repo, pathspecs=["lib"], jobs=2)
    assert report.warmed == 2
    manifest = manifest_of(small, Repo.open(repo))
    assert manifest is not None
    kept = {path.name for path in cache_root(small).iterdir()}
    assert kept == {entry[0] for entry in manifest.files.values()}
    assert not alone & kept


def test_a_later_revision_redoes_only_the_files_its_commits_changed(
    sample, tmp_path: Path
) -> None:
    """Warm at REV1, commit on top (a change, a new file, a rename, a merge), warm
    again: the unchanged files are carried, the others blamed from their histories
    at REV1; every file's `--tokens --json` is byte for byte a fresh warm's."""
    settings, source = sample
    repo = tmp_path / "repo"
    shutil.copytree(source, repo)
    data = fresh_data(settings, tmp_path / "data")
    assert e2g(data, repo, "tokens", "warm", "-j", "2").returncode == 0
    builder = Builder.__new__(Builder)
    builder.root, builder.clock = repo, 1_700_000_000
    frob = (repo / "drivers/frob/frob.c").read_text()
    builder.commit("frob: more", {"drivers/frob/frob.c": frob + "int more;\n"})
    git(repo, "checkout", "-q", "-b", "topic", "HEAD~1")
    builder.commit(
        "hash: tweak",
        {"lib/frobhash.c": "/* tweak */\n" + (repo / "lib/frobhash.c").read_text()},
    )
    git(repo, "checkout", "-q", "-")
    builder.merge("topic")
    git(repo, "mv", "net/frob_stats.c", "net/stats.c")
    builder.commit("net: rename stats")
    builder.commit("new file", {"mm/new.c": body("new", 3)})
    update = e2g(data, repo, "tokens", "warm", "-j", "2", "--json")
    assert update.returncode == 0, update.stderr
    report = json.loads(update.stdout)
    touched = {"drivers/frob/frob.c", "lib/frobhash.c", "net/stats.c", "mm/new.c"}
    files = text_files(repo)
    assert report["warmed"] == len(touched)
    assert report["carried"] == len(files) - len(touched)
    # The walk kept its log at this revision: the next walk reads only the
    # commits since.
    from e2g.git.treelog import _read_kept

    (kept,) = (data / "token-trees").glob("*.log")
    log = _read_kept(kept)
    assert log is not None and log.head == git(repo, "rev-parse", "HEAD").strip()
    fresh = fresh_data(settings, tmp_path / "fresh")
    assert e2g(fresh, repo, "tokens", "warm", "-j", "2").returncode == 0
    for path in files:
        assert token_json(data, repo, path) == token_json(fresh, repo, path), path


def test_one_warm_of_a_repository_at_a_time(tmp_path: Path) -> None:
    import fcntl

    from e2g.api import token_warm
    from e2g.errors import RepoError

    repo = Builder(tmp_path / "repo")
    repo.commit("one", {"a.c": body("a", 2)})
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    opened = Repo.open(repo.root)
    place = token_warm._manifest_path(token_warm.cache_root(settings), opened)  # noqa: SLF001
    place.parent.mkdir(parents=True)
    with place.with_suffix(".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(RepoError, match="another e2g is warming"):
            token_warm.warm(settings, repo=repo.root, jobs=1)
    assert token_warm.warm(settings, repo=repo.root, jobs=1).warmed == 1


def test_the_cache_bound_is_a_setting(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "e2g").mkdir(parents=True)
    written = home / ".config" / "e2g" / "config.toml"
    assert config.resolve(env={}, home=home).token_cache_bytes == 1 << 30
    written.write_text('[tokens]\ncache_bytes = "2G"\n')
    assert config.resolve(env={}, home=home).token_cache_bytes == 2 << 30
    written.write_text("[tokens]\ncache_bytes = 5000\n")
    assert config.resolve(env={}, home=home).token_cache_bytes == 5000
    written.write_text("[tokens]\ncache_bytes = true\n")
    with pytest.raises(Exception, match="cache_bytes"):
        config.resolve(env={}, home=home)


def test_sizes_read_with_units() -> None:
    assert config.parse_size("512K") == 512 << 10
    assert config.parse_size("2G") == 2 << 30
    assert config.parse_size("1.5M") == 3 << 19
    assert config.parse_size("1000") == 1000
    with pytest.raises(Exception, match="bad size"):
        config.parse_size("lots")


def test_paths_no_commit_touched_keep_their_history(tmp_path: Path) -> None:
    """touched_since: from any commit to a later one on its first-parent line,
    every path it leaves out has the same newest revision and history at both
    (so a warm carries it without a walk); a side branch that changed a file and
    changed it back still names it; a commit off the first-parent line gives None."""
    repo = build_tangled(tmp_path / "repo")
    git(repo.root, "checkout", "-q", "-b", "back", "HEAD")
    original = (repo.root / "d.c").read_text()
    repo.commit("d changed", {"d.c": original + "int x;\n"})
    repo.commit("d back", {"d.c": original})
    git(repo.root, "checkout", "-q", "main")
    repo.commit("main e", {"e.c": body("e", 4)})
    repo.merge("back")
    opened = Repo.open(repo.root)
    head = opened.resolve("HEAD")
    line = git(repo.root, "rev-list", "--first-parent", head).split()
    for old in line[1:8]:
        touched = touched_since(opened, old, head)
        assert touched is not None
        for path in git(repo.root, "ls-tree", "-r", "--name-only", old).split():
            if path not in touched:
                assert _shape(file_history(opened, head, path)) == _shape(
                    file_history(opened, old, path)
                ), (old, path)
    assert "d.c" in (touched_since(opened, line[2], head) or set())
    side = opened.resolve("HEAD^2")
    assert touched_since(opened, side, head) is None  # a second parent's line
    assert touched_since(opened, head, head) == set()


def test_paths_changed_on_the_first_parent_line_before_a_merge_are_not_named(
    tmp_path: Path,
) -> None:
    """A topic forked long ago and merged since: git.git's 102 commits named
    1,213 paths when merges were diffed against every parent (each merge against
    its topic lists what the main line changed since the fork), 109 against
    their first parent, as git's simplification reads them. A merge that took a
    file back from the topic, which never changed it, names it (its history is
    another now); what the main line changed before `old` is not named."""
    repo = Builder(tmp_path / "repo")
    repo.commit("start", {name: body(name[0], 3) for name in ("a.c", "b.c", "d.c")})
    fork = repo.head()
    repo.commit("main b d", {"b.c": body("b", 4), "d.c": body("d", 5)})
    old = repo.head()
    git(repo.root, "checkout", "-q", "-b", "topic", fork)
    repo.commit("topic a", {"a.c": body("a", 6)})
    git(repo.root, "checkout", "-q", "main")
    git(repo.root, "merge", "-q", "--no-ff", "--no-commit", "topic", env=repo.env())
    git(repo.root, "checkout", "topic", "--", "b.c")  # the merge takes b.c back
    git(repo.root, "commit", "-q", "-m", "merge topic", env=repo.env())
    opened = Repo.open(repo.root)
    head = opened.resolve("HEAD")
    touched = touched_since(opened, old, head)
    assert touched == {"a.c", "b.c"}
    assert _shape(file_history(opened, head, "b.c")) != _shape(
        file_history(opened, old, "b.c")
    )
    assert _shape(file_history(opened, head, "d.c")) == _shape(
        file_history(opened, old, "d.c")
    )


def test_carried_answers_are_second_names_counted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A carried answer is the same file under the new revision's name (no copy,
    no second fsync of megabytes), made recent so the answers kept per file keep
    it; the cache's size counts it once; where hard links fail, a copy, whole."""
    from e2g.api import token_warm
    from e2g.api.token_cache import _size

    results = tmp_path / "cache" / "results"
    results.mkdir(parents=True)
    old = results / "old.json"
    old.write_bytes(b'{"tokens": []}' * 1000)
    os.utime(old, (1_000_000, 1_000_000))
    assert token_warm._copy(old, results / "new.json")  # linked
    new = results / "new.json"
    assert new.read_bytes() == old.read_bytes()
    assert new.stat().st_ino == old.stat().st_ino
    assert new.stat().st_mtime > 1_000_000
    assert _size(tmp_path / "cache") == old.stat().st_size
    assert not list(results.glob(".*"))

    def no_links(*_: object) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(token_warm.os, "link", no_links)
    assert not token_warm._copy(old, results / "copied.json")  # the prune measures it
    copied = results / "copied.json"
    assert copied.read_bytes() == old.read_bytes()
    assert copied.stat().st_ino != old.stat().st_ino
    assert not list(results.glob(".*"))
    assert _size(tmp_path / "cache") == 2 * old.stat().st_size


def test_a_file_another_lexer_reads_now_is_blamed_again(
    sample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A later warm where a file's lexer changed (an e2g that reads `.h` files
    otherwise): its cache is another, so its answer is made again, not carried
    from the old lexer's; the others are carried."""
    from e2g.api.token_warm import warm
    from e2g.tokens import lex

    settings, source = sample
    repo = tmp_path / "repo"
    shutil.copytree(source, repo)
    data = settings._replace(data_dir=fresh_data(settings, tmp_path / "data"))
    warm(data, repo=repo, jobs=1)
    builder = Builder.__new__(Builder)
    builder.root, builder.clock = repo, 1_700_000_000
    builder.commit("new file", {"mm/new.c": body("new", 3)})
    headers = [path for path in text_files(repo) if path.endswith(".h")]
    assert headers
    monkeypatch.setitem(lex._BY_SUFFIX, "h", lex.HASH_SYNTAX)
    report = warm(data, repo=repo, jobs=1)
    assert report.warmed == len(headers) + 1  # the headers, and the new file
    assert report.carried == len(text_files(repo)) - len(headers) - 1


def test_heavy_files_are_handed_out_one_at_a_time_while_light_ones_remain() -> None:
    """Two workers: never two heavy files at once while a light one waits (two
    catalogs and their gits at once took git.git's warm to 995 MB); each worker
    has one more file queued; heavy files in their order, the first at once;
    once the light ones are done, the heavy ones take every worker."""
    from e2g.api.token_warm import _Dispatch

    heavy = ["h1", "h2", "h3", "h4"]
    order = [*heavy, *(f"l{n}" for n in range(1, 7))]
    dispatch = _Dispatch(order, set(heavy), 2)
    handed = dispatch.ready()
    assert handed == ["h1", "l1", "l2"]
    running = list(handed)
    seen = list(handed)
    while running:
        # The light files finish first; a heavy one only once no light one runs.
        done = next((p for p in running if p.startswith("l")), running[0])
        running.remove(done)
        dispatch.finished(done)
        more = dispatch.ready()
        running += more
        seen += more
        light_left = [p for p in order if p.startswith("l") and p not in seen]
        if light_left:
            assert sum(p.startswith("h") for p in running) <= 1, running
        assert len(running) <= 3
    assert sorted(seen) == sorted(order)
    assert [p for p in seen if p.startswith("h")] == heavy
    assert dispatch.ready() == []
    # A heavy file done while light ones run: the next heavy one is handed out at
    # once (queued), not after every light one.
    dispatch = _Dispatch(order, set(heavy), 2)
    assert dispatch.ready() == ["h1", "l1", "l2"]
    dispatch.finished("h1")
    assert dispatch.ready() == ["h2"]
    dispatch.finished("l1")
    assert dispatch.ready() == ["l3"]
