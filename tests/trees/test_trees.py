"""Trees: backports found by their notes and by patch-id, the review they inherit,
the backport process's mails, rebased branches and releases, on a world built in a
temp dir (tests/trees/world.py)."""

from __future__ import annotations

import importlib.util
import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from e2g import config
from e2g.api import core
from e2g.api.answers import stored_results
from e2g.api.basis import open_store
from e2g.api.blame import blame
from e2g.api.link import link
from e2g.api.match import match, match_head, match_tree
from e2g.api.reverse import way_back
from e2g.api.stats import stats
from e2g.index.link_writer import TreeWriter
from e2g.render import blame_json, link_json, releases_line, way_back_json
from tests.conftest import git
from tests.trees.world import REVIEWER, World, build, rebase_next

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "backports.py"


def settings_for(world: World, data: Path) -> config.Settings:
    return config.resolve(
        data_dir=data,
        env={"XDG_CONFIG_HOME": str(world.config.parent.parent)},
        home=data.parent,
    )


@pytest.fixture(scope="module")
def matched(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, config.Settings]:
    root = tmp_path_factory.mktemp("trees")
    world = build(root)
    settings = settings_for(world, root / "data")
    core.ingest(settings, [world.archive])
    for name in ("mainline", "stable", "next"):
        match_tree(settings, name, jobs=1)
    return world, settings


def edges(
    settings: config.Settings, shas: World | dict[str, str]
) -> dict[str, tuple[str, str]]:
    named = shas.shas if isinstance(shas, World) else shas
    with open_store(settings) as store:
        found = store.backports_of(list(named.values()))
    names = {sha: name for name, sha in named.items()}
    return {
        names[e.sha]: (names.get(e.upstream_sha, e.upstream_sha), e.how) for e in found
    }


def test_backports_by_note_and_patch_id(matched: tuple[World, config.Settings]) -> None:
    world, settings = matched
    assert edges(settings, world) == {
        "A-1.0": ("A", "cherry-picked"),
        "B-1.0": ("B", "commit-upstream"),
        "C-1.0": ("C", "patch-id"),
        "E-1.0": ("E", "upstream-commit"),
        "D-1.1": ("D", "upstream-commit"),
    }


def test_a_backport_inherits_its_upstream_review(
    matched: tuple[World, config.Settings],
) -> None:
    world, settings = matched
    result = link(settings, world.shas["B-1.0"], repo=world.repo)
    assert result.upstream is not None
    assert (result.upstream.commit, result.upstream.how) == (
        world.shas["B"],
        "commit-upstream",
    )
    assert result.upstream.tree == "mainline"
    applied = [p for p in result.postings if p.applied]
    assert [p.message_id for p in applied] == ["B@example.org"]
    assert applied[0].reviewers == (f"Reviewed-by: {REVIEWER}",)
    assert [(p.message_id, p.method) for p in result.own] == [
        ("process-B@example.org", "stable-review")
    ]


def test_process_mails_are_never_the_upstream_review(
    matched: tuple[World, config.Settings],
) -> None:
    world, settings = matched
    for name in "ABCD":
        result = link(settings, world.shas[name], repo=world.repo)
        ids = {p.message_id for p in result.postings}
        assert ids == {f"{name}@example.org"}, name
        assert result.upstream is None
        stored = next(stored_results(settings, str(world.repo), [world.shas[name]]))
        assert {p.message_id for p in stored.postings} == ids


def test_trees_and_releases(matched: tuple[World, config.Settings]) -> None:
    world, settings = matched
    names = {sha: name for name, sha in world.shas.items()}
    for rev in ("A", "A-1.0"):
        result = link(settings, world.shas[rev], repo=world.repo)
        assert [
            (names[p.commit], p.tree, p.branch, p.how, p.release) for p in result.trees
        ] == [
            ("A", "mainline", "master", "applied", "v1.1"),
            ("A-1.0", "stable", "linux-1.0.y", "cherry-picked", "v1.0.1"),
        ]
        assert releases_line(result.trees) == (
            "first released in v1.1; backported to linux-1.0.y in v1.0.1"
        )
    result = link(settings, world.shas["D-1.1"], repo=world.repo)
    assert [(names[p.commit], p.release) for p in result.trees] == [
        ("D", "v1.2"),
        ("D-1.1", "v1.1.1"),
    ]
    # The FAILED notice for 1.0 is no mail of the 1.1 backport.
    assert result.own == ()


