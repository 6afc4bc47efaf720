"""Subject parsing: prefixes, versions, parts, tags, keys (and patchwork's cases)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from e2g.mail.subject import parse_subject, search_kind, subject_key
from e2g.model import Kind


@pytest.mark.parametrize(
    ("raw", "title"),
    [
        # patchwork's clean_subject cases
        ("meep", "meep"),
        ("[PATCH] meep", "meep"),
        ("[PATCH] meep \n meep", "meep meep"),
        ("[PATCH RFC] meep", "meep"),
        ("[PATCH,RFC] meep", "meep"),
        ("[PATCH,1/2] meep", "meep"),
        ("[PATCH RFC 1/2] meep", "meep"),
        ("[PATCH] [RFC] meep", "meep"),
        ("[PATCH] [RFC,1/2] meep", "meep"),
        ("[PATCH] [RFC] [1/2] meep", "meep"),
        ("[PATCH] rewrite [a-z] regexes", "rewrite [a-z] regexes"),
        ("[PATCH] [RFC] rewrite [a-z] regexes", "rewrite [a-z] regexes"),
        ("[foo] [bar] meep", "meep"),
        # reply and forward markers, repeated and in several languages
        ("Re: [PATCH] meep", "meep"),
        ("RE: meep", "meep"),
        ("re : meep", "meep"),
        ("Re[2]: meep", "meep"),
        ("Re(3): meep", "meep"),
        ("Fwd: Re: Fw: meep", "meep"),
        ("AW: SV: Antw: WG: meep", "meep"),
        ("[dpdk-dev] Re: [PATCH v2] meep", "meep"),
        ("[Patch 2/2]: powerpc/hotplug/mm: fix", "powerpc/hotplug/mm: fix"),
        ("[PATCH] - meep", "meep"),
        ("[PATCH] --verbose option", "--verbose option"),
        ("meep: Re: meep", "meep: Re: meep"),
        ("", ""),
        ("[PATCH]", ""),
        ("[unbalanced meep", "[unbalanced meep"),
    ],
)
def test_title(raw: str, title: str) -> None:
    assert parse_subject(raw).title == title


@pytest.mark.parametrize(
    ("raw", "version", "part", "total"),
    [
        ("[PATCH] x", 1, None, None),
        ("[PATCH v2] x", 2, None, None),
        ("[PATCH V6] x", 6, None, None),
        ("[PATCH v10 3/9] x", 10, 3, 9),
        ("[PATCHv2] x", 2, None, None),
        ("[PATCH-v3] x", 3, None, None),
        ("[RFCv4 PATCH] x", 4, None, None),
        ("[PATCH1/8] x", 1, 1, 8),
        ("[PATCH 02/36] x", 1, 2, 36),
        ("[PATCH 0/7] x", 1, 0, 7),
        ("[PATCH 1 of 2] contrib: fix", 1, 1, 2),
        ("[PATCH 0 of 2] Sample Mercurial patches", 1, 0, 2),
        ("[net,v2,1/2] net: x", 2, 1, 2),
        ("Hello, world (v2)", 2, None, None),
        ("Hello, world (V6)", 6, None, None),
        ("[PATCH net-next v3 0/4] net: dsa: work (v3)", 3, 0, 4),
        ("[PATCH] version 2 of this", 1, None, None),
        ("[PATCH v2.1] x", 2, None, None),
    ],
)
def test_version_and_part(
    raw: str, version: int, part: int | None, total: int | None
) -> None:
    info = parse_subject(raw)
    assert (info.version, info.part, info.total) == (version, part, total)


def test_flags_and_tags() -> None:
    info = parse_subject("Re: [RFC PATCH net-next v2 RESEND 3/5] bpf: x")
    assert info.is_reply and info.rfc and info.resend and info.is_patch_tag
    assert info.tags == ("net-next",)
    assert (info.version, info.part, info.total) == (2, 3, 5)
    assert parse_subject("[PATCH 4.19 012/123] mm: x").tags == ("4.19",)
    assert parse_subject("[PATCH liburing] test: y").tags == ("liburing",)
    assert parse_subject("[PATCH bpf-next] y").tags == ("bpf-next",)
    assert parse_subject("[dpdk-dev] [PATCH] kni").tags == ("dpdk-dev",)
    assert parse_subject("[PATCH -next] bpf: y").tags == ("-next",)


def test_patch_tag() -> None:
    assert parse_subject("[PATCH] x").is_patch_tag
    assert parse_subject("[RFC] x").is_patch_tag
    assert parse_subject("[Patch]: x").is_patch_tag
    assert not parse_subject("[GIT PULL] x").is_patch_tag
    assert not parse_subject("[net,v2,1/2] x").is_patch_tag
    assert not parse_subject("Re: question").is_patch_tag
    assert not parse_subject("[PATCH] x").is_reply


def test_key_collapses_and_folds() -> None:
    info = parse_subject("[PATCH v3 2/7] MM:  Fix\tthe   Thing")
    assert info.title == "MM: Fix the Thing"
    assert info.key == "mm: fix the thing"
    assert subject_key("  MM: Fix\n the  THING ") == info.key
    assert subject_key("Straße") == "strasse"


def test_huge_subject_is_bounded() -> None:
    info = parse_subject("[PATCH] " + "x" * 100_000)
    assert len(info.raw) <= 2048 and len(info.title) <= 2048


_SUBJECT_PIECES = st.lists(
    st.sampled_from(
        ["Re:", "Fwd:", "[PATCH", "v2", "1/3]", "[RFC]", "(v3)", "[", "]", ":", " ",
         "AW:", "net-next", "x", "Fix", "of", "0", "\t", "\n"]
    ) | st.text(max_size=8),
    max_size=12,
)  # fmt: skip


@given(st.text(max_size=300))
def test_never_raises(raw: str) -> None:
    info = parse_subject(raw)
    assert info.key == subject_key(info.title)


@given(_SUBJECT_PIECES)
def test_idempotent_on_title(pieces: list[str]) -> None:
    info = parse_subject(" ".join(pieces))
    again = parse_subject(info.title)
    if "[" not in info.title:
        assert again.key == info.key
        assert again.title == info.title


@pytest.mark.parametrize(
    ("kind", "subject", "searched"),
    [
        (Kind.PATCH, "[PATCH 2/7] mm: fix frob", Kind.PATCH),
        (Kind.PATCH, "Re: [PATCH 2/7] mm: fix frob", Kind.REPLY),
        (Kind.PATCH, "AW: [PATCH] mm: fix frob", Kind.REPLY),
        (Kind.REPLY, "Re: [PATCH] mm: fix frob", Kind.REPLY),
        (Kind.COVER, "[PATCH 0/7] mm: frob", Kind.COVER),
        (Kind.PULL, "Re: [GIT PULL] frob fixes", Kind.PULL),
    ],
)
def test_a_patch_sent_as_a_reply_is_searched_as_a_reply(
    kind: Kind, subject: str, searched: Kind
) -> None:
    assert search_kind(kind, subject) is searched
