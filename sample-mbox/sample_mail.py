"""The sample archives' story: every mail, and the ground truth it establishes.

Each function posts some commits (through a `Sources`, which runs git) or writes the
replies and discussion around them, and records in the Ledger which message carried
which commit. sample_mailer.py knows how mail is written; make_sample.py writes the
files. Everything is fictional.
"""

from __future__ import annotations

from datetime import datetime

from sample_mailer import (
    DEVEL,
    NET,
    THUNDERBIRD,
    FormattedPatch,
    Ledger,
    Mail,
    OldMail,
    Sources,
    as_attachment,
    as_latin1,
    as_quoted_printable,
    dmarc_rewrite,
    excerpt,
    fill_cover,
    patch_mail,
    quote,
    reply,
    rfc2047_base64_from,
    series,
    text_mail,
)
from sample_tree import (
    ALICE,
    BOB,
    CHEN,
    COMMIT_BY_KEY,
    DMITRI,
    GRACE,
    HAL,
    HASH64_DISCUSSION_ID,
    JOERG,
    JOSE,
    KEIKO,
    KURT,
    LINH,
    MM_SERIES_IDS,
    PETER,
    PRIYA,
    RAVI,
    TOMASZ,
    URSULA,
    Person,
    at,
)


def wrote(moment: datetime, person: Person) -> str:
    """Mutt's attribution line."""
    return f"On {moment:%a, %b %d, %Y at %I:%M:%S%p %z}, {person.name} wrote:"


def ty_list(sources: Sources, entries: tuple[tuple[str, str], ...]) -> str:
    """The per-patch list of a b4 "thanks" reply: [n/m] subject + commit sha."""
    return "".join(
        f"{label} {sources_subject(key)}\n      commit: {sources.sha(key)[:12]}\n"
        for label, key in entries
    )


def sources_subject(key: str) -> str:
    return COMMIT_BY_KEY[key].subject


SIGNATURE_GRACE = "\n-- \nGrace Hopwood <grace@example.org>\n"


# --- frob-devel: documentation and the mm series -------------------------------------
def mm_series(sources: Sources, ledger: Ledger) -> list[Mail]:
    """A cover letter and three patches threaded to it, a review and a 1970 Tested-by."""
    (doc,) = sources.patches(("doc-rst",))
    doc_mail = patch_mail(
        doc,
        message_id="20220829120530.9911-1-grace@example.org",
        to=(DEVEL,),
        received=at("2022-08-29 14:05:30 +0200"),
        lists=("frob-devel",),
    )
    ledger.postings.append(("doc-rst", doc_mail.message_id or "", "exact"))
    ledger.case(
        "rename", doc_mail, "frob-devel.mbox", "a patch that renames a file (-M)"
    )

    keys = ("mm-leak", "mm-kcalloc", "mm-array")
    cover_patch, *patches = sources.patches(
        keys, cover=(DMITRI, at("2022-09-05 10:15:00 +0200"))
    )
    cover_patch = fill_cover(
        cover_patch, "mm: frob_alloc() fixes and cleanups", MM_BLURB
    )
    mails = [doc_mail]
    cover = patch_mail(
        cover_patch,
        message_id=MM_SERIES_IDS[0],
        to=(DEVEL,),
        cc=(GRACE,),
        received=at("2022-09-05 10:15:03 +0200"),
        lists=("frob-devel",),
    )
    mails.append(cover)
    for number, (key, patch) in enumerate(zip(keys, patches, strict=True), start=1):
        mail = patch_mail(
            patch,
            message_id=MM_SERIES_IDS[number],
            to=(DEVEL,),
            cc=(GRACE,),
            received=at(f"2022-09-05 10:15:0{3 + number} +0200"),
            lists=("frob-devel",),
            parent=cover,
        )
        ledger.postings.append((key, MM_SERIES_IDS[number], "exact"))
        mails.append(mail)
    ledger.covers.append((keys, MM_SERIES_IDS[0]))
    ledger.case(
        "cover_letter", cover, "frob-devel.mbox", "[PATCH 0/3]; 1/3..3/3 reply to it"
    )
    ledger.case(
        "series_patch",
        mails[2],
        "frob-devel.mbox",
        "[PATCH 1/3], In-Reply-To the cover",
    )
    mails += mm_replies(sources, ledger, cover, mails[2], patches[0])
    return mails


