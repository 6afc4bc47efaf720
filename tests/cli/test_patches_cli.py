"""`e2g patches` and `e2g events` on the queue world (tests.queue_world): the JSON
keys, the filters, the series lines, exit codes, and events recorded once."""

from __future__ import annotations

import json
import mailbox
import subprocess
from pathlib import Path

import pytest

from e2g import config
from e2g.api.queue.refresh import refresh
from tests.cli.test_cli import assert_one_line_error, e2g
from tests.queue_world import FRESH, QUIET, build

PATCH_KEYS = {
    "message_id",
    "subject",
    "author",
    "date",
    "list",
    "series",
    "version",
    "part",
    "state",
    "commits",
    "superseded_by",
    "reviews",
    "replies",
    "last_activity",
}
EVENT_KEYS = {
    "id",
    "kind",
    "found",
    "message_id",
    "series",
    "from",
    "to",
    "commit",
    "tree",
    "release",
}

World_ = tuple[config.Settings, Path, dict[str, str]]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World_:
    settings, _, ids = build(tmp_path_factory.mktemp("queue-cli"))
    refresh(settings, now=FRESH)  # as a run on the day would have left it
    return settings, settings.data_dir, ids


def _lines(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_json_lines_keep_the_keys_one_per_patch_version(world: World_) -> None:
    _, data, ids = world
    found = _lines(e2g(data, "patches", "--state", "all", "--json"))
    assert all(set(line) == PATCH_KEYS for line in found)
    by_id = {line["message_id"]: line for line in found}
    assert len(by_id) == len(found) == 11  # every patch, no cover letter
    applied = by_id[ids["applied"]]
    assert applied["state"] == "applied"
    (commit,) = applied["commits"]  # type: ignore[misc]
    assert set(commit) == {"commit", "repo", "tree", "branch", "release"}
    assert by_id[ids["superseded"]]["superseded_by"] == ids["new"]
    assert by_id[ids["series-open"]]["part"] == "2/2"
    assert by_id[ids["series-open"]]["series"] == ids["cover"]
    assert by_id[ids["reviewed"]]["reviews"] == [
        {"who": "Bob Reviewer", "tag": "Reviewed-by"}
    ]
    dates = [line["date"] for line in found]
    assert dates == sorted(dates, reverse=True)  # type: ignore[type-var]


def test_by_default_what_needs_action(world: World_) -> None:
    _, data, ids = world
    found = _lines(e2g(data, "patches", "--json"))
    assert {line["state"] for line in found} == {"new", "under-review", "reviewed"}
    assert ids["applied"] not in {line["message_id"] for line in found}


def test_filters_state_author_list_and_dates(world: World_) -> None:
    _, data, ids = world
    rejected = _lines(e2g(data, "patches", "--state", "rejected", "--json"))
    assert [line["message_id"] for line in rejected] == [ids["rejected"]]
    assert (
        _lines(e2g(data, "patches", "--state", "all", "--from", "bob", "--json")) == []
    )
    alice = _lines(e2g(data, "patches", "--state", "all", "--from", "ALICE", "--json"))
    assert len(alice) == 11
    other = e2g(data, "patches", "--state", "all", "--list", "nowhere", "--json")
    assert _lines(other) == []
    later = e2g(data, "patches", "--state", "all", "--since", "2030-01-01", "--json")
    assert _lines(later) == []


def test_a_query_as_search_takes_it(world: World_) -> None:
    _, data, ids = world
    found = _lines(e2g(data, "patches", "--state", "all", "--json", "s:frob"))
    assert [line["message_id"] for line in found] == [ids["untracked"]]


def test_series_lines_say_how_much_landed(world: World_) -> None:
    _, data, _ = world
    result = e2g(data, "patches", "--state", "all")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    (head,) = [line for line in lines if "g and h" in line]
    assert "partly-applied 1 of 2" in head
    assert any("  [PATCH 2/2] h: set h3" in line for line in lines)
    assert any("untracked (new)" in line for line in lines)


def test_bad_filters_are_one_line_errors(world: World_) -> None:
    _, data, _ = world
    assert_one_line_error(e2g(data, "patches", "--state", "merged"), 2, "merged")
    assert_one_line_error(e2g(data, "patches", "--since", "soon"), 2, "soon")
    empty = e2g(data, "patches", "--state", "rejected", "--from", "zzz", "--exit-code")
    assert empty.returncode == 4


def test_events_once_each_with_their_keys(world: World_) -> None:
    settings, data, ids = world
    found = _lines(e2g(data, "events", "--json"))
    assert all(set(line) == EVENT_KEYS for line in found)
    ordered = [line["id"] for line in found]
    assert ordered == sorted(ordered)  # type: ignore[type-var]
    created = [line["message_id"] for line in found if line["kind"] == "patch-created"]
    assert sorted(created) == sorted(set(created))
    assert len(created) == 11
    (landed,) = [
        line
        for line in found
        if line["kind"] == "patch-applied" and line["message_id"] == ids["applied"]
    ]
    assert landed["to"] == "applied" and len(str(landed["commit"])) == 40
    completed = [line for line in found if line["kind"] == "series-completed"]
    assert [line["message_id"] for line in completed] == [ids["cover"]]

    assert refresh(settings, now=FRESH).events == 0  # nothing new: nothing recorded
    last = int(ordered[-1])  # type: ignore[call-overload]
    moved = refresh(settings, now=QUIET)
    assert moved.events == moved.changed > 0
    later = _lines(e2g(data, "events", "--since", str(last), "--json"))
    assert {line["kind"] for line in later} == {"patch-state-changed"}
    assert {line["to"] for line in later} == {"not-applied"}
    assert ids["new"] in {line["message_id"] for line in later}
    assert refresh(settings, now=QUIET).events == 0
    refresh(settings, now=FRESH)  # back, for the other tests


def test_series_shows_every_version_and_what_changed(world: World_) -> None:
    _, data, ids = world
    (found,) = _lines(e2g(data, "series", "--json", f"<{ids['new']}>"))
    assert [v["version"] for v in found["versions"]] == [1, 2]
    first, second = found["versions"]
    assert [p["state"] for p in first["parts"]] == ["superseded"]
    assert [p["state"] for p in second["parts"]] == ["new"]
    (change,) = found["changes"]
    assert (change["from"], change["to"]) == (1, 2)
    (part,) = change["parts"]
    assert (part["from"], part["to"]) == (ids["superseded"], ids["new"])
    (file,) = part["files"]
    assert (file["path"], file["change"], file["edited"]) == ("b.c", "changed", 1)
    text = e2g(data, "series", ids["superseded"])  # any version answers
    assert text.returncode == 0, text.stderr
    assert "b.c changed (1 edited hunks)" in text.stdout
    assert_one_line_error(e2g(data, "series", "nosuch@x"), 1, "nosuch@x")


def test_ty_drafts_thanks_threaded_to_each_applied_series(
    world: World_, tmp_path: Path
) -> None:
    _, data, ids = world
    drafts = tmp_path / "ty.mbox"
    done = e2g(data, "ty", "-o", str(drafts), "--sender", "Mia <mia@example.org>")
    assert done.returncode == 0, done.stderr
    assert "2 drafts (1 of a subset)" in done.stderr
    found = {str(m["In-Reply-To"]): m for m in mailbox.mbox(str(drafts))}
    assert set(found) == {f"<{ids['cover']}>", f"<{ids['applied']}>"}
    series = found[f"<{ids['cover']}>"]
    assert series["Subject"] == "Re: [PATCH 0/2] g and h (subset)"
    assert series["To"] == "Alice Author <alice@example.org>"
    assert series["From"] == "Mia <mia@example.org>"
    body = series.get_payload()
    assert "[1/2] [PATCH 1/2] g: set g3" in body and "h: set h3" not in body
    assert "commit: " in body
    alone = found[f"<{ids['applied']}>"]
    assert "(subset)" not in alone["Subject"]
    again = e2g(data, "ty")  # since the last run: nothing new
    assert again.returncode == 0 and again.stdout == ""
    everything = e2g(data, "ty", "--since", "0")
    assert everything.stdout.count("\nApplied, thanks!") == 2
