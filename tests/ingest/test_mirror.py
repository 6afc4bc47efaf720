"""`e2g ingest URL` and `e2g sync` against real HTTP servers on 127.0.0.1: git's
smart HTTP (git http-backend) and a plain static server (git's dumb protocol and
manifest.js.gz), serving public-inbox epochs built in tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from e2g import config
from e2g.api import mirrors
from e2g.api import sync as api
from e2g.api.mirrors import EpochEvent
from e2g.archives.inbox_url import parse_inbox_url, parse_manifest
from e2g.errors import ArchiveUnreadable, Interrupted, MirrorError, UsageError
from tests.conftest import git, store_rows
from tests.ingest.inbox_server import Server, Site, closed_port


def e2g(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "E2G_DEBUG"}
    return subprocess.run(
        [sys.executable, "-m", "e2g", "--data-dir", str(data), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=data.parent,
        timeout=60,
    )


def one_line_error(result: subprocess.CompletedProcess[str], fragment: str) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("e2g: error: "), result.stderr
    assert fragment in errors[0], result.stderr
    return errors[0]


@pytest.fixture
def site(tmp_path: Path) -> Site:
    site = Site(tmp_path / "site")
    site.add_epoch("frob", 3)
    site.add_epoch("frob", 2)
    return site


@pytest.fixture
def settings(tmp_path: Path) -> config.Settings:
    return config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path / "home")


def messages(settings: config.Settings) -> int:
    return store_rows(settings.store_path) if settings.store_path.exists() else 0


# -- URLs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "url", "list_name", "host_dir"),
    [
        (
            "https://lore.kernel.org/io-uring/",
            "https://lore.kernel.org/io-uring/",
            "io-uring",
            "lore.kernel.org",
        ),
        (
            "HTTPS://Lore.Kernel.org/io-uring",
            "https://lore.kernel.org/io-uring/",
            "io-uring",
            "lore.kernel.org",
        ),
        (
            "http://127.0.0.1:8080/lists/frob/0",
            "http://127.0.0.1:8080/lists/frob/",
            "frob",
            "127.0.0.1_8080",
        ),
        (
            "https://h.example/frob/git/3.git",
            "https://h.example/frob/",
            "frob",
            "h.example",
        ),
        ("http://[::1]:80/frob/", "http://[::1]:80/frob/", "frob", "__1_80"),
        (
            "file:///srv/inboxes/frob.devel/",
            "file:///srv/inboxes/frob.devel/",
            "frob.devel",
            "file",
        ),
    ],
)
def test_inbox_urls_are_normalised(
    text: str, url: str, list_name: str, host_dir: str
) -> None:
    inbox = parse_inbox_url(text)
    assert (inbox.url, inbox.list_name, inbox.host_dir) == (url, list_name, host_dir)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("ftp://lore.kernel.org/frob/", "scheme"),
        ("ext::sh -c touch% /tmp/x", "scheme"),
        ("ssh://host/frob/", "scheme"),
        ("http:///frob/", "host"),
        ("http://-oProxyCommand=x/frob/", "host"),
        ("http://user:secret@host/frob/", "password"),
        ("http://host/-frob/", "plain name"),
        ("http://host/--upload-pack=touch/frob/", "plain name"),
        ("http://host/a/../frob/", "plain name"),
        ("http://host/fr%6Fb/", "plain name"),
        ("http://host/frob/?x=1", "query"),
        ("http://host/fr ob/", "spaces"),
        ("http://host/frob/\n", "control"),
        ("http://host:99999/frob/", "port"),
        ("http://host/", "list name"),
        ("file://otherhost/srv/frob/", "file://"),
    ],
)
def test_unsafe_urls_are_refused(text: str, reason: str) -> None:
    with pytest.raises(MirrorError, match="invalid URL") as raised:
        parse_inbox_url(text)
    assert reason in str(raised.value)


def test_manifest_epochs_and_fingerprints() -> None:
    data = json.dumps(
        {
            "/frob/git/0.git": {"fingerprint": "a" * 40},
            "/frob/git/1.git": {"fingerprint": "not hex"},
            "/frob/git/x.git": {},
            "/frob/git/5000.git": {"fingerprint": "b" * 40},  # beyond belief
            "/other": [],
        }
    ).encode()
    assert parse_manifest(data) == {0: "a" * 40, 1: None}
    assert parse_manifest(b"<html>") == {}


# -- mirroring and syncing -------------------------------------------------------------


def test_smart_http_ingest_then_sync_fetches_and_finds_a_new_epoch(
    site: Site, settings: config.Settings
) -> None:
    with Server(site) as server:
        report, mirrored = api.ingest(settings, [f"{server.url}/frob/"])
        assert (report.messages, report.new) == (5, 5)
        (inbox,) = mirrored
        assert (inbox.epochs, inbox.cloned) == (2, 2)
        assert (
            inbox.path
            == settings.data_dir / "mirrors" / f"127.0.0.1_{server.port}" / "frob"
        )
        assert sorted(p.name for p in (inbox.path / "git").iterdir()) == [
            "0.git",
            "1.git",
        ]

        site.add("frob", 1, 2)  # the newest epoch grows
        site.add_epoch("frob", 1)  # and a new one appears
        synced = api.sync(settings)
        (inbox,) = synced.inboxes
        assert (inbox.epochs, inbox.cloned, inbox.fetched, inbox.unchanged) == (
            3,
            1,
            1,
            1,
        )
        assert synced.ingest is not None
        # Only the new commits are read: the mirror resumes from its checkpoints.
        assert (synced.ingest.messages, synced.ingest.new) == (3, 3)
        assert messages(settings) == 8

        again = api.sync(settings)
        assert again.ingest is None  # nothing new: no ingest at all
        assert (again.inboxes[0].unchanged, again.inboxes[0].fetched) == (3, 0)
        # The manifest's fingerprints answered: no git request in that sync.
        before = len(server.requests)
        api.sync(settings)
        assert server.requests[before:] == ["/frob/manifest.js.gz"]


def test_dumb_http_without_a_manifest_probes_epochs(
    site: Site, settings: config.Settings
) -> None:
    with Server(site, smart=False, manifest=False) as server:
        report, mirrored = api.ingest(settings, [f"{server.url}/frob/"])
        assert (report.new, mirrored[0].cloned) == (5, 2)
        assert "/frob/git/2.git/info/refs" in server.requests  # the probe that ends it
        site.add_epoch("frob", 2)
        synced = api.sync(settings)
        inbox = synced.inboxes[0]
        assert (inbox.cloned, inbox.unchanged, inbox.fetched) == (1, 2, 0)
        assert synced.ingest is not None and synced.ingest.new == 2


def test_an_epoch_url_and_progress_per_epoch(
    site: Site, settings: config.Settings
) -> None:
    events: list[EpochEvent] = []
    with Server(site) as server:
        report, mirrored = api.ingest(
            settings,
            [f"{server.url}/frob/0"],
            callbacks=api.Callbacks(epochs=events.append),
        )
        assert mirrored[0].url == f"{server.url}/frob/"
        assert report.new == 5
    said = [(event.epoch, event.action) for event in events if event.action != "git"]
    assert said == [(0, "clone"), (0, "cloned"), (1, "clone"), (1, "cloned")]
    # git's own progress, line by line (CR-separated updates split apart)
    assert any(event.action == "git" and "objects" in event.detail for event in events)


def test_mirror_dir_reuses_epochs_another_tool_cloned(
    site: Site, settings: config.Settings, tmp_path: Path
) -> None:
    grok = tmp_path / "grok"
    (grok / "frob" / "git").mkdir(parents=True)
    git(
        tmp_path,
        "clone",
        "-q",
        "--mirror",
        str(site.epoch("frob", 0)),
        str(grok / "frob/git/0.git"),
    )
    with Server(site) as server:
        report, mirrored = api.ingest(
            settings, [f"{server.url}/frob/"], mirror_dir=grok
        )
    assert (mirrored[0].cloned, mirrored[0].unchanged, report.new) == (1, 1, 5)
    assert mirrored[0].path == grok / "frob"
    assert not (settings.data_dir / "mirrors" / f"127.0.0.1_{server.port}").exists()


def test_file_url_and_a_sync_after_the_store_was_deleted(
    site: Site, settings: config.Settings
) -> None:
    url = f"file://{site.root}/frob/"
    report, mirrored = api.ingest(settings, [url])
    assert (report.new, mirrored[0].cloned, mirrored[0].path.parent.name) == (
        5,
        2,
        "file",
    )
    again, _ = api.ingest(settings, [url])
    assert again.messages == 0  # a mirror ingested before: new commits only
    settings.store_path.unlink()
    synced = api.sync(settings)
    assert synced.ingest is not None and synced.ingest.new == 5


def _commit(repo: Path, text: str, message: str | None = None) -> None:
    """`a.c` holding `text`, committed (with `text` as the message by default)."""
    (repo / "a.c").write_text(text)
    git(repo, "add", "a.c")
    git(
        repo,
        "-c",
        "user.name=A",
        "-c",
        "user.email=a@example.org",
        "commit",
        "-q",
        "-m",
        message or text,
    )


def test_sync_matches_new_commits_only_not_the_history_before_the_range(
    site: Site, settings: config.Settings, tmp_path: Path
) -> None:
    from e2g.api.match import match

    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    for number in range(3):
        _commit(repo, f"int a{number};\n")
    api.ingest(settings, [f"file://{site.root}/frob/"])
    first = match(settings, ["HEAD~1..HEAD"], repo=repo, jobs=1)
    assert first.commits == 1
    _commit(repo, "int a3;\n")
    synced = api.sync(settings, workers=1)
    (summary,) = synced.matches
    # The new commit; the one matched before is done (no new mail); the two older
    # commits, never asked for, are not walked.
    assert (summary.commits, summary.skipped) == (1, 1)


def test_sync_brings_a_warmed_token_tree_to_head(
    site: Site, settings: config.Settings, tmp_path: Path
) -> None:
    """A tree `e2g tokens warm` warmed follows HEAD at each sync: the file the new
    commit changed is blamed again, the other carried."""
    from e2g.api.match import match
    from e2g.api.token_warm import manifest_of, warm
    from e2g.git.repo import Repo

    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    (repo / "b.c").write_text("int b;\n")
    git(repo, "add", "b.c")
    for number in range(2):
        _commit(repo, f"int a{number};\n")
    api.ingest(settings, [f"file://{site.root}/frob/"])
    match(settings, [], repo=repo, jobs=1)
    assert warm(settings, repo=repo, jobs=1).warmed == 2
    _commit(repo, "int a, b;\n")
    synced = api.sync(settings, workers=1)
    ((where, report),) = synced.tokens
    assert where == str(repo) and not isinstance(report, str)
    assert (report.warmed, report.carried) == (1, 1)
    head = git(repo, "rev-parse", "HEAD").strip()
    manifest = manifest_of(settings, Repo.open(repo))
    assert manifest is not None and manifest.rev == report.rev == head


def test_one_mirroring_run_at_a_time(settings: config.Settings) -> None:
    with mirrors.locked(settings), pytest.raises(MirrorError, match="another e2g"):
        api.sync(settings)


def test_mirror_dir_needs_a_url(settings: config.Settings, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--mirror-dir"):
        api.ingest(settings, [str(tmp_path)], mirror_dir=tmp_path)


def test_a_sync_goes_on_past_a_failing_inbox(
    site: Site, settings: config.Settings
) -> None:
    site.add_epoch("quux", 2)
    with Server(site) as server:
        api.ingest(settings, [f"{server.url}/frob/", f"{server.url}/quux/"])
        site.add("quux", 0, 1)
        (site.root / "frob" / "manifest.js.gz").unlink()
        (site.root / "frob").rename(site.root / "gone")
        synced = api.sync(settings)
    frob, quux = synced.inboxes
    assert frob.error is not None and "not found (HTTP 404)" in frob.error
    assert quux.error is None and quux.fetched == 1
    assert synced.ingest is not None and synced.ingest.new == 1


def _damage(site: Site, how: str) -> None:
    """Inbox "bad": epoch 0 whole, epoch 1 damaged as a remote can be: a message's
    object lost (git's upload-pack cannot send it), or named by the manifest and
    not there at all."""
    site.add_epoch("bad", 2)
    epoch = site.add_epoch("bad", 1)
    if how == "lost object":
        blob = git(epoch, "rev-parse", "master:m").strip()
        (epoch / "objects" / blob[:2] / blob[2:]).unlink()
    else:
        shutil.rmtree(epoch)  # the manifest still lists it


@pytest.mark.parametrize("how", ["lost object", "missing epoch"])
def test_an_ingest_goes_on_past_a_failing_inbox(
    site: Site, settings: config.Settings, how: str
) -> None:
    from e2g.api.basis import open_store

    _damage(site, how)
    bad, good = f"file://{site.root}/bad/", f"file://{site.root}/frob/"
    report, mirrored = api.ingest(settings, [bad, good])
    assert [inbox.url for inbox in mirrored] == [bad, good]
    failed, done = mirrored
    assert failed.error is not None and f"{bad}git/1.git" in failed.error
    assert (done.error, done.cloned) == (None, 2)
    assert report.new == 5  # frob's; the failing inbox's epoch 0 waits for it whole
    with open_store(settings) as store:
        assert store.list_names() == ["frob.example.org"]
    # The failing inbox is registered with the epoch it has: a sync clones the rest.
    assert [entry.url for entry in mirrors.load(settings)] == [bad, good]
    if how == "missing epoch":
        site.add("bad", 0, 1)
        site.write_manifest("bad")  # the epoch is dropped from it
        synced = api.sync(settings)
        assert [inbox.error for inbox in synced.inboxes] == [None, None]
        assert synced.ingest is not None and synced.ingest.new == 3


def test_a_bad_path_refuses_the_run_before_any_inbox_is_mirrored(
    site: Site, settings: config.Settings, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such.mbox"
    with pytest.raises(ArchiveUnreadable, match="no-such.mbox"):
        api.ingest(settings, [f"file://{site.root}/frob/", str(missing)])
    assert mirrors.load(settings) == []
    assert not (settings.data_dir / "mirrors" / "file").exists()


def test_a_failure_whose_words_lack_the_url_is_named_by_it(
    site: Site, tmp_path: Path
) -> None:
    url = f"file://{site.root}/frob/"
    env = {k: v for k, v in os.environ.items() if k != "E2G_DEBUG"}
    result = subprocess.run(
        [sys.executable, "-m", "e2g", "--data-dir", str(tmp_path / "data")]
        + ["ingest", "--json", url],
        capture_output=True,
        text=True,
        env=env | {"PATH": str(tmp_path / "no-git-here")},
        cwd=tmp_path,
        timeout=60,
    )
    error = one_line_error(result, f"{url}: git not found on PATH")
    (inbox,) = json.loads(result.stdout)["mirrors"]
    assert inbox["error"] == error.removeprefix("e2g: error: ")


def test_ctrl_c_while_mirroring_stops_the_whole_ingest(
    site: Site, settings: config.Settings
) -> None:
    site.add_epoch("quux", 1)

    def interrupt(event: EpochEvent) -> None:
        # Where e2g's SIGINT handler raises: in the thread that runs git.
        if event.action == "cloned":
            raise Interrupted("interrupted")

    with pytest.raises(Interrupted):
        api.ingest(
            settings,
            [f"file://{site.root}/frob/", f"file://{site.root}/quux/"],
            callbacks=api.Callbacks(epochs=interrupt),
        )
    assert [entry.url for entry in mirrors.load(settings)] == [
        f"file://{site.root}/frob/"
    ]  # its epoch 0, registered; quux never tried
    assert messages(settings) == 0


@pytest.mark.slow
def test_an_ingest_names_each_failing_inbox_on_one_line(
    site: Site, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    _damage(site, "lost object")
    bad, good = f"file://{site.root}/bad/", f"file://{site.root}/frob/"
    port = closed_port()
    unreachable = f"http://127.0.0.1:{port}/frob/"
    result = e2g(data, "ingest", "--json", bad, unreachable, good)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 2, result.stderr
    assert errors[0].startswith(f"e2g: error: cannot mirror {bad}git/1.git: ")
    assert errors[1].startswith(f"e2g: error: cannot reach {unreachable}")
    summary = json.loads(result.stdout)
    assert summary["new"] == 5
    outcome = [(m["url"], m["cloned"], m["error"]) for m in summary["mirrors"]]
    assert outcome == [
        (bad, 0, errors[0].removeprefix("e2g: error: ")),
        (unreachable, 0, errors[1].removeprefix("e2g: error: ")),
        (good, 2, None),
    ]
    assert store_rows(data / "store.sqlite3") == 5


@pytest.mark.slow
def test_a_connection_dropped_mid_clone_leaves_no_epoch_and_resumes(
    site: Site, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    server = Server(site).start()
    try:
        server.drop_after = 2  # epoch 0 arrives whole, epoch 1 is cut short
        failed = e2g(data, "ingest", f"{server.url}/frob/")
        one_line_error(failed, f"{server.url}/frob/git/1.git")
        server.wait_stopped()
        inbox = data / "mirrors" / f"127.0.0.1_{server.port}" / "frob" / "git"
        assert (inbox / "0.git").is_dir()
        assert not (inbox / "1.git").exists()  # never a half-written epoch
        assert not (data / "store.sqlite3").exists()  # nothing ingested

        refused = e2g(data, "sync")  # the server is down now
        one_line_error(refused, f"cannot reach {server.url}/frob/")

        # A clone killed with SIGKILL leaves its partial directory: the next run
        # starts that clone again from nothing.
        (inbox / "1.git.partial" / "objects").mkdir(parents=True)
        server.start()  # the same port again
        resumed = e2g(data, "--quiet", "sync", "--json")
        assert resumed.returncode == 0, resumed.stderr
        summary = json.loads(resumed.stdout)
        assert summary["inboxes"][0] | {"path": ""} == {
            "url": f"{server.url}/frob/",
            "list": "frob",
            "path": "",
            "epochs": 2,
            "cloned": 1,
            "fetched": 0,
            "unchanged": 1,
            "error": None,
        }
        assert summary["ingest"]["new"] == 5
        assert sorted(p.name for p in inbox.iterdir()) == [
            "0.git",
            "1.git",
        ]  # no partial
    finally:
        server.stop()


def test_an_interrupted_fetch_keeps_the_old_epoch_and_resumes(
    site: Site, settings: config.Settings
) -> None:
    with Server(site) as server:
        api.ingest(settings, [f"{server.url}/frob/"])
        site.add("frob", 1, 2)
        server.drop_after = 1
        synced = api.sync(settings)
        assert synced.inboxes[0].error is not None and synced.ingest is None
        server.wait_stopped()
        server.start()
        synced = api.sync(settings)
        assert synced.inboxes[0].fetched == 1
        assert synced.ingest is not None and synced.ingest.new == 2


@pytest.mark.slow
def test_unreachable_missing_and_foreign_urls_are_one_line_errors(
    site: Site, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    code = site.root / "code" / "git" / "0.git"
    git(site.root, "init", "-q", "--bare", str(code))
    readme = git(site.root, "--git-dir", str(code), "hash-object", "-w", "--stdin")
    tree = subprocess.run(
        ["git", f"--git-dir={code}", "mktree"],
        input=f"100644 blob {readme.strip()}\tREADME\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    commit = git(
        site.root, "--git-dir", str(code), "commit-tree", tree, "-m", "code"
    ).strip()
    git(site.root, "--git-dir", str(code), "update-ref", "refs/heads/master", commit)
    (site.root / "empty").mkdir()
    port = closed_port()
    with Server(site) as server:
        one_line_error(
            e2g(data, "ingest", f"{server.url}/nolist/"),
            f"{server.url}/nolist/ not found (HTTP 404)",
        )
        one_line_error(
            e2g(data, "ingest", f"{server.url}/empty/"),
            f"{server.url}/empty/ is not a public-inbox",
        )
        one_line_error(
            e2g(data, "ingest", f"{server.url}/code/"),
            f"{server.url}/code/ is not a public-inbox",
        )
        one_line_error(
            e2g(data, "ingest", f"http://127.0.0.1:{port}/frob/"),
            f"cannot reach http://127.0.0.1:{port}/frob/",
        )
        one_line_error(e2g(data, "sync"), "no inbox")


@pytest.mark.slow
def test_option_like_urls_reach_neither_git_nor_the_server(
    site: Site, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    victim = tmp_path / "pwned"
    with Server(site) as server:
        for url in (
            f"{server.url}/-oProxyCommand=touch%20{victim}/",
            f"{server.url}/--upload-pack=touch {victim}/frob/",
            f"http://-oProxyCommand=touch:{server.port}/frob/",
            f"ext::sh -c touch% {victim}",
        ):
            result = e2g(data, "ingest", "--", url)
            one_line_error(result, "invalid URL")
        assert server.requests == []
    assert not victim.exists()
    assert not (data / "mirrors" / "inboxes.json").exists()


@pytest.mark.slow
def test_sync_of_two_inboxes_and_one_repository(site: Site, tmp_path: Path) -> None:
    data = tmp_path / "data"
    site.add_epoch("quux", 2)
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "--initial-branch=main", str(repo))
    _commit(repo, "int a;\n", "a: first")
    with Server(site) as server:
        first = e2g(
            data, "ingest", "--json", f"{server.url}/frob/", f"{server.url}/quux/"
        )
        assert first.returncode == 0, first.stderr
        assert "frob: epoch 1: cloned" in first.stderr
        assert [m["list"] for m in json.loads(first.stdout)["mirrors"]] == [
            "frob",
            "quux",
        ]
        matched = e2g(data, "match", "-C", str(repo))
        assert matched.returncode == 0, matched.stderr

        site.add("frob", 1, 2)
        site.add_epoch("quux", 1)
        _commit(repo, "int a, b;\n", "a: second")
        synced = e2g(data, "sync")
        assert synced.returncode == 0, synced.stderr
        lines = synced.stderr.splitlines()
        assert "frob: 2 epochs: 0 cloned, 1 fetched, 1 up to date" in lines
        assert "quux: 2 epochs: 1 cloned, 0 fetched, 1 up to date" in lines
        assert any(line.startswith("3 messages (3 new)") for line in lines)
        # Both commits are matched: the new one, and the unmatched one again, as
        # new mail came.
        assert any(
            line.startswith(f"{repo}: 2 commits: ") and "2 no match" in line
            for line in lines
        ), synced.stderr
        assert lines[-1].startswith("synced 2 inboxes in ")

        quiet = e2g(data, "sync", "--json")
        assert quiet.returncode == 0, quiet.stderr
        summary = json.loads(quiet.stdout)
        assert sorted(summary) == [
            "elapsed",
            "inboxes",
            "ingest",
            "match",
            "repos_skipped",
            "tokens",
        ]
        assert [
            (i["list"], i["unchanged"], i["error"]) for i in summary["inboxes"]
        ] == [
            ("frob", 2, None),
            ("quux", 2, None),
        ]
        assert summary["ingest"] is None
        (only,) = summary["match"]
        assert (only["repo"], only["commits"], only["skipped"]) == (str(repo), 0, 2)
