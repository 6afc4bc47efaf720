"""parse_message on patchwork's real mails (EXPECTATIONS.tsv rows) and built cases."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from e2g.mail.message import parse_message
from e2g.model import Address, DateSource, Kind, Trailer
from e2g.model.mail import Malformed, Message, Origin, RawMessage

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
MAIL = CORPUS / "patchwork" / "mail"
NOW = datetime(2026, 1, 15, tzinfo=UTC)
ORIGIN = Origin("test", "0")


def raw_mail(data: bytes) -> RawMessage:
    """An mbox file holding one mail: its 'From ' line becomes the separator."""
    if data.startswith(b"From "):
        line, _, rest = data.partition(b"\n")
        return RawMessage(rest, ORIGIN, from_line=line)
    return RawMessage(data, ORIGIN)


def parse_bytes(data: bytes) -> Message:
    parsed = parse_message(raw_mail(data), now=NOW)
    assert isinstance(parsed, Message), parsed
    return parsed


def corpus_mail(name: str) -> Message:
    path = MAIL / name
    if not path.is_file():
        pytest.skip("shared corpus not present")
    return parse_bytes(path.read_bytes())


PULLS = {
    "0001-git-pull-request.mbox": "git://git.kernel.org/pub/scm/linux/kernel/git/benh/powerpc.git next",
    "0002-git-pull-request-wrapped.mbox": "git://git.kernel.org/pub/scm/linux/kernel/git/benh/powerpc.git next",
    "0003-git-pull-request-with-diff.mbox": "git://git.kernel.org/pub/scm/linux/kernel/git/tip/linux-2.6-tip.git x86-fixes-for-linus",
    "0004-git-pull-request-git+ssh.mbox": "git+ssh://git.kernel.org/pub/scm/linux/kernel/git/benh/powerpc.git next",
    "0005-git-pull-request-ssh.mbox": "ssh://git.kernel.org/pub/scm/linux/kernel/git/benh/powerpc.git next",
    "0006-git-pull-request-http.mbox": "http://git.kernel.org/pub/scm/linux/kernel/git/benh/powerpc.git next",
    "0017-git-pull-request-git-2-14-3.mbox": "git://git.kernel.org/pub/scm/linux/kernel/git/davem/net",
    "0023-git-pull-request-newline-in-url.mbox": "https://git.kernel.org/pub/scm/linux/kernel/git/matthias.bgg/linux.git/ tags/v5.4-next-soc",
    "0024-git-pull-request-trailing-space.mbox": "git://git.kernel.org/pub/scm/linux/kernel/git/nsekhar/linux-davinci.git tags/davinci-for-v5.6/soc",
}


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(PULLS))
def test_pull_requests(name: str) -> None:
    message = corpus_mail(name)
    assert message.kind is Kind.PULL
    assert message.pull is not None
    pull_url = message.pull.url + (f" {message.pull.ref}" if message.pull.ref else "")
    assert pull_url == PULLS[name]
    assert message.body  # "message not None"
    if name.startswith("0003"):
        assert message.patch is not None
        assert message.patch.diff.startswith("diff --git a/arch/x86/include/asm/smp.h")
    else:
        assert message.patch is None


@pytest.mark.corpus
@pytest.mark.parametrize(
    "name",
    [
        "0010-invalid-charset.mbox",
        "0012-invalid-header-char.mbox",
        "0013-with-utf8-body.mbox",
        "0014-with-unencoded-utf8-headers.mbox",
        "0015-with-invalid-utf8-headers.mbox",
        "0016-no-subject.mbox",
    ],
)
def test_encodings_give_one_patch(name: str) -> None:
    message = corpus_mail(name)
    assert message.kind is Kind.PATCH
    assert message.patch is not None and message.patch.files
    assert message.body


@pytest.mark.corpus
def test_utf8_headers_decoded() -> None:
    for name in ("0013-with-utf8-body.mbox", "0014-with-unencoded-utf8-headers.mbox"):
        message = corpus_mail(name)
        assert message.author == Address("Rafał Miłecki", "zajec5@gmail.com")
        assert "Signed-off-by" in {trailer.key for trailer in message.trailers}
    assert corpus_mail("0014-with-unencoded-utf8-headers.mbox").subject.title.endswith(
        "to include Rafał Miłecki"
    )
    # invalid UTF-8 inside an encoded word: decoded with a fallback, no surrogates
    cc = corpus_mail("0015-with-invalid-utf8-headers.mbox").to
    assert "zajec5@gmail.com" in cc
    assert all(address.isprintable() for address in cc)


@pytest.mark.corpus
def test_invalid_charset_body() -> None:
    message = corpus_mail("0010-invalid-charset.mbox")  # charset="none", QP
    assert message.body.startswith("This patch, relative to a tree with")
    assert message.list_id == "libc-alpha.sourceware.org"
    assert message.patch is not None
    assert message.patch.diff.startswith("diff --git a/sysdeps/")


@pytest.mark.corpus
def test_no_subject() -> None:
    message = corpus_mail("0016-no-subject.mbox")
    assert message.subject.title == "" and message.subject.key == ""
    assert message.message_id == "ABC@DEF" and not message.synthetic_id


@pytest.mark.corpus
def test_multipart_patch_skips_html() -> None:
    message = corpus_mail("0019-multipart-patch.mbox")
    assert message.kind is Kind.PATCH
    assert message.patch is not None
    assert "<div" not in message.body and "<div" not in message.patch.diff
    assert message.body.startswith("Currently an html-protection present")
    assert message.patch.diff.startswith("diff --git a/patchwork/parser.py")


@pytest.mark.corpus
def test_multipart_comment_skips_html() -> None:
    message = corpus_mail("0020-multipart-comment.mbox")
    assert message.kind is Kind.REPLY
    assert message.body and "<div" not in message.body
    assert message.patch is None


@pytest.mark.corpus
def test_headers_of_a_real_pull() -> None:
    message = corpus_mail("0001-git-pull-request.mbox")
    assert message.message_id == "1287719462.2198.37.camel@pasglop"
    assert message.author == Address(
        "Benjamin Herrenschmidt", "benh@kernel.crashing.org"
    )
    assert message.date == datetime(2010, 10, 22, 3, 51, 2, tzinfo=UTC)
    assert message.date_source is DateSource.HEADER
    assert message.date_raw == "Fri, 22 Oct 2010 14:51:02 +1100"
    assert message.received_at == datetime(2010, 10, 22, 3, 51, 54, tzinfo=UTC)
    assert message.list_id == "cbe-oss-dev.ozlabs.org"
    assert message.to[:2] == (
        "torvalds@linux-foundation.org",
        "linuxppc-dev@ozlabs.org",
    )
    assert message.subject.title == "Please pull powerpc.git next branch"


@pytest.mark.corpus
def test_missing_message_id_is_synthetic_and_stable() -> None:
    first = corpus_mail("0008-git-rename.mbox")
    again = corpus_mail("0008-git-rename.mbox")
    assert first.synthetic_id
    assert first.message_id == again.message_id
    assert first.message_id.startswith("e2g-") and first.message_id.endswith(
        "@synthetic"
    )
    assert len(first.message_id) == len("e2g-") + 32 + len("@synthetic")
    assert corpus_mail("0009-git-rename-with-diff.mbox").message_id != first.message_id


def mail(headers: str, body: str = "Hello.\n") -> bytes:
    return (headers.strip("\n") + "\n\n" + body).encode()


BASE = """\
From: Jane Doe <jane@Example.ORG>
To: list@vger.kernel.org
Subject: {subject}
Date: Mon, 4 Mar 2019 05:06:07 +0000
Message-ID: <{msgid}@example.org>
"""


def simple(subject: str, body: str, extra: str = "", msgid: str = "m1") -> Message:
    return parse_bytes(mail(BASE.format(subject=subject, msgid=msgid) + extra, body))


DIFF = """\
diff --git a/f.c b/f.c
index 1111111..2222222 100644
--- a/f.c
+++ b/f.c
@@ -1,2 +1,2 @@
 int a;
