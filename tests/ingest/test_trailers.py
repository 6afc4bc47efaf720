"""Trailer blocks and the Message-IDs that Link:/Message-Id: trailers name."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from e2g.mail.msgid import from_url as message_id_from_url
from e2g.mail.trailers import linked_message_ids, parse_trailers
from e2g.model import Trailer

# A real liburing commit message shape (axboe/liburing 2024), trailer block last.
LIBURING_MESSAGE = """\
test/recv-multishot: add test case for bundles

Add a test case that exercises receive bundles with multishot.

Link: https://lore.kernel.org/r/20240206161449.1234567-2-axboe@kernel.dk
Signed-off-by: Jens Axboe <axboe@kernel.dk>
"""


def test_trailer_block_keys_and_values() -> None:
    trailers = parse_trailers(LIBURING_MESSAGE)
    assert trailers == (
        Trailer(
            "Link", "https://lore.kernel.org/r/20240206161449.1234567-2-axboe@kernel.dk"
        ),
        Trailer("Signed-off-by", "Jens Axboe <axboe@kernel.dk>"),
    )
    assert linked_message_ids(trailers) == ["20240206161449.1234567-2-axboe@kernel.dk"]


def test_keys_get_canonical_case() -> None:
    message = (
        "subj\n\nbody\n\nsigned-off-BY: A <a@b.c>\nMessage-ID: <x@y.z>\nCC: c@d.e\n"
    )
    keys = [trailer.key for trailer in parse_trailers(message)]
    assert keys == ["Signed-off-by", "Message-Id", "Cc"]


def test_subject_alone_is_not_a_trailer() -> None:
    assert parse_trailers("test: check return of io_uring_get_sqe()\n") == ()


def test_prose_last_paragraph_is_not_a_block() -> None:
    message = "subj\n\nSigned-off-by: A <a@b>\n\nThis is a note: written after\nthe sign-off, in prose.\n"
    assert parse_trailers(message) == ()


def test_block_with_a_maintainer_note_still_counts() -> None:
    message = (
        "subj\n\nbody\n\n"
        "Reported-by: R <r@x.org>\n"
        "[axboe: fold in fix for the error path]\n"
        "Signed-off-by: Jens Axboe <axboe@kernel.dk>\n"
    )
    keys = [trailer.key for trailer in parse_trailers(message)]
    assert keys == ["Reported-by", "Signed-off-by"]


def test_continuation_lines_are_unfolded() -> None:
    message = "subj\n\nbody\n\nLink: https://lore.kernel.org/io-uring/\n  abc@def.gh/\nSigned-off-by: A <a@b>\n"
    trailers = parse_trailers(message)
    assert trailers[0] == Trailer(
        "Link", "https://lore.kernel.org/io-uring/ abc@def.gh/"
    )


def test_link_paragraph_above_a_note_is_kept() -> None:
    message = (
        "subj\n\nbody\n\n"
        "Link: https://patch.msgid.link/20250101-x-v1-1-abc@example.com\n\n"
        "Signed-off-by: A <a@b>\n"
    )
    ids = linked_message_ids(parse_trailers(message))
    assert ids == ["20250101-x-v1-1-abc@example.com"]


def test_url_alone_on_a_line_is_not_a_trailer_named_https() -> None:
    message = "subj\n\nbody\n\nhttps://github.com/axboe/liburing/issues/1207\nSigned-off-by: A <a@b>\n"
    assert [trailer.key for trailer in parse_trailers(message)] == ["Signed-off-by"]


def test_lore_url_forms() -> None:
    expected = "20200101120000.1234-1-someone@example.com"
    urls = [
        f"https://lore.kernel.org/r/{expected}",
        f"https://lore.kernel.org/r/{expected}/",
        f"https://lore.kernel.org/io-uring/{expected}/T/#u",
        f"https://lore.kernel.org/all/{expected}/#t",
        f"https://lore.kernel.org/io-uring/{expected}/raw",
        f"http://lkml.kernel.org/r/{expected}",
        f"https://patch.msgid.link/{expected}",
        f"https://patchwork.kernel.org/project/io-uring/patch/{expected}/",
        f"<https://lore.kernel.org/r/{expected}>",
        f"https://lore.kernel.org/r/{expected}.",
        "https://lore.kernel.org/r/20200101120000.1234-1-someone%40example.com",
    ]
    assert [message_id_from_url(url) for url in urls] == [expected] * len(urls)


def test_percent_escapes_are_decoded() -> None:
    url = "https://lore.kernel.org/r/CAHk%2Bx%3Dabc%40mail.gmail.com"
    assert message_id_from_url(url) == "CAHk+x=abc@mail.gmail.com"


def test_urls_that_name_no_message_id() -> None:
    urls = [
        "https://github.com/axboe/liburing/pull/1403#issuecomment-2894426034",
        "https://github.com/axboe/liburing/issues/1207",
        "https://marc.info/?l=linux-kernel&m=158000000000000",
        "https://www.spinics.net/lists/io-uring/msg1234.html",
        "https://lkml.org/lkml/2020/1/1/123",
        "https://lore.kernel.org/io-uring/",
        "https://[broken/",
    ]
    assert [message_id_from_url(url) for url in urls] == [None] * len(urls)


def test_bare_message_id_only_from_id_keys() -> None:
    trailers = (
        Trailer("Signed-off-by", "Jane <jane@example.com>"),
        Trailer("Message-Id", "<20200101.1-1-jane@example.com>"),
        Trailer("Link", "<20200102.2-1-jane@example.com>"),
        Trailer("Message-Id", "20200103.3-1-jane@example.com"),
    )
    assert linked_message_ids(trailers) == [
        "20200101.1-1-jane@example.com",
        "20200102.2-1-jane@example.com",
        "20200103.3-1-jane@example.com",
    ]


def test_url_in_other_trailer_and_duplicates() -> None:
    trailers = (
        Trailer("Reported-by", "R <r@x> # https://lore.kernel.org/r/report@x.org"),
        Trailer("Closes", "https://lore.kernel.org/all/report@x.org/"),
        Trailer("Closes", "https://github.com/axboe/liburing/issues/1"),
        Trailer("Link", "https://github.com/axboe/liburing/pull/2"),
    )
    assert linked_message_ids(trailers) == ["report@x.org"]


@given(st.text(max_size=400))
def test_parse_never_raises_and_is_idempotent(text: str) -> None:
    first = parse_trailers(text)
    assert first == parse_trailers(text)
    ids = linked_message_ids(first)
    assert all("@" in message_id and len(message_id) <= 512 for message_id in ids)


@given(st.text(alphabet="abc@%/:.<>#Tr-40", max_size=80))
def test_url_parser_never_raises(tail: str) -> None:
    result = message_id_from_url("https://lore.kernel.org/" + tail)
    assert result is None or "@" in result


def test_one_vocabulary_for_mail_display_and_reviews() -> None:
    """The keys mail keeps, the lines the thread view marks as trailers and the
    reviews a posting lists all come from the one vocabulary."""
    from e2g.mail.trailers import (
        REVIEW_KEYS,
        TrailerKind,
        find_in_mail,
        is_trailer_line,
        kind_of,
    )

    assert set(REVIEW_KEYS) == {
        "Reviewed-by",
        "Acked-by",
        "Tested-by",
        "Nacked-by",
        "Reviewed-and-tested-by",
    }
    for key in REVIEW_KEYS:
        line = f"{key.upper()}: A <a@example.org>"
        assert is_trailer_line(line)
        assert kind_of(key.lower()) is TrailerKind.REVIEW
        assert find_in_mail(line) == (Trailer(key, "A <a@example.org>"),)
    assert kind_of("Co-developed-by") is TrailerKind.PERSON
    assert kind_of("Closes") is TrailerKind.UTILITY
    assert kind_of("Note") is None
    assert not is_trailer_line("Note: prose")
    assert not is_trailer_line("Reviewed-by:")  # a key alone on its line
    assert is_trailer_line("Cc: stable@vger.kernel.org")  # shown as one, not kept
    assert find_in_mail("Cc: stable@vger.kernel.org") == ()