MM_BLURB = """\
Hi,

While chasing a kmemleak report on a rev B board I found that frob_alloc()
leaks the object when the pool is full.  Patch 1 fixes that; patches 2
and 3 clean up the size arithmetic around it.

The series is on top of frob-next."""


def mm_replies(
    sources: Sources, ledger: Ledger, cover: Mail, first: Mail, patch: FormattedPatch
) -> list[Mail]:
    tested = reply(
        TOMASZ,
        cover,
        sent=at("2022-09-06 09:30:00 +0200"),
        received=at("2022-09-06 09:30:12 +0200"),
        message_id="8f0b7d2e-3c1a-4b7e-9d61-2f4a6c9e1b70@example.org",
        date_header="Thu, 1 Jan 1970 00:00:00 +0000",
        agent=THUNDERBIRD,
        body=(
            "On 05/09/2022 10:15, Dmitri Volkov wrote:\n"
            + quote(MM_BLURB.split("\n\n")[1])
            + "\nRan the frobd stress test for a night on a rev A and a rev B board:\n"
            "kmemleak is quiet now.\n\nTested-by: Tomasz Nowak <tomasz@example.org>\n\n"
            "(The date on this mail is wrong: the RTC battery in my test box is dead\n"
            "and it boots into 1970.  Sorry.)\n"
        ),
    )
    ledger.case(
        "date_1970",
        tested,
        "frob-devel.mbox",
        "Date: 1970; the Received: header has the real time; carries Tested-by",
    )
    reviewed = reply(
        RAVI,
        first,
        sent=at("2022-09-06 11:02:40 +0200"),
        received=at("2022-09-06 11:02:44 +0200"),
        message_id="Yxb8yJ0c3Vn1rR2T@example.org",
        body=(
            wrote(at("2022-09-02 16:01:37 +0200"), DMITRI)
            + "\n"
            + quote(excerpt(patch.body, "frob_alloc() allocates", 3))
            + ">\n> [...]\n"
            + quote(excerpt(patch.body, "@@ ", 11))
            + "\nGood catch.  Checking for room before calling kmalloc() would avoid\n"
            "the allocation altogether, but this is the minimal fix and fine for\nstable.\n\n"
            "Reviewed-by: Ravi Narayan <ravi@example.org>\n"
        ),
    )
    ledger.case(
        "reviewed_by",
        reviewed,
        "frob-devel.mbox",
        "Reviewed-by: in a reply that quotes the diff (> +...): not a patch",
    )
    thanks = reply(
        GRACE,
        cover,
        sent=at("2022-09-14 09:20:00 +0200"),
        received=at("2022-09-14 09:20:05 +0200"),
        message_id="166314000512.3150.1733518342251953012.b4-ty@example.org",
        agent="b4 0.10.1",
        body=(
            "On Mon, 05 Sep 2022 10:15:00 +0200, Dmitri Volkov wrote:\n"
            + quote(MM_BLURB.split("\n\n")[1])
            + ">\n> [...]\n\nApplied, thanks!\n\n"
            + ty_list(
                sources,
                (("[1/3]", "mm-leak"), ("[2/3]", "mm-kcalloc"), ("[3/3]", "mm-array")),
            )
            + "\nBest regards,"
            + SIGNATURE_GRACE
        ),
    )
    return [tested, reviewed, thanks]


