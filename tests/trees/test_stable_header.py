"""The X-stable: header as a mark of the backport process (e2g.mail.backport), on
mails laid out as the stable team's tools send them."""

from __future__ import annotations

from email import message_from_bytes
from email.policy import compat32

from e2g.mail.backport import STABLE_HEADERS, ProcessKind, process_kind, process_version

# As an AUTOSEL series mail reaches a list (headers in the order its tools write
# them), after a list rewrote its subject: the [PATCH AUTOSEL 4.19 3/5] tag is gone.
AUTOSEL_REWRITTEN = b"""\
From sasha@example.org Tue Aug 29 13:34:04 2023
From: Sasha Sel <sasha@example.org>
To: linux-kernel@vger.example.org,
\tstable@vger.example.org
Subject: [frob-devel] sctp: handle invalid error codes without calling BUG()
Date: Tue, 29 Aug 2023 09:34:04 -0400
Message-Id: <20230829133406.520756-3-sasha@example.org>
X-Mailer: git-send-email 2.40.1
In-Reply-To: <20230829133406.520756-1-sasha@example.org>
References: <20230829133406.520756-1-sasha@example.org>
List-Id: <frob-devel.lists.example.org>
MIME-Version: 1.0
X-stable: review
X-Patchwork-Hint: Ignore
X-stable-base: Linux 4.19.292
Content-Transfer-Encoding: 8bit

From: Dan Example <dan@example.org>

[ Upstream commit 0123456789abcdef0123456789abcdef01234567 ]

Call WARN_ON_ONCE() instead.

Signed-off-by: Sasha Sel <sasha@example.org>
---
 net/sctp/sm_sideeffect.c | 5 ++++-
 1 file changed, 4 insertions(+), 1 deletion(-)
"""


def _headers(raw: bytes) -> tuple[str, dict[str, str | None]]:
    parsed = message_from_bytes(raw.split(b"\n", 1)[1], policy=compat32)
    return str(parsed["Subject"]), {name: parsed[name] for name in STABLE_HEADERS}


def test_the_header_marks_a_mail_whose_subject_lost_its_tag() -> None:
    subject, headers = _headers(AUTOSEL_REWRITTEN)
    assert process_kind(subject) is None  # the subject alone says nothing
    kind = process_kind(subject, stable=headers["x-stable"])
    assert kind is ProcessKind.STABLE_REVIEW
    assert process_version(subject, base=headers["x-stable-base"]) == "4.19"


def test_the_header_with_the_subject_s_own_step() -> None:
    review = "review"
    assert (
        process_kind("[PATCH AUTOSEL 6.1 12/40] mm: fix", stable=review)
        is ProcessKind.AUTOSEL
    )
    failed = 'FAILED: patch "[PATCH] mm: fix" failed to apply to 6.1-stable tree'
    assert process_kind(failed, stable=review) is ProcessKind.FAILED
    # A reply is a review of the series mail, header or not.
    assert process_kind("Re: [PATCH 6.1 012/100] mm: fix", stable=review) is None
    # No header, an empty one: the subject decides, as before.
    assert process_kind("[PATCH] mm: fix", stable=None) is None
    assert process_kind("[PATCH] mm: fix", stable="  ") is None
    # The subject's series wins over the base the header names.
    assert process_version("[PATCH 6.1 012/100] mm: fix", base="Linux 5.15.1") == "6.1"
    assert process_version("[PATCH] mm: fix", base="no version") is None


def test_ingest_keeps_the_header_and_the_matcher_skips_the_mail(tmp_path) -> None:
    from e2g import config
    from e2g.api.basis import open_store
    from e2g.api.core import ingest
    from e2g.matcher.candidates import Pool

    mbox = tmp_path / "list.mbox"
    mbox.write_bytes(AUTOSEL_REWRITTEN + b"\n")
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    ingest(settings, [str(mbox)], workers=1)
    with open_store(settings) as store:
        (stored,) = store.messages(["20230829133406.520756-3-sasha@example.org"])
        rows = store.subjects_by_key([stored.subject_key])
    assert (stored.stable, stored.stable_base) == ("review", "Linux 4.19.292")
    assert [(row.stable, row.stable_base) for row in rows] == [
        ("review", "Linux 4.19.292")
    ]
    pool = Pool()
    pool.add([stored], "patch-id")  # a patch of the backport process: no candidate
    assert pool.messages == {}