-int b;
+int c;
"""


def test_kinds() -> None:
    assert (
        simple("[PATCH 1/2] f: change b", "Change.\n\n---\n" + DIFF).kind is Kind.PATCH
    )
    assert simple("[PATCH 0/2] f: series", "Cover text.\n").kind is Kind.COVER
    assert simple("[PATCH v2] f: series", "Cover-ish.\n").kind is Kind.COVER
    assert simple("[PATCH 0 of 2] hg series", "Cover.\n").kind is Kind.COVER
    # a v2 cover sent in reply to v1 is still a cover
    in_reply = "In-Reply-To: <v1@example.org>\n"
    assert simple("[PATCH v2 0/2] f: series", "Cover.\n", in_reply).kind is Kind.COVER
    assert simple("Re: [PATCH 0/2] f: series", "Nice.\n", in_reply).kind is Kind.REPLY
    assert (
        simple("Re: [PATCH 1/2] f", "> " + DIFF.replace("\n", "\n> ")).kind
        is Kind.REPLY
    )
    assert simple("question", "Why?\n", in_reply).kind is Kind.REPLY
    assert simple("question", "Why?\n").kind is Kind.OTHER


def test_quoted_diff_is_not_a_patch() -> None:
    quoted = "On Mon, Jane wrote:\n" + "".join(
        "> " + line + "\n" for line in DIFF.splitlines()
    )
    message = simple(
        "Re: [PATCH] f: change b", quoted + "\nReviewed-by: Joe <joe@x.org>\n"
    )
    assert message.patch is None and message.kind is Kind.REPLY
    assert message.trailers == (Trailer("Reviewed-by", "Joe <joe@x.org>"),)


def test_trailers_unquoted_and_canonical() -> None:
    body = (
        "Looks good.\n\n"
        "> Signed-off-by: Quoted Person <q@x.org>\n"
        "reviewed-by: Joe <joe@x.org>\n"
        "Acked-By: Ann <ann@x.org>\n"
        "Tested-by: T <t@x.org>\n"
        "Link: https://lore.kernel.org/r/abc@x\n"
        'Fixes: 0123456789ab ("f: break")\n'
        "Cc: not-a-collected@trailer.org\n"
        "NACKED-BY: Nay <nay@x.org>\n"
        "  Co-developed-by: Co <co@x.org>\n"
        "Note: prose, not a trailer\n"
    )
    assert simple("Re: x", body).trailers == (
        Trailer("Reviewed-by", "Joe <joe@x.org>"),
        Trailer("Acked-by", "Ann <ann@x.org>"),
        Trailer("Tested-by", "T <t@x.org>"),
        Trailer("Link", "https://lore.kernel.org/r/abc@x"),
        Trailer("Fixes", '0123456789ab ("f: break")'),
        Trailer("Nacked-by", "Nay <nay@x.org>"),
        Trailer("Co-developed-by", "Co <co@x.org>"),
    )


def test_in_body_from_is_patch_author() -> None:
    body = "From: Real Author <Author@Corp.COM>\n\nChange b.\n\n---\n" + DIFF
    message = simple("[PATCH] f: change b", body)
    assert message.author == Address("Jane Doe", "jane@example.org")
    assert message.patch_author == Address("Real Author", "Author@corp.com")


@pytest.mark.parametrize(
    "extra",
    [
        "",  # "via" in the name
        "List-Post: <mailto:list@vger.kernel.org>\n",
    ],
)
def test_dmarc_rewrite_uses_reply_to(extra: str) -> None:
    headers = (
        "From: Jane Doe via Linux <list@vger.kernel.org>\n"
        "Reply-To: Jane Doe <jane@example.org>\n"
        "Subject: [PATCH] x\nDate: Mon, 4 Mar 2019 05:06:07 +0000\n"
        "Message-ID: <d@x>\n" + extra
    )
    message = parse_bytes(mail(headers))
    assert message.author == Address("Jane Doe", "jane@example.org")


def test_dmarc_rewrite_sources_in_order() -> None:
    common = "Subject: x\nDate: Mon, 4 Mar 2019 05:06:07 +0000\nMessage-ID: <d@x>\n"
    list_from = "From: 'Jane' via io-uring <io-uring@vger.kernel.org>\n"
    original = "X-Original-From: Jane Doe <jane@example.org>\n"
    list_id = "List-Id: <io-uring.vger.kernel.org>\n"
    assert parse_bytes(mail(list_from + original + common)).author == Address(
        "Jane Doe", "jane@example.org"
    )
    # From equal to the list address (from List-Id), author from the in-body From:
    rewritten = "From: io-uring@vger.kernel.org\n" + list_id + common
    in_body = "From: Jane Doe <jane@example.org>\n\nText.\n"
    assert parse_bytes(mail(rewritten, in_body)).author == Address(
        "Jane Doe", "jane@example.org"
    )
    # nothing better: the name without " via list"
    assert parse_bytes(mail(list_from + common)).author == Address(
        "Jane", "io-uring@vger.kernel.org"
    )


def test_pipermail_obfuscated_from() -> None:
    headers = "From: jane at example.org (Jane Doe)\nSubject: x\nDate: Mon, 4 Mar 2019 05:06:07 +0000\n"
    assert parse_bytes(mail(headers)).author == Address("Jane Doe", "jane@example.org")


def test_ids_and_references() -> None:
    extra = (
        "In-Reply-To: <parent@x> (Jane's message of Mon)\n"
        "References: <root@x>\n <mid@x>\n\t<parent@x> <m1@example.org>\n"
    )
    message = simple("Re: x", "Reply.\n", extra)
    assert message.message_id == "m1@example.org"
    assert message.in_reply_to == "parent@x"
    assert message.references == ("root@x", "mid@x", "parent@x")
    assert message.parent_id == "parent@x"
    refs = "References: " + " ".join(f"<{n}@x>" for n in range(1000)) + "\n"
    bounded = simple("Re: x", "Reply.\n", refs)
    assert len(bounded.references) == 128 and bounded.references[-1] == "999@x"


def test_dates_fall_back_to_received_and_from_line() -> None:
    epoch = BASE.format(subject="x", msgid="e").replace(
        "Mon, 4 Mar 2019 05:06:07 +0000", "Thu, 1 Jan 1970 00:00:00 +0000"
    )
    received = "Received: from a by b; Mon, 4 Mar 2019 06:00:00 +0000\n"
    message = parse_bytes(mail(received + epoch))
    assert (message.date, message.date_source) == (
        datetime(2019, 3, 4, 6, tzinfo=UTC),
        DateSource.RECEIVED,
    )
    assert message.date_raw == "Thu, 1 Jan 1970 00:00:00 +0000"
    future = epoch.replace("Thu, 1 Jan 1970", "Sun, 1 Jan 2040")
    separated = b"From jane@example.org Mon Mar  4 05:30:00 2019\n" + mail(future)
    message = parse_bytes(separated)
    assert (message.date, message.date_source) == (
        datetime(2019, 3, 4, 5, 30, tzinfo=UTC),
        DateSource.FROM_LINE,
    )
    message = parse_bytes(mail(future))
    assert (message.date, message.date_source) == (None, DateSource.NONE)


def multipart(*parts: tuple[str, bytes], kind: str = "mixed") -> bytes:
    boundary = "b0undary"
    chunks = [
        BASE.format(subject="[PATCH] f: change b", msgid="mp").encode(),
        f'MIME-Version: 1.0\nContent-Type: multipart/{kind}; boundary="{boundary}"\n\n'.encode(),
    ]
    for headers, payload in parts:
        chunks.append(f"--{boundary}\n{headers}\n\n".encode() + payload + b"\n")
    chunks.append(f"--{boundary}--\n".encode())
    return b"".join(chunks)


def test_base64_patch_attachment() -> None:
    data = multipart(
        ("Content-Type: text/plain; charset=utf-8", "Grüße, see attached.\n".encode()),
        (
            "Content-Type: application/octet-stream\n"
            'Content-Disposition: attachment; filename="0001-f.patch"\n'
            "Content-Transfer-Encoding: base64",
            base64.encodebytes(DIFF.encode()),
        ),
    )
    message = parse_bytes(data)
    assert message.kind is Kind.PATCH
    assert message.body.startswith("Grüße, see attached.")
    assert message.patch is not None and message.patch.paths == ("f.c",)


def test_quoted_printable_x_diff_part_with_latin1() -> None:
    data = multipart(
        (
            "Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable",
            b"J=F6rg wrote this.\n",
        ),
        (
            "Content-Type: text/x-diff\nContent-Transfer-Encoding: quoted-printable",
            DIFF.replace("=", "=3D").encode(),
        ),
    )
    message = parse_bytes(data)
    assert message.body.startswith("Jörg wrote this.")
    assert message.patch is not None and message.patch.added == 1


def test_html_only_mail_is_stripped() -> None:
    data = multipart(
        (
            "Content-Type: text/html; charset=utf-8",
            b"<div><p>Hello&amp;bye</p><br>second</div>",
        ),
        kind="alternative",
    )
    message = parse_bytes(data)
    assert (
        "<" not in message.body
        and "Hello&bye" in message.body
        and "second" in message.body
    )


def test_deep_mime_nesting_is_bounded() -> None:
    depth = 300
    head = BASE.format(subject="deep", msgid="deep")
    parts = [head + 'Content-Type: multipart/mixed; boundary="b0"\n\n']
    for level in range(1, depth):
        parts.append(
            f'--b{level - 1}\nContent-Type: multipart/mixed; boundary="b{level}"\n\n'
        )
    parts.append(f"--b{depth - 1}\nContent-Type: text/plain\n\ninnermost\n")
    parsed = parse_message(RawMessage("".join(parts).encode(), ORIGIN), now=NOW)
    assert isinstance(parsed, (Message, Malformed))


def test_crlf_mail() -> None:
    data = mail(
        BASE.format(subject="[PATCH] f: change b", msgid="crlf"), "Text.\n---\n" + DIFF
    )
    message = parse_bytes(data.replace(b"\n", b"\r\n"))
    assert message.message_id == "crlf@example.org"
    assert message.subject.title == "f: change b"
    assert message.kind is Kind.PATCH


def test_folded_and_encoded_subject() -> None:
    headers = BASE.format(
        subject="=?UTF-8?q?=5BPATCH_v2_3/5=5D_f:_caf=C3=A9?=\n =?UTF-8?q?_fix?=",
        msgid="enc",
    )
    message = parse_bytes(mail(headers))
    assert message.subject.title == "f: café fix"
    assert (message.subject.version, message.subject.part, message.subject.total) == (
        2,
        3,
        5,
    )


def test_odd_header_block_takes_the_stdlib_path() -> None:
    data = mail(
        BASE.format(subject="odd", msgid="odd") + "this line is no header\n", "Body.\n"
    )
    message = parse_bytes(data)
    assert message.message_id == "odd@example.org"
    assert "this line is no header" in message.body


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"\n\n   \n", "empty"),
        (b"just some text\nwithout any header\n", "not a mail"),
        (b"X-Foo: bar\nX-Bar: baz\n\nbody\n", "not a mail"),
        (b"From someone Mon Mar  4 05:30:00 2019\n", "empty"),
    ],
)
def test_malformed(data: bytes, reason: str) -> None:
    parsed = parse_message(RawMessage(data, ORIGIN), now=NOW)
    assert isinstance(parsed, Malformed) and parsed.reason == reason
    assert parsed.origin == ORIGIN


def test_weird_but_mail_like_parses() -> None:
    assert isinstance(
        parse_message(RawMessage(b"Subject: only\n", ORIGIN), now=NOW), Message
    )
    nul = b"From: a\x00b <x@y>\nSubject: s\x00t\nMessage-ID: <a\x00@b>\n\nbo\x00dy\n"
    message = parse_bytes(nul)
    assert "\x00" not in message.subject.raw + message.author.name + message.message_id
    assert "\x00" not in message.body


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    parsed = parse_message(RawMessage(data, ORIGIN), now=NOW)
    assert isinstance(parsed, (Message, Malformed))


_HEADER_VALUES = st.text(max_size=60) | st.sampled_from(
    ["=?utf-8?b?w6k=?=", "<a@b>", "Re: [PATCH v2 1/2] x", "Mon, 4 Mar 2019 05:06:07 +0000",
     "Thu, 1 Jan 1970 00:00:00 +0000", "multipart/mixed; boundary=x", "base64", "\udcff"]
)  # fmt: skip
_NAMES = st.sampled_from(
    ["From", "To", "Cc", "Subject", "Date", "Message-ID", "In-Reply-To", "References",
     "Received", "List-Id", "Reply-To", "X-Original-From", "Content-Type",
     "Content-Transfer-Encoding", "Content-Disposition"]
)  # fmt: skip


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(_NAMES, _HEADER_VALUES), min_size=1, max_size=10),
    st.text(max_size=300) | st.just(DIFF) | st.just("--x\n\n" + DIFF + "\n--x--\n"),
)
def test_generated_mails_never_raise(pairs: list[tuple[str, str]], body: str) -> None:
    head = "".join(f"{name}: {value.replace(chr(10), ' ')}\n" for name, value in pairs)
    data = (head + "\n" + body).encode("utf-8", "surrogateescape")
    parsed = parse_message(RawMessage(data, ORIGIN), now=NOW)
    assert isinstance(parsed, (Message, Malformed))
    if isinstance(parsed, Message):
        parsed.message_id.encode("utf-8")  # no lone surrogates reach the store
        parsed.body.encode("utf-8")
        parsed.subject.title.encode("utf-8")
        parsed.author.name.encode("utf-8")