# --- frob-devel: firmware (and its resend), DMARC, the maintainer edit -----------------
def fixes(sources: Sources, ledger: Ledger) -> list[Mail]:
    (firmware,) = sources.patches(("fw-revb",))
    first = patch_mail(
        firmware,
        message_id="20220907092410.3377-1-tomasz@example.org",
        to=(DEVEL,),
        cc=(GRACE,),
        received=at("2022-09-07 11:24:10 +0200"),
        lists=("frob-devel",),
    )
    (resent_patch,) = sources.patches(("fw-revb",), prefix="PATCH RESEND")
    resent_patch = FormattedPatch(
        resent_patch.headers,
        resent_patch.body.replace(
            "---\n",
            "---\nResending: no reply in a week, and rev B boards are shipping.\n\n",
            1,
        ),
        resent_patch.text,
    )
    resend = patch_mail(
        resent_patch,
        message_id="20220913063005.4410-1-tomasz@example.org",
        to=(DEVEL,),
        cc=(GRACE,),
        received=at("2022-09-13 08:30:05 +0200"),
        lists=("frob-devel",),
    )
    ledger.postings += [
        ("fw-revb", first.message_id or "", "exact"),
        ("fw-revb", resend.message_id or "", "exact"),
    ]
    ledger.case(
        "binary_patch", first, "frob-devel.mbox", "GIT binary patch (firmware.bin)"
    )
    ledger.case(
        "resend",
        resend,
        "frob-devel.mbox",
        "[PATCH RESEND], same patch and same Date: (author date) as the first posting",
    )

    (alice,) = sources.patches(("net-null",))
    dmarc = patch_mail(
        alice,
        message_id="20220907135002.5150-1-alice@example.com",
        to=(DEVEL,),
        cc=(RAVI,),
        received=at("2022-09-07 15:50:02 +0200"),
        lists=("frob-devel",),
    )
    dmarc_rewrite(dmarc, ALICE, "frob-devel")
    ledger.postings.append(("net-null", dmarc.message_id or "", "exact"))
    ledger.case(
        "dmarc_from",
        dmarc,
        "frob-devel.mbox",
        "From: 'Alice Example via frob-devel'; X-Original-From/Reply-To name her",
    )
    return [first, resend, dmarc, *maintainer_edit(sources, ledger)]


def maintainer_edit(sources: Sources, ledger: Ledger) -> list[Mail]:
    (posted,) = sources.patches(("mm-uaf",), early=True)
    mail = patch_mail(
        posted,
        message_id="20220908043745.2648-1-priya@example.org",
        to=(DEVEL,),
        cc=(GRACE,),
        received=at("2022-09-08 10:07:45 +0530"),
        lists=("frob-devel",),
    )
    ledger.postings.append(("mm-uaf", mail.message_id or "", "edited"))
    ledger.case(
        "maintainer_edit",
        mail,
        "frob-devel.mbox",
        "the commit differs by one line (int i -> size_t i): patch-id differs",
    )
    applied = reply(
        GRACE,
        mail,
        sent=at("2022-09-15 10:02:00 +0200"),
        received=at("2022-09-15 10:02:09 +0200"),
        message_id="YyLbOa6Xc2Jf0sT1@example.org",
        body=(
            wrote(at("2022-09-08 10:05:00 +0530"), PRIYA)
            + "\n"
            + quote(excerpt(posted.body, "frob_pool_destroy() frees", 2))
            + "\nApplied to frob-next, thanks.  I also made the loop counter a size_t\n"
            "while at it, since pool->nr is one; the result is commit\n"
            f'{sources.sha("mm-uaf")[:12]} ("mm: fix use-after-free in frob_pool_destroy()").\n'
            + SIGNATURE_GRACE
        ),
    )
    return [mail, applied]