def test_the_revert_and_the_context_change(
    matched: tuple[World, config.Settings],
) -> None:
    world, settings = matched
    revert = link(settings, world.shas["revert-A-1.0"], repo=world.repo)
    assert revert.upstream is None
    assert all(p.message_id != "A@example.org" for p in revert.postings)
    moved = link(settings, world.shas["E-1.0"], repo=world.repo)
    assert moved.upstream is not None and moved.upstream.commit == world.shas["E"]
    assert [p.message_id for p in moved.postings if p.applied] == ["E@example.org"]


def test_the_way_back_lists_every_tree(matched: tuple[World, config.Settings]) -> None:
    world, settings = matched
    names = {sha: name for name, sha in world.shas.items()}
    answer = way_back(settings, "A@example.org")
    assert answer.status == "applied"
    assert [names[c.sha] for c in answer.commits] == ["A"]
    assert [(names[p.commit], p.branch, p.release) for p in answer.trees] == [
        ("A", "master", "v1.1"),
        ("A-1.0", "linux-1.0.y", "v1.0.1"),
    ]
    # Asked from the AUTOSEL mail: the same answer, never the AUTOSEL as applied.
    autosel = way_back(settings, "process-A@example.org")
    assert [names[c.sha] for c in autosel.commits] == ["A"]
    assert way_back_json(answer)["trees"][1] == {  # type: ignore[index]
        "repo": str(world.repo),
        "tree": "stable",
        "branch": "linux-1.0.y",
        "commit": world.shas["A-1.0"],
        "how": "cherry-picked",
        "release": "v1.0.1",
        "merge": None,
    }


def test_a_rebased_branch_matched_twice(tmp_path: Path) -> None:
    """next is matched, rebased (new ids, the same patches) and matched again: the
    new commits take the old answers by patch-id, and answers do not duplicate."""
    world = build(tmp_path)
    settings = settings_for(world, tmp_path / "data")
    core.ingest(settings, [world.archive])
    match_tree(settings, "mainline", jobs=1)
    (first,) = match_tree(settings, "next", jobs=1)
    assert (first.matched, first.rebased) == (2, 0)
    rebase_next(world)
    (second,) = match_tree(settings, "next", jobs=1)
    # Answered from the commits they replace: matched as those were, no mail read.
    assert (second.rebased, second.matched, second.no_match) == (2, 2, 0)
    assert second.by_method == {"patch-id": 2}
    for name in ("N1", "N2"):
        answer = way_back(settings, f"{name}@example.org")
        assert [c.sha for c in answer.commits] == [world.shas[f"{name}'"]]
        assert [p.commit for p in answer.trees] == [world.shas[f"{name}'"]]
        again = link(settings, world.shas[f"{name}'"], repo=world.repo)
        assert [p.message_id for p in again.postings if p.applied] == [
            f"{name}@example.org"
        ]
    (third,) = match_tree(settings, "next", jobs=1)
    assert (third.commits, third.skipped) == (0, 2)


