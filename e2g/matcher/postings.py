"""Once a commit's patch is found: every message that carried it, and their threads.

From the best match outwards: the other accepted candidates (versions, resends), the
same patch's other versions by the same author (same subject key, inside the date
window), mails with the same patch-id, and the cover letter of each posting's series.
For each posting its thread gives the reply count, the participants, and the review
trailers (Reviewed-by, Acked-by, Tested-by) given in replies below it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from e2g.index.store import Store, StoredLink
from e2g.mail import threads as thread_rules
from e2g.mail.threads import replies_below
from e2g.matcher.candidates import Memo, MessageCache, is_process, window
from e2g.matcher.rootless import ROOTLESS
from e2g.matcher.rules import ALL, PROCESS_MAILS, Rules
from e2g.matcher.scoring import Score, normalise_name
from e2g.model import Address
from e2g.model.links import Commit, Evidence, Posting
from e2g.model.stored import StoredMessage

MAX_DATE_RAW = 200  # characters of a corrected Date: header kept on a posting
# The method of a posting that is a reply quoting the whole patch (e2g.mail.quoted).
QUOTED = "quoted"

UrlFor = Callable[[str, str | None], str | None]


@dataclass(slots=True)  # not frozen: see scoring.Candidate
class Verdict:
    message: StoredMessage
    score: Score


class ThreadFacts(NamedTuple):
    replies: int
    participants: tuple[str, ...]
    reviewers: tuple[str, ...]


def family(
    messages: MessageCache, commit: Commit, best: StoredMessage, *, rules: Rules = ALL
) -> list[StoredMessage]:
    """Other postings of the best match's patch: versions, resends, same patch-id."""
    low, high = window(commit)
    if best.date is not None:
        high = max(high, int(best.date.timestamp()) + 86400)
    same_subject, same_patch = messages.resolve(
        *messages.store.family_seqs(
            subject_key=best.subject_key, patch_id=best.patch_id, low=low, high=high
        )
    )
    # The caller still asks a same-subject relative for shared content.
    found = [message for message in same_subject if same_author(best, message)][:100]
    found += same_patch if best.patch_id else []
    # A stable review or AUTOSEL mail repeats the patch (same subject, same patch-id,
    # often the same From:): a posting of the backport, not a version of this patch.
    if not rules.on(PROCESS_MAILS):
        return found
    return [message for message in found if not is_process(message)]


def series_sibling(best: StoredMessage, other: StoredMessage) -> bool:
    """Another patch of the best match's own series (another part, another diff):
    a sibling, never a version of this patch however alike their diffs."""
    return (
        best.series_id is not None
        and other.series_id == best.series_id
        and other.part != best.part
        and other.patch_id != best.patch_id
    )


def same_author(one: StoredMessage, other: StoredMessage) -> bool:
    """The same person sent both: the same address, or the same name under a new
    address (a new employer between v1 and v3)."""
    email = one.patch_author_email or one.author_email
    if email in (other.author_email, other.patch_author_email):
        return True
    name = normalise_name(_author_name(one))
    return bool(name) and name == normalise_name(_author_name(other))


def _author_name(message: StoredMessage) -> str:
    return message.patch_author_name or message.author_name


ThreadLinks = list[tuple[int, str, str | None, str, str]]


def thread_links(store: Store, *, limit: int = 2000) -> Memo[str, ThreadLinks]:
    """Store.thread_links() by thread root, for one matcher: a series' patches and
    its cover letter share one thread, and a commit's postings are often all in it."""
    return Memo(partial(store.thread_links, limit=thread_rules.MAX_THREAD), limit=limit)


def thread_facts(
    store: Store,
    message: StoredMessage,
    *,
    exclude: set[str],
    threads: Memo[str, ThreadLinks],
    whole_thread: bool = False,
) -> ThreadFacts:
    """Replies below `message` (iteratively, never recursing on mail data). A cover
    letter's own series hangs below it but is not review of it: its patches, and the
    replies to them, are not counted as the cover's. With `whole_thread` (a thread
    whose first mail is missing, e2g.matcher.rootless), every stored mail of the
    thread, `message` too: each answers the lost patch, or an answer to it the
    archive lacks as well."""
    if message.kind == "cover" and message.series_id is not None:
        exclude = exclude | {
            member.message_id
            for member in store.series_members(message.series_id)
            if member.message_id != message.message_id
        }
    links = (
        (message_id, parent, (seq, name, email))
        for seq, message_id, parent, name, email in threads(message.thread_root)
    )
    below = (
        [item for message_id, _, item in links if message_id not in exclude]
        if whole_thread
        else replies_below(message.message_id, links, exclude=exclude)
    )
    reviews = store.reviews_of([seq for seq, _, _ in below])
    return ThreadFacts(
        replies=len(below),
        participants=tuple(
            dict.fromkeys(_person(name, email) for _, name, email in below)
        ),
        reviewers=tuple(dict.fromkeys(f"{key}: {value}" for _, key, value in reviews)),
    )