# --- frob-devel: a plain discussion with broken headers ------------------------------
def discussion(ledger: Ledger) -> list[Mail]:
    root = text_mail(
        DMITRI,
        subject="frobhash: a 64-bit variant for flow keys?",
        sent=at("2022-09-09 16:40:00 +0200"),
        received=at("2022-09-09 16:40:03 +0200"),
        message_id=HASH64_DISCUSSION_ID,
        to=(DEVEL,),
        cc=(GRACE,),
        lists=("frob-devel",),
        body=(
            "Hi Grace,\n\nThe flow table in net/ folds a 32-bit frobhash() into the bucket\n"
            "index, and with a few million flows the collisions start to show up in\n"
            "the profiles.  Would you take a 64-bit variant in lib/?  It does not\n"
            "need to be compatible with frobhash(), just fast and well mixed.\n\nDmitri\n"
        ),
    )
    answer = reply(
        GRACE,
        root,
        sent=at("2022-09-09 18:01:15 +0200"),
        received=at("2022-09-09 18:01:19 +0200"),
        message_id="YxtiA2b3c4d5e6f7@example.org",
        body=(
            wrote(at("2022-09-09 16:40:00 +0200"), DMITRI) + "\n> [...]\n"
            "> Would you take a 64-bit variant in lib/?\n\n"
            "Yes.  FNV-1a would do; I will write it up for 6.1 unless someone beats\nme to it."
            + SIGNATURE_GRACE
        ),
    )
    future = reply(
        KURT,
        answer,
        sent=at("2022-09-10 08:11:58 +0200"),
        received=at("2022-09-10 08:12:00 +0200"),
        message_id="87sfk3xq2d.fsf@example.com",
        date_header="Sat, 15 Sep 2040 03:14:07 +0200",
        agent="Gnus/5.13 (Gnus v5.13)",
        body=(
            "Grace Hopwood <grace@example.org> writes:\n\n"
            "> Yes.  FNV-1a would do; I will write it up for 6.1 unless someone beats\n"
            "> me to it.\n\nPlease keep the result independent of endianness: frobd on the\n"
            "big-endian boards hashes the same keys.\n\n-- \nKurt\n"
        ),
    )
    anonymous = reply(
        HAL,
        answer,
        sent=at("2022-09-11 07:55:00 -0400"),
        received=at("2022-09-11 13:55:30 +0200"),
        message_id=None,
        agent="QUALCOMM Windows Eudora Version 7.1",
        body=(
            "FWIW we have carried an FNV-1a patch out of tree since 2019.  Happy to\n"
            "test whatever lands.\n\nHal\n"
        ),
    )
    ledger.case(
        "discussion",
        root,
        "frob-devel.mbox",
        "a question, no diff; commit hash64's Link: points here (not a posting)",
    )
    ledger.case(
        "date_2040",
        future,
        "frob-devel.mbox",
        "Date: 2040; the Received: header has the real time",
    )
    ledger.case(
        "no_message_id",
        anonymous,
        "frob-devel.mbox",
        "no Message-ID header at all; In-Reply-To is set",
    )
    return [root, answer, future, anonymous]


# --- frob-net: v1 and v2 of a series, v2 cross-posted; a patch sent by someone else ---
STATS_BLURB = """\
This series adds per-queue rx counters to the frob network glue and
reports them through ethtool, so that a starved queue shows up in
"ethtool -S"."""


def stats_series(sources: Sources, ledger: Ledger) -> list[Mail]:
    keys = ("net-stats", "net-ethtool")
    title = "net: frob: per-queue rx statistics"
    v1_ids = tuple(f"20220905234500.1201-{n}-keiko@example.com" for n in (1, 2, 3))
    v1 = series(
        sources.patches(
            keys, early=True, cover=(KEIKO, at("2022-09-06 08:45:00 +0900"))
        ),
        v1_ids,
        title=title,
        blurb=STATS_BLURB,
        to=(NET,),
        cc=(RAVI,),
        received=at("2022-09-06 08:45:02 +0900"),
        lists=("frob-net",),
    )
    review = reply(
        RAVI,
        v1[2],
        sent=at("2022-09-07 10:15:00 +0200"),
        received=at("2022-09-07 10:15:04 +0200"),
        message_id="YxhSxq1m5c8y2Jk9@example.org",
        body=(
            wrote(at("2022-09-06 08:30:00 +0900"), KEIKO)
            + "\n> [...]\n"
            + quote(
                excerpt(v1[2].body.decode(), "+\tfor (i = 0; i < FROB_NET_QUEUES", 6)
            )
            + "\nPlease use ethtool_sprintf() here: it bounds each name to\n"
            "ETH_GSTRING_LEN and advances the pointer for you.\n\nRavi\n"
        ),
    )
    v2_ids = tuple(f"20220912120000.2302-{n}-keiko@example.com" for n in (1, 2, 3))
    v2_blurb = (
        f"{STATS_BLURB}\n\nChanges in v2:\n- use ethtool_sprintf() for the stat names"
        f" (Ravi)\n\nv1: https://lore.kernel.org/r/{v1_ids[0]}"
    )
    v2 = series(
        sources.patches(
            keys, prefix="PATCH v2", cover=(KEIKO, at("2022-09-12 21:00:00 +0900"))
        ),
        v2_ids,
        title=title,
        blurb=v2_blurb,
        to=(NET,),
        cc=(DEVEL, RAVI, GRACE),
        received=at("2022-09-12 21:00:02 +0900"),
        lists=("frob-net", "frob-devel"),
    )
    ledger.postings += [
        ("net-stats", v1_ids[1], "exact"),
        ("net-stats", v2_ids[1], "exact"),
        ("net-ethtool", v1_ids[2], "earlier-version"),
        ("net-ethtool", v2_ids[2], "exact"),
    ]
    ledger.covers += [(keys, v1_ids[0]), (keys, v2_ids[0])]
    ledger.case("v1_cover", v1[0], "frob-net.mbox.gz", "[PATCH 0/2], v1 of the series")
    ledger.case(
        "v2_cover",
        v2[0],
        "frob-net.mbox.gz",
        "[PATCH v2 0/2] in a new thread; also in frob-devel.mbox (cross-post)",
    )
    ledger.case(
        "cross_post",
        v2[2],
        "frob-net.mbox.gz",
        "[PATCH v2 2/2]: the same Message-ID in frob-net.mbox.gz and frob-devel.mbox",
    )
    ledger.case(
        "earlier_version",
        v1[2],
        "frob-net.mbox.gz",
        "[PATCH 2/2] v1: the diff differs from the commit (sprintf, not ethtool_sprintf)",
    )
    return [*v1, review, *v2, *stats_replies(sources, ledger, v2[0])]


