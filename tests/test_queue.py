"""The patch queue's states (e2g.api.queue.states), one test per state, on a real
repository and archive (tests.queue_world), derived as ingest and match leave it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2g import config
from e2g.api.basis import open_store
from e2g.api.core import ingest
from e2g.api.queue import states
from e2g.api.queue.refresh import refresh
from e2g.index.store import QueueRow
from tests.audit_world import World
from tests.conftest import mail
from tests.queue_world import FRESH, QUIET, build

World_ = tuple[config.Settings, World, dict[str, str]]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World_:
    return build(tmp_path_factory.mktemp("queue"))


def _rows(settings: config.Settings, now: object = FRESH) -> dict[str, QueueRow]:
    refresh(settings, now=now)  # type: ignore[arg-type]
    with open_store(settings) as store:
        return {row.message_id: row for row in store.queue_all()}


def _state(world: World_, name: str, now: object = FRESH) -> QueueRow:
    settings, _, ids = world
    return _rows(settings, now)[ids[name]]


def test_applied_names_its_commit(world: World_) -> None:
    row = _state(world, "applied")
    assert row.state == states.APPLIED
    (commit,) = json.loads(row.facts)["commits"]
    assert commit["repo"] == str(world[1].repo.resolve())
    assert len(commit["commit"]) == 40


def test_an_earlier_version_is_superseded_by_the_later(world: World_) -> None:
    _, _, ids = world
    row = _state(world, "superseded")
    assert row.state == states.SUPERSEDED
    assert row.superseded_by == ids["new"]
    assert json.loads(row.facts)["superseded_applied"] is False


def test_no_reply_is_new(world: World_) -> None:
    row = _state(world, "new")
    assert (row.state, row.version) == (states.NEW, 2)
    assert json.loads(row.facts)["replies"] == 0


def test_the_authors_own_replies_leave_it_new(world: World_) -> None:
    assert _state(world, "own-reply").state == states.NEW


def test_a_review_tag_in_a_reply_is_reviewed(world: World_) -> None:
    row = _state(world, "reviewed")
    assert row.state == states.REVIEWED
    assert json.loads(row.facts)["reviews"] == [
        {"who": "Bob Reviewer", "tag": "Reviewed-by"}
    ]


def test_a_reply_from_someone_else_without_a_tag_is_under_review(
    world: World_,
) -> None:
    row = _state(world, "under-review")
    assert row.state == states.UNDER_REVIEW
    assert json.loads(row.facts)["replies"] == 1  # the author's answer is not counted


def test_a_nack_after_an_ack_is_rejected(world: World_) -> None:
    row = _state(world, "rejected")
    assert row.state == states.REJECTED
    tags = [review["tag"] for review in json.loads(row.facts)["reviews"]]
    assert tags == ["Acked-by", "Nacked-by"]


def test_a_patch_to_paths_no_matched_repository_has_is_untracked(
    world: World_,
) -> None:
    row = _state(world, "untracked")
    assert row.state == states.UNTRACKED
    assert "mm/frob.c" in row.untracked
    assert row.mail_state == states.NEW  # its mail state is still said


def test_quiet_for_the_configured_days_is_not_applied(world: World_) -> None:
    settings, _, ids = world
    rows = _rows(settings, QUIET)
    assert rows[ids["new"]].state == states.NOT_APPLIED
    assert rows[ids["reviewed"]].state == states.NOT_APPLIED
    assert rows[ids["rejected"]].state == states.REJECTED  # a nack is an answer
    assert rows[ids["applied"]].state == states.APPLIED
    longer = settings._replace(queue_quiet_days=365)
    assert _rows(longer, QUIET)[ids["reviewed"]].state == states.REVIEWED
    _rows(settings, FRESH)  # as the other tests expect it


def test_a_series_partly_applied_says_how_much(world: World_) -> None:
    settings, _, ids = world
    rows = _rows(settings)
    first, second = rows[ids["series-applied"]], rows[ids["series-open"]]
    assert first.series == second.series == ids["cover"]
    assert (first.state, second.state) == (states.APPLIED, states.NEW)
    assert states.series_state([first.state, second.state]) == (
        states.PARTLY_APPLIED,
        "1 of 2",
    )


def test_series_state_rules() -> None:
    applied, new = states.APPLIED, states.NEW
    assert states.series_state([applied, applied]) == (applied, "")
    assert states.series_state([states.SUPERSEDED] * 3) == (states.SUPERSEDED, "")
    assert states.series_state([states.REVIEWED, new]) == (new, "")
    assert states.series_state([states.REVIEWED, states.REJECTED])[0] == "rejected"


def test_mail_state_rules() -> None:
    assert states.mail_state([], replied=False) == states.NEW
    assert states.mail_state([], replied=True) == states.UNDER_REVIEW
    assert states.mail_state(["Nacked-by", "Reviewed-by"], replied=True) == (
        states.REVIEWED
    )
    assert states.mail_state(["Reviewed-by", "Nacked-by"], replied=True) == (
        states.REJECTED
    )


def test_untracked_rule_reads_directories_not_the_top() -> None:
    known = {"repo": states.known_paths({"src/queue.c", "Makefile"})}
    assert states.untracked_because(["src/new.c"], known) == ""
    assert states.untracked_because(["Makefile"], known) == ""
    assert "io_uring/rw.c" in states.untracked_because(["io_uring/rw.c"], known)
    assert states.untracked_because(["README"], known) != ""  # the top holds all
    assert states.untracked_because(["io_uring/rw.c"], {}) == ""  # nothing matched


def test_a_new_reply_moves_only_its_patch(world: World_, tmp_path: Path) -> None:
    settings, _, ids = world
    before = _rows(settings)
    reply = mail(
        900,
        subject="Re: [PATCH] f: set f3",
        body="Reviewed-by: Carol Tester <carol@example.org>\n",
        sender="Carol Tester <carol@example.org>",
        message_id="f-r2@x",
        in_reply_to=ids["own-reply"],
        date=FRESH - __import__("datetime").timedelta(days=5),
    )
    archive = tmp_path / "more.mbox"
    archive.write_bytes(reply)
    ingest(settings, [str(archive)], workers=1)
    done = refresh(settings, now=FRESH)
    after = _rows(settings)
    assert after[ids["own-reply"]].state == states.REVIEWED
    moved = {mid for mid, row in after.items() if row.state != before[mid].state}
    assert moved == {ids["own-reply"]}
    assert done.derived == 0  # ingest derived it; this refresh had nothing to do
