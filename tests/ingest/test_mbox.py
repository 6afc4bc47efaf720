"""The mbox splitter and readers on real mbox bytes: dialects, compression, resume."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import tracemalloc
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from e2g.archives.mbox import (
    CL2,
    MBOX,
    MESSAGE,
    RD,
    classify_head,
    read_mbox,
    read_mbox_stream,
    read_message_file,
    split_from_line,
    split_mbox,
    unquote_from,
)

FROM_LINE = b"From alice@example.org Mon Mar  1 12:00:00 2021"


def message(number: int, body: bytes = b"Hello.\n", newline: bytes = b"\n") -> bytes:
    lines = [
        b"From: Alice <alice@example.org>",
        b"Subject: message %d" % number,
        b"Message-ID: <msg%d@example.org>" % number,
        b"",
    ]
    text = b"\n".join(lines) + b"\n" + body
    return text.replace(b"\n", newline)


def mboxrd(messages: Sequence[bytes], newline: bytes = b"\n") -> bytes:
    """What an mboxrd writer produces: quote ">*From ", add a blank line after each."""
    out = []
    for data in messages:
        quoted = re.sub(rb"(?m)^(>*From )", rb">\1", data)
        out.append(FROM_LINE + newline + quoted + newline)
    return b"".join(out)


def datas(path: Path, **options: object) -> list[bytes]:
    return [raw.data for raw, _ in read_mbox(path, source=str(path), **options)]  # type: ignore[arg-type]


def chunked(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


# --- splitting and dialects -------------------------------------------------------


def test_split_gives_messages_from_lines_and_offsets() -> None:
    messages = [message(1), message(2), message(3)]
    data = mboxrd(messages)
    parts = list(split_mbox([data]))
    assert [part.data for part in parts] == messages
    assert [part.from_line for part in parts] == [FROM_LINE] * 3
    assert parts[0].start == 0
    assert [part.start for part in parts[1:]] == [part.end for part in parts[:-1]]
    assert data[parts[1].start :].startswith(b"From ")
    assert parts[-1].end == len(data)


def test_mboxrd_quoting_is_undone_one_level() -> None:
    body = b"From the start\n>From quoted\n>>From twice\nplain\n"
    data = mboxrd([message(1, body)])
    assert b"\n>From the start\n>>From quoted\n>>>From twice\n" in data
    (part,) = split_mbox([data])
    assert part.data == message(1, body)
    assert part.dialect == RD


def test_mboxo_from_lines_come_back_unquoted() -> None:
    # mboxo writers quote only "From " lines; reading takes ">From " back to "From ".
    data = FROM_LINE + b"\n" + message(1, b"Text\n\n>From Linus: hi\n") + b"\n"
    (part,) = split_mbox([data])
    assert part.data == message(1, b"Text\n\nFrom Linus: hi\n")


def test_from_in_body_not_after_blank_line_does_not_split() -> None:
    body = b"line one\nFrom here on it breaks\nSubject: not a header\n"
    data = FROM_LINE + b"\n" + message(1, body) + b"\n" + FROM_LINE + b"\n" + message(2)
    parts = list(split_mbox([data]))
    assert [part.data for part in parts] == [message(1, body), message(2)]


def test_unquoted_prose_from_after_blank_line_does_not_split() -> None:
    # A sloppy mboxo writer forgot to quote: the next line is no header, so no cut.
    body = b"para\n\nFrom the start, we knew\nit would break.\n"
    data = FROM_LINE + b"\n" + message(1, body) + b"\n"
    (part,) = split_mbox([data])
    assert part.data == message(1, body)


def test_crlf_mbox() -> None:
    messages = [message(1, newline=b"\r\n"), message(2, newline=b"\r\n")]
    data = mboxrd(messages, newline=b"\r\n")
    parts = list(split_mbox([data]))
    assert [part.data for part in parts] == messages
    assert parts[0].from_line == FROM_LINE


def cl2_message(number: int, body: bytes) -> bytes:
    header = b"From: a@example.org\nSubject: cl2 %d\nContent-Length: %d\n\n"
    return header % (number, len(body)) + body


def test_mboxcl2_uses_correct_content_length_and_does_not_unquote() -> None:
    tricky = b"Quoting:\n\nFrom bob@example.org Mon Mar  1 2021\nSubject: fake\n\nend\n"
    later = b"Plain >From stays\n"
    messages = [cl2_message(1, tricky), cl2_message(2, later), cl2_message(3, b"x\n")]
    data = b"".join(FROM_LINE + b"\n" + item + b"\n" for item in messages)
    parts = list(split_mbox([data]))
    assert [part.data for part in parts] == messages
    assert [part.dialect for part in parts] == [CL2, CL2, CL2]


def test_wrong_content_length_is_ignored() -> None:
    wrong = b"From: a@example.org\nContent-Length: 9999\n\nbody\n"
    data = FROM_LINE + b"\n" + wrong + b"\n" + FROM_LINE + b"\n" + message(2)
    parts = list(split_mbox([data]))
    assert [part.data for part in parts] == [wrong, message(2)]
    assert parts[-1].dialect == RD


def test_stream_without_from_line_starts_with_a_message() -> None:
    data = message(1) + b"\n" + FROM_LINE + b"\n" + message(2)
    parts = list(split_mbox([data]))
    assert [(part.from_line, part.data) for part in parts] == [
        (None, message(1)),
        (FROM_LINE, message(2)),
    ]


def test_oversized_message_is_truncated_and_the_next_one_survives() -> None:
    big = message(1, b"x" * 50_000 + b"\n")
    data = mboxrd([big, message(2)])
    parts = list(split_mbox(chunked(data, 64), limit=1000))
    assert parts[0].data == big[:1000]
    assert parts[1].data == message(2)
    assert parts[1].start == data.index(b"\n\nFrom ") + 2


def test_memory_stays_flat_on_a_long_stream() -> None:
    one = mboxrd([message(1, b"line of text\n" * 300)])  # ~4 KB
    count = 2500  # ~10 MB streamed, never held whole

    def stream() -> Iterator[bytes]:
        for _ in range(count // 250):
            yield one * 250

    tracemalloc.start()
    total = sum(len(part.data) for part in split_mbox(stream()))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert total == count * (len(one) - len(FROM_LINE) - 2)
    assert peak < 4 * 1024 * 1024


line = st.sampled_from(
    [b"", b"text", b"From x", b">From y", b">>From z", b"From: a@b", b"Subject: s"]
)
bodies = st.lists(st.lists(line, max_size=8), min_size=1, max_size=6)


@given(bodies)
def test_mboxrd_round_trip(body_lines: list[list[bytes]]) -> None:
    messages = [
        b"Subject: n\n\n" + b"".join(item + b"\n" for item in lines)
        for lines in body_lines
    ]
    parts = list(split_mbox([mboxrd(messages)]))
    assert [part.data for part in parts] == messages
    assert all(part.from_line == FROM_LINE for part in parts)


@given(bodies, st.integers(min_value=1, max_value=50))
def test_chunk_size_does_not_change_the_split(
    body_lines: list[list[bytes]], size: int
) -> None:
    messages = [b"Subject: n\n\n" + b"\n".join(lines) for lines in body_lines]
    data = mboxrd(messages)
    assert list(split_mbox(chunked(data, size))) == list(split_mbox([data]))


@settings(max_examples=200)
@given(st.binary(max_size=600))
def test_split_never_raises_and_covers_the_stream(data: bytes) -> None:
    parts = list(split_mbox(chunked(data, 7)))
    assert all(part.start <= part.end for part in parts)
    assert all(a.end <= b.start for a, b in zip(parts, parts[1:], strict=False))
    if parts:
        assert parts[-1].end == len(data)
    assert parts == list(split_mbox([data]))


@given(st.binary(max_size=200))
def test_unquote_is_idempotent_where_nothing_is_quoted(data: bytes) -> None:
    once = unquote_from(data)
    assert len(once) <= len(data)
    if b">From " not in data:
        assert once == data


def test_classify_head() -> None:
    assert classify_head(FROM_LINE + b"\n" + message(1)) == MBOX
    assert classify_head(b"") == MBOX
    assert classify_head(b"Return-Path: <a@b>\nReceived: x\n") == MESSAGE
    assert classify_head(b"\x89PNG\r\n\x1a\n") is None
    assert classify_head(b"Hello: world\nnot mail at all\n") is None


def test_split_from_line() -> None:
    assert split_from_line(FROM_LINE + b"\r\n" + message(1)) == (FROM_LINE, message(1))
    assert split_from_line(message(1)) == (None, message(1))


# --- files, compression and resume ------------------------------------------------


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


COMPRESSORS = {
    "plain": lambda data: data,
    "gz": gzip.compress,
    "xz": lzma.compress,
    "bz2": bz2.compress,
    "zst": lambda data: zstandard.ZstdCompressor().compress(data),
}


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_each_compression_reads_the_same(tmp_path: Path, kind: str) -> None:
    messages = [message(number) for number in range(5)]
    path = write(tmp_path / f"list.mbox.{kind}", COMPRESSORS[kind](mboxrd(messages)))
    found = list(read_mbox(path, source="s", list_hint="frob"))
    assert [raw.data for raw, _ in found] == messages
    assert found[0][0].origin.source == "s"
    assert found[0][0].origin.list_hint == "frob"
    assert found[1][0].origin.position == str(len(mboxrd(messages[:1])))


@pytest.mark.parametrize("kind", ["gz", "xz", "bz2", "zst"])
def test_concatenated_members_and_frames(tmp_path: Path, kind: str) -> None:
    first, second = [message(1), message(2)], [message(3)]
    compress = COMPRESSORS[kind]
    data = compress(mboxrd(first)) + compress(mboxrd(second))
    assert datas(write(tmp_path / f"cat.mbox.{kind}", data)) == first + second


def test_damaged_gzip_keeps_what_came_before(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    messages = [message(number, b"%d\n" % number * 2000) for number in range(20)]
    data = gzip.compress(mboxrd(messages))
    found = datas(write(tmp_path / "cut.mbox.gz", data[: len(data) // 2]))
    assert 0 < len(found) < 20
    assert found[:-1] == messages[: len(found) - 1]
    # Said at default verbosity (e2g.notice), with where it stopped.
    assert "damaged or truncated gzip data after" in caplog.text
    assert any(record.name == "e2g.notice" for record in caplog.records)


def tokens(path: Path, checkpoint: str | None = None) -> list[tuple[bytes, str | None]]:
    return [
        (raw.data, token)
        for raw, token in read_mbox(path, source="s", checkpoint=checkpoint)
    ]


@pytest.mark.parametrize("kind", ["plain", "gz", "zst"])
def test_resume_after_a_message_then_after_an_append(tmp_path: Path, kind: str) -> None:
    compress = COMPRESSORS[kind]
    path = write(
        tmp_path / "list.mbox", compress(mboxrd([message(n) for n in range(6)]))
    )
    read = tokens(path)
    assert [data for data, _ in tokens(path, read[2][1])] == [
        message(n) for n in range(3, 6)
    ]
    with path.open("ab") as file:
        file.write(compress(mboxrd([message(6), message(7)])))
    again = tokens(path, read[-1][1])
    assert [data for data, _ in again] == [message(6), message(7)]
    assert tokens(path, again[-1][1]) == []


def test_resume_positions_match_a_full_read(tmp_path: Path) -> None:
    path = write(tmp_path / "list.mbox", mboxrd([message(n) for n in range(4)]))
    full = list(read_mbox(path, source="s"))
    resumed = list(read_mbox(path, source="s", checkpoint=full[1][1]))
    assert resumed == full[2:]


def test_truncated_file_restarts_from_zero(tmp_path: Path) -> None:
    path = write(tmp_path / "list.mbox", mboxrd([message(n) for n in range(8)]))
    token = tokens(path)[6][1]
    write(path, mboxrd([message(n) for n in range(3)]))
    assert [data for data, _ in tokens(path, token)] == [message(n) for n in range(3)]


def test_replaced_file_of_the_same_size_restarts(tmp_path: Path) -> None:
    original = mboxrd([message(n) for n in range(4)])
    path = write(tmp_path / "list.mbox", original)
    token = tokens(path)[1][1]
    # Same size, same head, but the bytes before the checkpoint differ.
    changed = original.replace(b"message 1", b"massage 1")
    assert len(changed) == len(original)
    write(path, changed)
    assert len(tokens(path, token)) == 4


def test_token_at_a_non_boundary_or_garbage_restarts(tmp_path: Path) -> None:
    path = write(tmp_path / "list.mbox", mboxrd([message(n) for n in range(3)]))
    token = tokens(path)[0][1]
    assert token is not None
    parts = token.split(":")
    parts[1] = str(int(parts[1]) + 3)
    assert len(tokens(path, ":".join(parts))) == 3
    assert len(tokens(path, "not a token")) == 3
    assert len(tokens(path, '{"v":1}')) == 3


def test_empty_file_has_no_messages(tmp_path: Path) -> None:
    assert tokens(write(tmp_path / "empty.mbox", b"")) == []


def test_message_file_yields_once_then_nothing_until_it_changes(tmp_path: Path) -> None:
    path = write(tmp_path / "one.eml", FROM_LINE + b"\n" + message(1))
    ((raw, token),) = read_message_file(
        path, source="s", position="one.eml", checkpoint=None
    )
    assert raw.data == message(1) and raw.from_line == FROM_LINE
    assert (
        list(read_message_file(path, source="s", position="p", checkpoint=token)) == []
    )
    write(path, message(2))
    again = list(read_message_file(path, source="s", position="p", checkpoint=token))
    assert [item.data for item, _ in again] == [message(2)]


class Trickle(io.RawIOBase):
    """A pipe: short reads, no seek."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        size = 3 if size < 0 else min(size, 3)
        piece, self._data = self._data[:size], self._data[size:]
        return piece


@pytest.mark.parametrize("kind", ["plain", "gz", "xz"])
def test_stream_reading_sniffs_compression(kind: str) -> None:
    messages = [message(1), message(2)]
    stream = Trickle(COMPRESSORS[kind](mboxrd(messages)))
    found = list(read_mbox_stream(stream))
    assert [raw.data for raw, _ in found] == messages
    assert [token for _, token in found] == [None, None]
    assert found[0][0].origin.source == "-"