def test_a_rebased_branch_waits_for_its_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The branch's record is written behind (TreeWriter behind) while its commits
    are split: the patch-ids of a rebased branch are read once it is written, not
    before (here, each write behind starts late)."""
    world = build(tmp_path)
    settings = settings_for(world, tmp_path / "data")
    core.ingest(settings, [world.archive])
    match_tree(settings, "mainline", jobs=1)
    match_tree(settings, "next", jobs=1)
    rebase_next(world)
    start = TreeWriter._start

    def late(writer: TreeWriter, work: Callable[[], None]) -> None:
        def slow() -> None:
            time.sleep(0.2)
            work()

        start(writer, slow)

    monkeypatch.setattr(TreeWriter, "_start", late)
    (second,) = match_tree(settings, "next", jobs=1, to_json=link_json)
    assert (second.rebased, second.matched, second.no_match) == (2, 2, 0)


def test_workers_start_with_no_writer_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A branch whose backports name upstream commits no run matched (stable
    before mainline: every commit has its note, the upstreams are matched first)
    starts its workers once the branch's record is written: forked from a process
    with no other thread (e2g.processes)."""
    from e2g.matcher import batch

    spec = importlib.util.spec_from_file_location("bench_backports", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    _, mbox, xdg = bench.build(tmp_path, 5)
    settings = config.resolve(
        data_dir=tmp_path / "data", env={"XDG_CONFIG_HOME": str(xdg)}, home=tmp_path
    )
    core.ingest(settings, [mbox])
    start, results = TreeWriter._start, batch.results
    threads: list[list[str]] = []

    def late(writer: TreeWriter, work: Callable[[], None]) -> None:
        def slow() -> None:
            time.sleep(0.2)
            work()

        start(writer, slow)

    def counted(*args: object, **options: object) -> object:
        threads.append([t.name for t in threading.enumerate()])
        return results(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(TreeWriter, "_start", late)
    monkeypatch.setattr(batch, "results", counted)
    (summary,) = match_tree(settings, "stable", jobs=1)
    assert (summary.backports, summary.matched) == (5, 10)
    assert threads == [[threading.main_thread().name]]


def test_stats_by_tree(matched: tuple[World, config.Settings]) -> None:
    world, settings = matched
    found = stats(settings, repo=world.repo, by="tree")
    rows = {row.key: (row.commits, row.matched) for row in found.rows}
    # master: the base (no posting), A..E, T1 and T2; 1.0.y: four backports, the
    # commit only 1.0.y has and the revert; 1.1.y: D's backport; next: N1, N2.
    assert rows == {
        "mainline/master": (8, 7),
        "stable/linux-1.0.y": (6, 4),
        "stable/linux-1.1.y": (1, 1),
        "next/next": (2, 2),
    }
    backports = [row.by_method["backport"] for row in found.rows]
    assert sum(backports) == 5


def test_a_merge_shows_its_pull_request_and_what_it_brought(
    matched: tuple[World, config.Settings],
) -> None:
    world, settings = matched
    merge_object = git(world.repo, "cat-file", "-p", world.shas["merge"])
    assert ("mergetag object" in merge_object) is world.signed
    result = link(settings, world.shas["merge"], repo=world.repo)
    assert result.merge
    assert [(p.message_id, p.method, p.applied) for p in result.postings] == [
        ("pull-1.3@example.org", "pull-request", True)
    ]
    brought = {found.commit.sha: found for found in result.merged}
    assert set(brought) == {world.shas["T1"], world.shas["T2"]}
    for name in ("T1", "T2"):
        (applied,) = [p for p in brought[world.shas[name]].postings if p.applied]
        assert applied.message_id == f"{name}@example.org"
        assert applied.reviewers == (f"Reviewed-by: {REVIEWER}",)
    shape = link_json(result)
    assert shape["merge"] is True
    assert len(shape["merged"]) == 2  # type: ignore[arg-type]
    # Each commit it brought in names it as the merge that did.
    t1 = link(settings, world.shas["T1"], repo=world.repo)
    assert [(p.branch, p.merge) for p in t1.trees] == [("master", world.shas["merge"])]
    a = link(settings, world.shas["A"], repo=world.repo)
    assert a.trees[0].merge is None  # committed on master itself


def test_a_merge_with_no_pull_request(tmp_path: Path) -> None:
    """A local merge names a branch and no URL: only a request for that branch would
    do, and there is none; the commits it brought in are still answered."""
    world = build(tmp_path)
    settings = settings_for(world, tmp_path / "data")
    core.ingest(settings, [world.archive])
    git(world.repo, "checkout", "-q", "-b", "local", world.shas["E"])
    git(world.repo, "commit", "-q", "--allow-empty", "-m", "frob: nothing")
    git(world.repo, "checkout", "-q", "master")
    git(world.repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'local'", "local")
    result = link(settings, "HEAD", repo=world.repo)
    assert result.merge and result.postings == ()
    assert "no pull request for local" in result.note
    assert [found.commit.subject for found in result.merged] == ["frob: nothing"]


def test_android_and_plain_picks_in_one_unnamed_repository(tmp_path: Path) -> None:
    """No named tree: `e2g match --all` of one repository. An UPSTREAM: commit
    names no sha and a plain cherry-pick says nothing: both are found by patch-id
    (the earlier commit is the upstream); the AUTOSEL mail stays out of review."""
    world = build(tmp_path)
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    core.ingest(settings, [world.archive])
    git(world.repo, "checkout", "-q", "-b", "android", "v1.0")
    git(world.repo, "cherry-pick", world.shas["A"])
    message = git(world.repo, "log", "-1", "--format=%B")
    git(world.repo, "commit", "-q", "--amend", "-m", f"UPSTREAM: {message}")
    android = git(world.repo, "rev-parse", "HEAD").strip()
    git(world.repo, "checkout", "-q", "master")
    summary = match(settings, [], repo=world.repo, all_refs=True, jobs=1)
    assert summary.backports == 6  # A..E's stable copies, D's and the Android one
    found = edges(settings, {**world.shas, "android": android})
    assert found["android"] == ("A", "patch-id")
    assert found["C-1.0"] == ("C", "patch-id")
    assert found["A-1.0"] == ("A", "cherry-picked")
    result = link(settings, world.shas["A"], repo=world.repo)
    assert {p.message_id for p in result.postings} == {"A@example.org"}


def test_match_streams_a_backport_as_link_shows_it(tmp_path: Path) -> None:
    """`e2g match --tree stable --jsonl`: one line per commit, a backport's with its
    upstream, the upstream's postings and its own mails."""
    world = build(tmp_path)
    settings = settings_for(world, tmp_path / "data")
    core.ingest(settings, [world.archive])
    match_tree(settings, "mainline", jobs=1)
    lines: list[dict[str, object]] = []
    summaries = match_tree(
        settings,
        "stable",
        jobs=1,
        to_json=link_json,
        on_result=lambda answer, _: lines.append(answer.json or {}),
    )
    assert sum(s.commits for s in summaries) == len(lines) == 7
    by_sha = {line["commit"]: line for line in lines}
    b = by_sha[world.shas["B-1.0"]]
    assert b["upstream"]["commit"] == world.shas["B"]  # type: ignore[index]
    assert [p["message_id"] for p in b["postings"]] == ["B@example.org"]  # type: ignore[attr-defined,index]
    assert [p["message_id"] for p in b["backport_postings"]] == [  # type: ignore[attr-defined,index]
        "process-B@example.org"
    ]
    assert summaries[0].by_method["backport"] == 4


def test_stored_answers_and_blame_inherit_the_upstream_review(
    matched: tuple[World, config.Settings],
) -> None:
    """What `e2g match --all-results` and `e2g blame` read back for a backport: its
    upstream's postings (the review), its own mails apart."""
    world, settings = matched
    (stored,) = stored_results(settings, str(world.repo), [world.shas["B-1.0"]])
    assert stored.upstream is not None and stored.upstream.commit == world.shas["B"]
    assert [p.message_id for p in stored.postings if p.applied] == ["B@example.org"]
    assert [p.message_id for p in stored.own] == ["process-B@example.org"]
    found = blame(settings, "frob.c", "linux-1.0.y", repo=world.repo, lines=(16, 16))
    (run,) = found.runs
    assert run.review.commit.sha == world.shas["B-1.0"]
    assert run.review.status == "matched"
    applied = [p for p in run.review.postings if p.applied]
    assert [p.message_id for p in applied] == ["B@example.org"]
    assert applied[0].reviewers == (f"Reviewed-by: {REVIEWER}",)
    # A tree's name shows wherever a commit is shown: blame's too.
    assert run.review.trees == ("stable/linux-1.0.y",)
    assert blame_json(run)["trees"] == ["stable/linux-1.0.y"]
    upstream = blame(settings, "frob.c", "master", repo=world.repo, lines=(16, 16))
    assert upstream.runs[0].review.commit.sha == world.shas["B"]
    assert upstream.runs[0].review.trees == ("mainline/master",)


def test_a_branch_that_grew_keeps_its_merges(tmp_path: Path) -> None:
    """master gains a merge after a first run: the second run walks only what is
    new (from the recorded tip), and what the first run recorded keeps its merge."""
    world = build(tmp_path)
    settings = settings_for(world, tmp_path / "data")
    core.ingest(settings, [world.archive])
    match_tree(settings, "mainline", jobs=1)
    git(world.repo, "checkout", "-q", "-b", "late", "master")
    git(world.repo, "commit", "-q", "--allow-empty", "-m", "frob: late")
    late = git(world.repo, "rev-parse", "HEAD").strip()
    git(world.repo, "checkout", "-q", "master")
    git(world.repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'late'", "late")
    merge = git(world.repo, "rev-parse", "HEAD").strip()
    match_tree(settings, "mainline", jobs=1)
    with open_store(settings) as store:
        places = store.tree_places([late, world.shas["T1"], world.shas["A"]])
    assert [p.merge for p in places[late]] == [merge]
    assert [p.merge for p in places[world.shas["T1"]]] == [world.shas["merge"]]
    assert [p.merge for p in places[world.shas["A"]]] == [None]


def test_sync_matches_a_repository_s_trees(tmp_path: Path) -> None:
    """`e2g sync`'s match of a repository the config names trees in: each tree's
    branches, so a rebased next is answered from what it replaced."""
    world = build(tmp_path)
    settings = settings_for(world, tmp_path / "data")
    core.ingest(settings, [world.archive])
    for name in ("mainline", "stable", "next"):
        match_tree(settings, name, jobs=1)
    rebase_next(world)
    summary = match_head(settings, world.repo, jobs=1)
    assert (summary.rebased, summary.backports, summary.commits) == (2, 0, 2)
    assert summary.skipped > 10  # what every branch held before
    answer = way_back(settings, "N1@example.org")
    assert [c.sha for c in answer.commits] == [world.shas["N1'"]]
    rows = {
        row.key: row.commits for row in stats(settings, repo=world.repo, by="tree").rows
    }
    assert (rows["next/next"], rows["(rebased away)"]) == (2, 2)


def test_link_reads_a_backport_match_never_saw(tmp_path: Path) -> None:
    """A backport no `e2g match` answered: `e2g link` reads its note (or finds its
    patch-id) now, and shows its upstream's review; a commit match answered with no
    edge stays what match decided."""
    world = build(tmp_path)
    settings = settings_for(world, tmp_path / "data")
    core.ingest(settings, [world.archive])
    match_tree(settings, "mainline", jobs=1)
    git(world.repo, "checkout", "-q", "-b", "vendor", "v1.0")
    git(world.repo, "cherry-pick", "-x", world.shas["C"])
    noted = git(world.repo, "rev-parse", "HEAD").strip()
    git(world.repo, "cherry-pick", world.shas["B"])
    plain = git(world.repo, "rev-parse", "HEAD").strip()
    git(world.repo, "checkout", "-q", "master")
    for sha, upstream, how in ((noted, "C", "cherry-picked"), (plain, "B", "patch-id")):
        result = link(settings, sha, repo=world.repo)
        assert result.upstream is not None
        assert (result.upstream.commit, result.upstream.how) == (
            world.shas[upstream],
            how,
        )
        assert [p.message_id for p in result.postings if p.applied] == [
            f"{upstream}@example.org"
        ]
    assert link(settings, world.shas["B"], repo=world.repo).upstream is None


def test_releases_in_small_batches_are_the_releases(
    matched: tuple[World, config.Settings],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """update_releases writes a transaction per batch: batches of 2 store the same
    first releases as one batch, and a run cut short after its first batch leaves
    what it wrote for the next run to complete."""
    from e2g.api import branches
    from e2g.git import trees as git_trees
    from e2g.git.repo import Repo

    world, settings = matched
    repository = Repo.open(world.repo)
    whole = _releases(settings)
    assert len({tag for _, tag in whole}) >= 2
    data = tmp_path / "data"
    small = settings_for(world, data)
    core.ingest(small, [world.archive])
    monkeypatch.setattr(branches, "RELEASES_BATCH", 2)
    walk = git_trees.first_tags

    def cut_short(*args: object, **kwargs: object) -> object:
        yield from list(walk(*args, **kwargs))[:3]  # type: ignore[arg-type]
        raise KeyboardInterrupt

    monkeypatch.setattr(git_trees, "first_tags", cut_short)
    with pytest.raises(KeyboardInterrupt):
        branches.update_releases(small, repository, repo=str(world.repo))
    monkeypatch.setattr(git_trees, "first_tags", walk)
    assert len(_releases(small)) == 2  # the first batch; the tags are not done
    with open_store(small) as store:
        assert store.release_tags(str(world.repo)) == {}
    assert branches.update_releases(small, repository, repo=str(world.repo)) == len(
        whole
    )
    assert _releases(small) == whole


def _releases(settings: config.Settings) -> list[tuple[str, str]]:
    with closing(sqlite3.connect(settings.store_path)) as connection:
        return connection.execute(
            "SELECT sha, tag FROM releases ORDER BY sha"
        ).fetchall()