def stats_replies(sources: Sources, ledger: Ledger, cover: Mail) -> list[Mail]:
    acked = reply(
        RAVI,
        cover,
        sent=at("2022-09-13 09:00:00 +0200"),
        received=at("2022-09-13 09:00:03 +0200"),
        lists=("frob-net",),
        message_id="YyAa0bQ1c2d3e4Fg@example.org",
        body=(
            wrote(at("2022-09-12 21:00:00 +0900"), KEIKO) + "\n> [...]\n"
            "> Changes in v2:\n> - use ethtool_sprintf() for the stat names (Ravi)\n\n"
            "Thanks, this looks good now.  For the series:\n\n"
            "Acked-by: Ravi Narayan <ravi@example.org>\n"
        ),
    )
    thanks = reply(
        GRACE,
        cover,
        sent=at("2022-09-16 09:10:00 +0200"),
        received=at("2022-09-16 09:10:04 +0200"),
        message_id="166331220412.3150.8814417240061234567.b4-ty@example.org",
        agent="b4 0.10.1",
        body=(
            "On Mon, 12 Sep 2022 21:00:00 +0900, Keiko Tanaka wrote:\n"
            + quote(STATS_BLURB)
            + ">\n> [...]\n\nApplied, thanks!\n\n"
            + ty_list(sources, (("[1/2]", "net-stats"), ("[2/2]", "net-ethtool")))
            + "\nBest regards,"
            + SIGNATURE_GRACE
        ),
    )
    ledger.case(
        "acked_by", acked, "frob-net.mbox.gz", "Acked-by: for the whole v2 series"
    )
    return [acked, thanks]


def forwarded(sources: Sources, ledger: Ledger) -> list[Mail]:
    (patch,) = sources.patches(("net-legacy",), sender=BOB)
    mail = patch_mail(
        patch,
        message_id="20220910080000.6021-1-bob@example.com",
        to=(NET,),
        cc=(GRACE, CHEN),
        received=at("2022-09-10 10:00:00 +0200"),
        lists=("frob-net",),
    )
    ledger.postings.append(("net-legacy", mail.message_id or "", "exact"))
    ledger.case(
        "in_body_from",
        mail,
        "frob-net.mbox.gz",
        "sent by Bob Sender; the in-body From: line names the author, Chen Wei",
    )
    return [mail]