def _person(name: str, email: str) -> str:
    return f"{name} <{email}>" if name else f"<{email}>"


def to_posting(  # noqa: PLR0913 - all keyword-only
    store: Store,
    message: StoredMessage,
    *,
    method: str,
    score: float,
    applied: bool,
    url_for: UrlFor,
    evidence: tuple[Evidence, ...] = (),
    threads: Memo[str, ThreadLinks],
    exclude: set[str] | None = None,
) -> Posting:
    facts = thread_facts(
        store,
        message,
        exclude=exclude or set(),
        threads=threads,
        whole_thread=method == ROOTLESS,
    )
    first_list = message.lists[0] if message.lists else message.list_id
    return Posting(
        message_id=message.message_id,
        subject=message.subject,
        date=message.date,
        author=Address(message.author_name, message.author_email),
        lists=message.lists,
        version=message.version,
        kind=message.kind,
        applied=applied,
        method=method,
        score=round(score, 4),
        url=url_for(message.message_id, first_list),
        thread_root=message.thread_root,
        replies=facts.replies,
        participants=facts.participants,
        reviewers=facts.reviewers,
        evidence=evidence,
        date_source=message.date_source,
        date_raw=message.date_raw[:MAX_DATE_RAW] if message.date_corrected else "",
    )


def covers(
    messages: MessageCache, patches: Iterable[StoredMessage]
) -> list[StoredMessage]:
    """The cover letters of the series these patches belong to, once each."""
    series_ids = sorted(
        {patch.series_id for patch in patches if patch.series_id is not None}
    )
    seqs = messages.store.cover_seqs(series_ids)
    found = messages.by_seqs(seqs)
    return [found[seq] for seq in seqs if seq in found]


def posting_order(posting: Posting) -> tuple[int, int, float, bool, str]:
    """Newest version first, a cover after its patches, then newest first; among
    copies sent at one moment (cross-posts), the applied one, then by Message-ID, so
    that a stored answer reads back in the order the matcher gave it."""
    date = posting.date.timestamp() if posting.date else 0.0
    return (
        -posting.version,
        1 if posting.kind == "cover" else 0,
        -date,
        not posting.applied,
        posting.message_id,
    )


def stored_postings_of(
    store: Store,
    repo: str,
    shas: Sequence[str],
    *,
    url_for: UrlFor,
    threads: Memo[str, ThreadLinks],
) -> dict[str, list[Posting]]:
    """`stored_postings` of each of `shas` (of the repository keyed `repo`) that has
    stored links, their links and linked messages read for all of them at once.

    A backport (e2g.api.trees stored its edge) has its upstream commit's postings,
    the review it inherits, before its own (the backport process's mails)."""
    links = store.links_of_commits(repo, shas)
    for sha, upstream in _upstream_links(store, repo, shas).items():
        links[sha] = [*upstream, *links.get(sha, [])]
    messages = {
        message.message_id: message
        for message in store.messages(
            link.message_id for found in links.values() for link in found
        )
    }
    return {
        sha: stored_postings(
            store, found, messages=messages, url_for=url_for, threads=threads
        )
        for sha, found in links.items()
    }


def _upstream_links(
    store: Store, repo: str, shas: Sequence[str]
) -> dict[str, list[StoredLink]]:
    """The stored links of the upstream commit of each backport among `shas`."""
    edges = store.backport_edges(repo, shas)
    by_repo: dict[str, list[str]] = {}
    for edge in edges.values():
        by_repo.setdefault(edge.upstream_repo, []).append(edge.upstream_sha)
    found = {
        (up_repo, sha): links
        for up_repo, ups in by_repo.items()
        for sha, links in store.links_of_commits(up_repo, ups).items()
    }
    return {
        sha: found[edge.upstream_repo, edge.upstream_sha]
        for sha, edge in edges.items()
        if (edge.upstream_repo, edge.upstream_sha) in found
    }


def stored_postings(
    store: Store,
    links: Sequence[StoredLink],
    *,
    messages: Mapping[str, StoredMessage],
    url_for: UrlFor,
    threads: Memo[str, ThreadLinks],
) -> list[Posting]:
    """The postings `e2g match` stored for one commit, with their threads' facts as
    the matcher gave them (replies below each posting, the patches themselves not
    counted), in the matcher's order. `messages` holds the linked messages by
    Message-ID (read for many commits at once); a link whose message left the store
    is skipped."""
    exclude = {link.message_id for link in links if link.method != "cover"}
    postings = [
        to_posting(
            store,
            messages[link.message_id],
            method=link.method,
            score=link.score,
            applied=link.applied,
            url_for=url_for,
            evidence=tuple(
                Evidence(signal, detail) for signal, detail in link.evidence
            ),
            threads=threads,
            exclude=exclude,
        )
        for link in links
        if link.message_id in messages
    ]
    return sorted(postings, key=posting_order)
