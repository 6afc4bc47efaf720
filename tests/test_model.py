"""Model values cross process boundaries (e2g match's workers): pickling keeps them whole."""

from __future__ import annotations

import copy
import pickle
import pickletools
from datetime import UTC, datetime, timedelta, timezone

from e2g.model import Address
from e2g.model.links import CommitInfo, Evidence, LinkResult, Posting, Rejected


def result() -> LinkResult:
    author = Address("Ada Lovelace", "ada@example.org")
    when = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    posting = Posting(
        message_id="20240501.1@example.org",
        subject="[PATCH v2 1/2] io_uring: fix the ring",
        date=when.astimezone(UTC),
        author=author,
        lists=("io-uring.vger.kernel.org",),
        version=2,
        kind="patch",
        applied=True,
        method="subject",
        score=0.91,
        url="https://lore.kernel.org/r/20240501.1@example.org",
        thread_root="20240501.0@example.org",
        replies=3,
        participants=("Bob <bob@example.org>",),
        reviewers=("Reviewed-by: Bob <bob@example.org>",),
        evidence=(Evidence("subject", "equal subject", 0.25),),
    )
    return LinkResult(
        commit=CommitInfo(
            "a" * 40, "io_uring: fix the ring", author, when, when, ("a.c",)
        ),
        postings=(posting,),
        rejected=(Rejected("x@y", "other", 0.2, "diff disagrees"),),
        note="",
    )


def test_link_results_survive_pickling_and_copying() -> None:
    original = result()
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(original, protocol=protocol))
        assert again == original
        assert again.postings[0].date == original.postings[0].date
    assert copy.copy(original) == original
    assert copy.deepcopy(original) == original


def test_values_pickle_as_their_fields_in_order_without_names() -> None:
    # e2g match's workers send every LinkResult to the main process: a pickle that
    # names each field (a slotted dataclass's state dict) costs per object.
    for value in (
        result(),
        result().commit,
        result().postings[0],
        result().rejected[0],
    ):
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        # BUILD sets a state (a dict or slots by name) after the object is made.
        assert "BUILD" not in {op.name for op, _, _ in pickletools.genops(data)}
        names = value._fields
        assert tuple(pickle.loads(data)) == tuple(getattr(value, n) for n in names)