# --- frob-devel: the mail-encoding cases --------------------------------------------
def encodings(sources: Sources, ledger: Ledger) -> list[Mail]:
    (jose,) = sources.patches(("hash-rol",))
    b_from = patch_mail(
        jose,
        message_id="20220912073127.1875-1-jose.mueller@example.com",
        to=(DEVEL,),
        received=at("2022-09-12 09:31:27 +0200"),
        lists=("frob-devel",),
    )
    rfc2047_base64_from(b_from, JOSE)
    (joerg,) = sources.patches(("probe-typo",))
    latin1 = patch_mail(
        joerg,
        message_id="20220913131540.7a3c2b1d@example.com",
        to=(DEVEL,),
        received=at("2022-09-13 13:15:40 +0200"),
        lists=("frob-devel",),
        mailer="Sylpheed 3.7.0 (GTK+ 2.24.33; x86_64-pc-linux-gnu)",
    )
    as_latin1(latin1, JOERG)
    (marta,) = sources.patches(("hash-fold",))
    attached = patch_mail(
        marta,
        message_id="3e9c1f0a-8b2d-4c6e-a7f5-0d1b2c3e4f50@example.com",
        to=(DEVEL,),
        received=at("2022-09-14 08:46:12 +0200"),
        lists=("frob-devel",),
    )
    as_attachment(
        attached,
        marta,
        "0001-lib-frobhash-avoid-undefined-shift-in-frobhash_fold.patch",
        "Hi,\n\nmy mail client mangles inline patches, so the fix is attached.\n\n"
        "Marta\n",
    )
    (samir,) = sources.patches(("pool-pow2",))
    qp = patch_mail(
        samir,
        message_id="LO2P265MB51230A1B2C3D4E5F60718293@LO2P265MB5123.example.com",
        to=(DEVEL,),
        cc=(GRACE,),
        received=at("2022-09-14 19:05:33 +0100"),
        lists=("frob-devel",),
        mailer="Microsoft Outlook 16.0",
    )
    as_quoted_printable(qp)
    for key, mail in (
        ("hash-rol", b_from),
        ("probe-typo", latin1),
        ("hash-fold", attached),
        ("pool-pow2", qp),
    ):
        ledger.postings.append((key, mail.message_id or "", "exact"))
    ledger.case(
        "rfc2047_from",
        b_from,
        "frob-devel.mbox",
        "From: =?UTF-8?B?...?= (José Müller); the body has a line starting 'From '",
    )
    ledger.case(
        "latin1", latin1, "frob-devel.mbox", "charset=iso-8859-1 body and From: (Jörg)"
    )
    ledger.case(
        "base64_attachment",
        attached,
        "frob-devel.mbox",
        "multipart/mixed; the patch is a base64 text/x-patch attachment",
    )
    ledger.case(
        "quoted_printable",
        qp,
        "frob-devel.mbox",
        "Content-Transfer-Encoding: quoted-printable",
    )
    return [b_from, latin1, attached, qp]


def pull_request(sources: Sources, ledger: Ledger) -> list[Mail]:
    mail = text_mail(
        GRACE,
        subject="[GIT PULL] frobnicator changes for 6.1",
        sent=at("2022-09-26 10:30:00 +0200"),
        received=at("2022-09-26 10:30:04 +0200"),
        message_id="YzFp2kQ8c7rT0aBc@example.org",
        to=(URSULA,),
        cc=(DEVEL,),
        lists=("frob-devel",),
        body=(
            "Hi Ursula,\n\nPlease pull the frobnicator changes for 6.1.  Everything has been in\n"
            "frob-next for at least a week.\n\n"
            + sources.request_pull("doc-rst", "hash64")
            + SIGNATURE_GRACE
        ),
    )
    ledger.case(
        "pull_request",
        mail,
        "frob-devel.mbox",
        "git request-pull text: tags/frob-for-6.1 at https://git.example.org/frob/frob.git",
    )
    return [mail]


def frob_devel_and_net(sources: Sources, ledger: Ledger) -> list[Mail]:
    """Every 2022 mail, in no particular order (archives sort by Received)."""
    return [
        *mm_series(sources, ledger),
        *fixes(sources, ledger),
        *discussion(ledger),
        *stats_series(sources, ledger),
        *forwarded(sources, ledger),
        *encodings(sources, ledger),
        *pull_request(sources, ledger),
    ]


# --- frob-users, March 2007 (pipermail) --------------------------------------------
def old_patch_body(
    sources: Sources, key: str, stamps: tuple[str, str], *, diff_lines: bool
) -> str:
    spec = COMMIT_BY_KEY[key]
    diff = sources.old_style_diff(key, stamps=stamps, diff_lines=diff_lines)
    separator = "\n---\n\n" if diff_lines else "\n\n"
    return f"{spec.body}\n\nSigned-off-by: {spec.author.ident}{separator}{diff}"


