"""Header decoding: unfolding, RFC 2047, charsets, addresses, Message-IDs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from e2g.mail.headers import (
    decode_bytes,
    decode_header,
    parse_address,
    parse_address_list,
    unfold,
)
from e2g.mail.msgid import from_header, from_references
from e2g.model import MAX_ADDRESS, MAX_MESSAGE_ID, MAX_NAME, Address


def raw_header(data: bytes) -> str:
    """A header value as compat32 hands it over: 8-bit bytes as surrogates."""
    return data.decode("ascii", "surrogateescape")


def test_unfold() -> None:
    assert unfold("a\r\n b\n\tc") == "a b\tc"
    assert unfold("plain") == "plain"


def test_encoded_words() -> None:
    assert (
        decode_header("=?utf-8?b?UmFmYcWCIE1pxYJlY2tp?= <z@g.com>")
        == "Rafał Miłecki <z@g.com>"
    )
    assert decode_header("=?UTF-8?q?Rafa=C5=82=20Mi=C5=82ecki?=") == "Rafał Miłecki"
    assert decode_header("=?iso-8859-1?q?J=F6rg?= Doe") == "Jörg Doe"
    # whitespace between adjacent encoded words disappears, not elsewhere
    assert decode_header("=?utf-8?q?a?= =?utf-8?q?b?= c") == "ab c"
    # one UTF-8 character split over two words
    assert decode_header("=?utf-8?b?w6k=?= =?utf-8?b?w6k=?=") == "éé"
    assert decode_header("=?UTF-8?B?w6k?=") == "é"  # missing padding
    # folded across lines
    assert decode_header("=?utf-8?q?Hello?=\n =?utf-8?q?_World?=") == "Hello World"
    # RFC 2231 language suffix on the charset
    assert decode_header("=?utf-8*en?q?hi?=") == "hi"


def test_malformed_encoded_words() -> None:
    # invalid UTF-8 inside a word declared UTF-8 (patchwork 0015): cp1252 fallback
    assert decode_header("=?UTF-8?q?Rafa=FF=FF?=") == "Rafaÿÿ"
    # unknown and NUL-carrying charset names
    assert decode_header("=?x-unknown?q?abc?=") == "abc"
    assert decode_header("=?u\x00\x00d?q?abc?= x") == "abc x"
    # not an encoded word at all: left as text
    assert decode_header("=?utf-8?x?abc?=") == "=?utf-8?x?abc?="
    assert decode_header("=?utf-8?q?unterminated") == "=?utf-8?q?unterminated"


def test_raw_eight_bit_headers() -> None:
    assert decode_header(raw_header("Rafał Miłecki".encode())) == "Rafał Miłecki"
    assert decode_header(raw_header("Jörg".encode("cp1252"))) == "Jörg"
    assert decode_header("a\x00b\x07c") == "abc"


def test_decode_bytes_order() -> None:
    text = "Grüße"
    assert decode_bytes(text.encode(), "iso-8859-1") == text  # mislabelled UTF-8
    assert decode_bytes(text.encode("iso-8859-1"), "iso-8859-1") == text
    assert decode_bytes(text.encode("cp1252"), "none") == text
    assert decode_bytes("Привет".encode("koi8-r"), "koi8-r") == "Привет"
    japanese = "日本語".encode("iso2022_jp")
    assert decode_bytes(japanese, "iso-2022-jp") == "日本語"
    assert decode_bytes(b"abc", "unicode_escape") == "abc"
    assert decode_bytes(b"\\u0041", "unicode_escape") == "\\u0041"  # refused codec
    assert isinstance(decode_bytes(bytes(range(256)), "utf-8"), str)


def test_parse_address() -> None:
    assert parse_address('"Doe, John" <J.Doe@Example.COM>') == Address(
        "Doe, John", "J.Doe@example.com"
    )
    assert parse_address("jd@EX.com (John Doe)") == Address("John Doe", "jd@ex.com")
    assert parse_address("plain@Host.Org") == Address("", "plain@host.org")
    assert parse_address("<only@host>") == Address("", "only@host")
    assert parse_address("Sen Fane <steom>") == Address("Sen Fane", "steom")
    assert parse_address("") == Address("", "")
    assert parse_address("'Jane' <jane@x.org>") == Address("Jane", "jane@x.org")


def test_pipermail_at_restored() -> None:
    assert parse_address("john at Example.com (John Doe)") == Address(
        "John Doe", "john@example.com"
    )
    assert parse_address("John Doe <john at example.com>") == Address(
        "John Doe", "john@example.com"
    )
    assert parse_address_list("john at example.com (J), b@c.d", limit=8) == (
        "john@example.com",
        "b@c.d",
    )


def test_address_bounds() -> None:
    huge = parse_address('"' + "N" * 50_000 + '" <' + "a" * 50_000 + "@x.org>")
    assert len(huge.name) <= MAX_NAME and len(huge.email) <= MAX_ADDRESS


def test_parse_address_list() -> None:
    value = 'A <a@B.com>, "x, y" <c@d.org>, e@F.net (E, f), bad, A <a@b.com>,\n g@h.i'
    assert parse_address_list(value, limit=10) == (
        "a@b.com",
        "c@d.org",
        "e@f.net",
        "g@h.i",
    )
    assert (
        len(parse_address_list(",".join(f"u{n}@x.org" for n in range(999)), limit=5))
        == 5
    )
    assert parse_address_list("linux-kernel@vger.kernel.org (open list)", limit=4) == (
        "linux-kernel@vger.kernel.org",
    )


def test_message_ids() -> None:
    assert (
        from_header("<1287719462.2198.37.camel@pasglop>")
        == "1287719462.2198.37.camel@pasglop"
    )
    assert from_header(" <a@b> (added by postmaster)") == "a@b"
    assert from_header("(comment) <a\n @b>") == "a@b"
    assert from_header("bare@id") == "bare@id"
    assert from_header("<>") is None
    assert from_header("") is None and from_header(None) is None
    assert len(from_header("<" + "x" * 5000 + "@y>") or "") == MAX_MESSAGE_ID


def test_from_references() -> None:
    refs = "<a@x> <b@x>\n\t<c@x> <a@x>"
    assert from_references(refs, limit=10) == ("a@x", "b@x", "c@x")
    assert from_references("a@x b@x", limit=10) == ("a@x", "b@x")  # no brackets
    assert from_references("<a@x> (Joe's message of Mon)", limit=10) == ("a@x",)
    many = " ".join(f"<{n}@x>" for n in range(500))
    kept = from_references(many, limit=128)
    assert len(kept) == 128 and kept[0] == "0@x" and kept[-1] == "499@x"
    assert from_references(None, limit=3) == ()


def _no_surrogates(text: str) -> bool:
    return not any(0xD800 <= ord(character) <= 0xDFFF for character in text)


@given(st.binary(max_size=200))
def test_decode_header_never_raises(data: bytes) -> None:
    text = decode_header(raw_header(data))
    assert _no_surrogates(text)
    parse_address(text)


@given(st.text(max_size=200))
def test_text_headers_never_raise(text: str) -> None:
    decode_header(text)
    parse_address(text)
    parse_address_list(text, limit=16)
    from_references(text, limit=16)
    from_header(text)


_WORDS = st.builds(
    lambda charset, encoding, payload: f"=?{charset}?{encoding}?{payload}?=",
    st.sampled_from(["utf-8", "UTF-8", "iso-8859-1", "bogus", "", "u\x00"]),
    st.sampled_from(["q", "B", "x"]),
    st.text(alphabet="=ABCDEF0123456789_abcxyz+/ ", max_size=20),
)


@given(st.lists(_WORDS | st.text(max_size=5), max_size=6))
def test_encoded_words_never_raise(pieces: list[str]) -> None:
    assert _no_surrogates(decode_header(" ".join(pieces)))
