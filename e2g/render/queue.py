"""The patch queue's JSON shapes, shared by `e2g patches --json`, `e2g events
--json` and their twins under /api/v1/ (keys fixed by issue 35: keep them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from e2g.render import iso

if TYPE_CHECKING:
    from e2g.api.queue.listing import EventView, PatchView
    from e2g.api.queue.versions import SeriesHistory


def patch_json(view: PatchView) -> dict[str, object]:
    """One patch version: `message_id`, `subject`, `author`, `date`, `list`,
    `series`, `version`, `part`, `state`, `commits`, `superseded_by`, `reviews`,
    `replies`, `last_activity`."""
    return {
        "message_id": view.message_id,
        "subject": view.subject,
        "author": _person(view.author_name, view.author_email),
        "date": iso(view.date),
        "list": view.list,
        "series": view.series,
        "version": view.version,
        "part": view.part,
        "state": view.state,
        "commits": [commit._asdict() for commit in view.commits],
        "superseded_by": view.superseded_by,
        "reviews": [review._asdict() for review in view.reviews],
        "replies": view.replies,
        "last_activity": iso(view.last_activity),
    }


def event_json(event: EventView) -> dict[str, object]:
    """One event: `id`, `kind`, `found`, `message_id`, `series`, `from`, `to`,
    `commit`, `tree`, `release`."""
    return {
        "id": event.id,
        "kind": event.kind,
        "found": iso(event.found),
        "message_id": event.message_id,
        "series": event.series,
        "from": event.from_state,
        "to": event.to_state,
        "commit": event.commit,
        "tree": event.tree,
        "release": event.release,
    }


def series_json(history: SeriesHistory) -> dict[str, object]:
    """`e2g series --json`: each version (its parts as `patch_json`) and, between
    two versions, each part's files and how they changed."""
    return {
        "message_id": history.asked,
        "versions": [
            {
                "message_id": version.message_id,
                "version": version.version,
                "subject": version.subject,
                "date": iso(version.date),
                "state": version.state,
                "tally": version.tally or None,
                "parts": [patch_json(part) for part in version.parts],
            }
            for version in history.versions
        ],
        "changes": [
            {
                "from": change.before,
                "to": change.after,
                "parts": [
                    {
                        "part": part.part,
                        "from": part.before,
                        "to": part.after,
                        "files": [file._asdict() for file in part.files],
                    }
                    for part in change.parts
                ],
            }
            for change in history.changes
        ],
    }


def _person(name: str, email: str) -> str:
    return f"{name} <{email}>" if name else email