def frob_users_2007(sources: Sources, ledger: Ledger) -> list[OldMail]:
    prefix = "[Frob-users] "
    question = OldMail(
        HAL,
        at("2007-03-01 14:22:10 -0500"),
        prefix + "frob on x86_64?",
        "45E7275A.6050405@example.org",
        None,
        "Has anyone run the frob driver on x86_64?  The README only talks\n"
        "about i386 boxes.\n\nThanks,\nHal\n",
    )
    answer = OldMail(
        PETER,
        at("2007-03-01 21:03:44 +0100"),
        "Re: " + question.subject,
        "20070301200344.GA3921@example.org",
        question,
        "On Thu, Mar 01, 2007 at 02:22:10PM -0500, Hal Berger wrote:\n"
        "> Has anyone run the frob driver on x86_64?\n\n"
        "I run it on an Opteron every day.  The README is just old.\n\nPeter\n",
    )
    fix = OldMail(
        LINH,
        at("2007-03-05 09:12:44 +0100"),
        prefix + "[PATCH] frob: fix off-by-one in frob_read()",
        "45EBD43C.9020502@example.com",
        None,
        old_patch_body(
            sources,
            "read-eof",
            (
                "2007-03-05 09:02:11.000000000 +0100",
                "2007-03-05 09:10:37.000000000 +0100",
            ),
            diff_lines=False,
        ),
    )
    applied = OldMail(
        PETER,
        at("2007-03-06 18:35:02 +0100"),
        "Re: " + fix.subject,
        "20070306173502.GB4107@example.org",
        fix,
        "On Mon, Mar 05, 2007 at 09:12:44AM +0100, Linh Tran wrote:\n"
        "> frob_read() only returns end of file when *ppos is past the end of the\n"
        "> buffer.\n\nApplied, thanks.\n\nPeter\n",
    )
    reset = OldMail(
        PETER,
        at("2007-03-14 22:41:09 +0100"),
        prefix + "[PATCH] frob: add FROB_IOC_RESET ioctl",
        "20070314214109.GA5530@example.org",
        None,
        old_patch_body(
            sources,
            "reset-ioctl",
            (
                "2007-02-20 21:04:13.000000000 +0100",
                "2007-03-14 22:30:55.000000000 +0100",
            ),
            diff_lines=True,
        ),
    )
    question2 = OldMail(
        LINH,
        at("2007-03-15 08:55:31 +0100"),
        "Re: " + reset.subject,
        "45F8FB23.1000707@example.com",
        reset,
        "Peter Olsen wrote:\n"
        + quote(excerpt(reset.body, "+\tcase FROB_IOC_RESET", 3))
        + "\nShould this require CAP_SYS_ADMIN?  Any user who can open /dev/frob\n"
        "can now throw away the buffer.\n\nLinh\n",
    )
    answer2 = OldMail(
        PETER,
        at("2007-03-15 20:12:00 +0100"),
        "Re: " + reset.subject,
        "20070315191200.GA6012@example.org",
        question2,
        "On Thu, Mar 15, 2007 at 08:55:31AM +0100, Linh Tran wrote:\n"
        "> Should this require CAP_SYS_ADMIN?\n\n"
        "The device node is 0600 root, so whoever can open it can do worse\n"
        "already.  I will leave it as it is.\n\nPeter\n",
    )
    ledger.postings += [
        ("read-eof", fix.message_id, "old-style"),
        ("reset-ioctl", reset.message_id, "old-style"),
    ]
    archive = "pipermail/frob-users/2007-March.txt.gz"
    ledger.cases["old_style_diff"] = {
        "message_id": fix.message_id,
        "subject": fix.subject,
        "archive": archive,
        "note": "plain diff -u with linux-2.6.20.orig/ paths and no 'diff' line",
    }
    ledger.cases["old_style_diff_multi"] = {
        "message_id": reset.message_id,
        "subject": reset.subject,
        "archive": archive,
        "note": "diff -urp of three files, linux-2.6.20.orig/ and linux-2.6.20/ paths",
    }
    return [question, answer, fix, applied, reset, question2, answer2]
