"""The matching rules added since the first matcher, each with one switch.

A `Matcher` takes `Rules`: the names of the rules turned off, none by default (the
matcher as shipped). Only an ablation (benchmarks/eval_postings.py --ablation) turns
one off, to measure what it costs and gains; no command does. Each rule's code reads
its switch where the rule is applied:

- quoted-replies: a reply quoting the whole patch is a candidate by its patch-id
  (e2g.mail.quoted; candidates.exact_candidates);
- lost-threads: a thread whose first mail the archive lacks is a low-confidence
  posting where nothing carried the patch (e2g.matcher.rootless; cascade);
- revert-depth: a mail that reverts where the commit does not (or the other way
  round) ranks below one that does, and is never another posting of the best
  match's change (e2g.mail.subject.revert_depth; cascade);
- series-siblings: another part of the best match's own series, with another diff,
  is never another posting of its change (postings.series_sibling; cascade);
- process-mails: a mail of the stable backport process (AUTOSEL, review, FAILED,
  queued) is never a candidate nor a version (candidates.is_process; Pool.add and
  postings.family).
"""

from __future__ import annotations

from typing import NamedTuple

QUOTED_REPLIES = "quoted-replies"
LOST_THREADS = "lost-threads"
REVERT_DEPTH = "revert-depth"
SERIES_SIBLINGS = "series-siblings"
PROCESS_MAILS = "process-mails"
RULES = (QUOTED_REPLIES, LOST_THREADS, REVERT_DEPTH, SERIES_SIBLINGS, PROCESS_MAILS)


class Rules(NamedTuple):
    """Which of RULES are off; `Rules()` is every rule on."""

    off: frozenset[str] = frozenset()

    @classmethod
    def without(cls, *names: str) -> Rules:
        """Every rule on but `names`; a name not in RULES is refused."""
        unknown = sorted(set(names) - set(RULES))
        if unknown:
            raise ValueError(
                f"unknown matching rule {', '.join(unknown)}: one of {', '.join(RULES)}"
            )
        return cls(frozenset(names))

    def on(self, rule: str) -> bool:
        return rule not in self.off


ALL = Rules()
