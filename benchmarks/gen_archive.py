"""A deterministic generator of a realistic kernel-list mbox, for benchmarks.

Owns the shape of the synthetic archive: threads of git format-patch series with cover
letters (real unified diffs over plausible kernel paths, diffstats, Signed-off-by),
single patches, `[GIT PULL]` requests, and replies that quote their parent and add
review trailers. Headers look like vger's (Received chain, List-Id, Message-ID,
In-Reply-To/References, Date). Messages average about 3 KB.

The same seed gives the same bytes (one `random.Random`, no hash ordering, no clock).
Messages stream to disk one at a time; only the current thread is held in memory.
Lines that would start a new message (`From `) are escaped the mboxrd way.

    python benchmarks/gen_archive.py OUT.mbox --count 100000 [--seed 1]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, formataddr
from pathlib import Path
from typing import BinaryIO

LIST_ID = "linux-kernel.vger.kernel.org"
LIST_ADDRESS = "linux-kernel@vger.kernel.org"
START = datetime(2020, 1, 6, 9, 0, tzinfo=UTC)
MAX_PATCHES = 12  # the longest series generated
FROM_LINE = re.compile(rb"^>*From ", re.MULTILINE)

FIRST_NAMES = (
    "Alexei",
    "Andrew",
    "Arnd",
    "Bart",
    "Christoph",
    "Dan",
    "David",
    "Eric",
    "Florian",
    "Greg",
    "Hans",
    "Ingo",
    "Jakub",
    "Jan",
    "Jens",
    "Johannes",
    "Jürgen",
    "Kees",
    "Linus",
    "Mark",
    "Matthew",
    "Michal",
    "Mike",
    "Ming",
    "Pablo",
    "Paolo",
    "Pavel",
    "Paweł",
    "Peter",
    "Rafael",
    "Randy",
    "Sasha",
    "Sean",
    "Song",
    "Stephen",
    "Takashi",
    "Thomas",
    "Tejun",
    "Uwe",
    "Vlastimil",
    "Wei",
    "Will",
    "Xin",
    "Yang",
    "Zhang",
    "Krzysztof",
    "Joël",
    "Ilpo",
    "Geert",
    "Nathan",
)
LAST_NAMES = (
    "Axboe",
    "Bergmann",
    "Brauner",
    "Chinner",
    "Corbet",
    "Dumazet",
    "Fainelli",
    "Gleixner",
    "Hellwig",
    "Hocko",
    "Kicinski",
    "Kara",
    "Kroah-Hartman",
    "Levin",
    "Lobakin",
    "Molnar",
    "Morton",
    "Rostedt",
    "Rothwell",
    "Rutland",
    "Torvalds",
    "Tsirkin",
    "Vetter",
    "Wilcox",
    "Wysocki",
    "Zijlstra",
    "Kleine-König",
    "Järvinen",
    "Łopatowski",
    "Song",
    "Lei",
    "Iwai",
    "Christopherson",
    "Babka",
    "Deacon",
    "Heo",
    "Chancellor",
    "Kozlowski",
    "Uytterhoeven",
    "Wang",
    "Li",
    "Chen",
    "Liu",
    "Zhao",
)
DOMAINS = (
    "kernel.org",
    "redhat.com",
    "suse.de",
    "suse.cz",
    "intel.com",
    "google.com",
    "linux.dev",
    "arm.com",
    "huawei.com",
    "nvidia.com",
    "oracle.com",
    "infradead.org",
    "linutronix.de",
    "linaro.org",
    "amd.com",
    "gmail.com",
    "linux.ibm.com",
    "meta.com",
)
SUBSYSTEMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("mm/slab", ("mm/slab.c", "mm/slab.h", "mm/slab_common.c", "include/linux/slab.h")),
    (
        "mm",
        (
            "mm/page_alloc.c",
            "mm/memory.c",
            "mm/vmscan.c",
            "mm/huge_memory.c",
            "mm/filemap.c",
        ),
    ),
    (
        "tcp",
        (
            "net/ipv4/tcp.c",
            "net/ipv4/tcp_input.c",
            "net/ipv4/tcp_output.c",
            "include/net/tcp.h",
        ),
    ),
    (
        "net: core",
        (
            "net/core/dev.c",
            "net/core/skbuff.c",
            "net/core/sock.c",
            "include/linux/skbuff.h",
        ),
    ),
    (
        "ext4",
        ("fs/ext4/inode.c", "fs/ext4/extents.c", "fs/ext4/super.c", "fs/ext4/ext4.h"),
    ),
    (
        "btrfs",
        (
            "fs/btrfs/inode.c",
            "fs/btrfs/extent-tree.c",
            "fs/btrfs/ctree.c",
            "fs/btrfs/ctree.h",
        ),
    ),
    (
        "io_uring",
        (
            "io_uring/io_uring.c",
            "io_uring/rw.c",
            "io_uring/net.c",
            "include/linux/io_uring_types.h",
        ),
    ),
    (
        "sched/fair",
        ("kernel/sched/fair.c", "kernel/sched/core.c", "kernel/sched/sched.h"),
    ),
    (
        "block",
        ("block/blk-mq.c", "block/blk-core.c", "block/bio.c", "include/linux/blkdev.h"),
    ),
    (
        "drm/i915",
        (
            "drivers/gpu/drm/i915/i915_gem.c",
            "drivers/gpu/drm/i915/intel_pm.c",
            "drivers/gpu/drm/i915/i915_drv.h",
        ),
    ),
    (
        "drm/amdgpu",
        (
            "drivers/gpu/drm/amd/amdgpu/amdgpu_device.c",
            "drivers/gpu/drm/amd/amdgpu/amdgpu_vm.c",
        ),
    ),
    (
        "nvme",
        (
            "drivers/nvme/host/core.c",
            "drivers/nvme/host/pci.c",
            "drivers/nvme/host/nvme.h",
        ),
    ),
    (
        "usb: dwc3",
        (
            "drivers/usb/dwc3/core.c",
            "drivers/usb/dwc3/gadget.c",
            "drivers/usb/dwc3/core.h",
        ),
    ),
    (
        "net: mlx5",
        (
            "drivers/net/ethernet/mellanox/mlx5/core/en_main.c",
            "drivers/net/ethernet/mellanox/mlx5/core/eswitch.c",
        ),
    ),
    (
        "iommu/vt-d",
        (
            "drivers/iommu/intel/iommu.c",
            "drivers/iommu/intel/pasid.c",
            "drivers/iommu/intel/iommu.h",
        ),
    ),
    (
        "x86/mm",
        ("arch/x86/mm/init.c", "arch/x86/mm/fault.c", "arch/x86/include/asm/pgtable.h"),
    ),
    (
        "arm64: dts",
        (
            "arch/arm64/boot/dts/qcom/sm8550.dtsi",
            "arch/arm64/boot/dts/rockchip/rk3588.dtsi",
        ),
    ),
    (
        "bpf",
        (
            "kernel/bpf/verifier.c",
            "kernel/bpf/syscall.c",
            "include/linux/bpf.h",
            "tools/testing/selftests/bpf/prog_tests/verifier.c",
        ),
    ),
    (
        "rcu",
        ("kernel/rcu/tree.c", "kernel/rcu/tree_plugin.h", "include/linux/rcupdate.h"),
    ),
    ("ALSA: hda", ("sound/pci/hda/patch_realtek.c", "sound/pci/hda/hda_intel.c")),
)
VERBS = (
    "fix",
    "avoid",
    "add",
    "remove",
    "convert",
    "simplify",
    "use",
    "drop",
    "introduce",
    "rework",
    "handle",
    "make",
    "check",
    "clean up",
    "refactor",
    "document",
    "export",
)
OBJECTS = (
    "a use-after-free in the error path",
    "a NULL pointer dereference on teardown",
    "the lock ordering in the reclaim path",
    "an off-by-one in the bounds check",
    "a memory leak on the probe failure path",
    "unused variable",
    "kmalloc_array() for the table",
    "the refcount underflow",
    "a race with concurrent resize",
    "struct_size() helper",
    "the stale comment",
    "redundant READ_ONCE()",
    "the missing barrier",
    "debugfs entries",
    "per-cpu counters",
    "the fast path for small requests",
    "sysfs attribute for stats",
    "WARN_ON_ONCE() for the impossible case",
    "the deprecated API",
    "error code propagation",
)
WORDS = (
    "the",
    "a",
    "this",
    "that",
    "when",
    "because",
    "which",
    "with",
    "without",
    "we",
    "can",
    "should",
    "will",
    "never",
    "always",
    "after",
    "before",
    "lock",
    "page",
    "buffer",
    "request",
    "queue",
    "driver",
    "device",
    "memory",
    "allocation",
    "cache",
    "path",
    "caller",
    "callback",
    "reference",
    "counter",
    "interrupt",
    "context",
    "reclaim",
    "socket",
    "packet",
    "inode",
    "extent",
    "transaction",
    "mapping",
    "state",
    "error",
    "handling",
    "fails",
    "returns",
    "holds",
    "drops",
    "frees",
    "checks",
    "warning",
    "splat",
    "syzbot",
    "reported",
    "reproducer",
    "triggers",
    "under",
    "load",
    "concurrent",
    "teardown",
    "probe",
    "cleanup",
    "helper",
    "function",
    "structure",
    "field",
    "flag",
    "bit",
    "value",
    "size",
    "length",
    "offset",
    "index",
    "entry",
)
TYPES = (
    "int",
    "unsigned long",
    "u32",
    "u64",
    "size_t",
    "bool",
    "struct page *",
    "void *",
    "struct sk_buff *",
)
IDENTIFIERS = (
    "ret",
    "err",
    "len",
    "size",
    "flags",
    "count",
    "idx",
    "offset",
    "nr_pages",
    "order",
    "skb",
    "page",
    "folio",
    "req",
    "ctx",
    "dev",
    "sk",
    "inode",
    "bio",
    "cpu",
    "node",
    "priv",
    "entry",
    "head",
    "tail",
    "mask",
    "start",
    "end",
    "pos",
    "slab",
    "cache",
)
FUNCTIONS = (
    "kfree",
    "kmalloc",
    "kzalloc",
    "spin_lock",
    "spin_unlock",
    "mutex_lock",
    "mutex_unlock",
    "put_page",
    "get_page",
    "list_del",
    "list_add_tail",
    "atomic_inc",
    "atomic_dec_and_test",
    "rcu_read_lock",
    "rcu_read_unlock",
    "dev_err",
    "pr_debug",
    "WARN_ON",
    "BUG_ON",
    "memcpy",
    "memset",
    "copy_from_user",
    "refcount_inc",
    "wake_up",
    "schedule",
)
PRONE = (
    "Good catch.",
    "Looks good to me.",
    "Nice cleanup.",
    "This makes sense.",
    "Thanks for fixing this.",
)
DOUBTS = (
    "I am not sure this is right: what happens when the caller already holds the lock?",
    "Could you split this into two patches, one for the fix and one for the cleanup?",
    "Please add a Fixes: tag so this can go to stable.",
    "Is there a reproducer? I could not trigger this on my machine.",
    "Nit: the comment above no longer matches the code.",
    "This changes the behaviour for existing users, please explain why that is fine.",
)


@dataclass(frozen=True, slots=True)
class Person:
    name: str
    email: str

    @property
    def address(self) -> str:
        return formataddr((self.name, self.email))


@dataclass(slots=True)
class Mail:
    """One generated message: its headers' facts and its body text."""

    author: Person
    subject: str
    message_id: str
    date: datetime
    body: str
    parent: Mail | None = None
    references: tuple[str, ...] = ()
    git: bool = False  # sent by git send-email


class Generator:
    """The archive's state: random stream, clock, people and sequence numbers."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.clock = START
        self.serial = 0
        self.people = [self._person() for _ in range(400)]
        self.maintainers = self.people[:30]

    def _person(self) -> Person:
        first = self.random.choice(FIRST_NAMES)
        last = self.random.choice(LAST_NAMES)
        local = f"{first[0]}{last}".lower().encode("ascii", "ignore").decode()
        return Person(f"{first} {last}", f"{local}@{self.random.choice(DOMAINS)}")

    def tick(self, low: int, high: int) -> datetime:
        self.clock += timedelta(seconds=self.random.randint(low, high))
        return self.clock

    def message_id(
        self, person: Person, when: datetime, part: int | None = None
    ) -> str:
        self.serial += 1
        stamp = when.strftime("%Y%m%d%H%M%S")
        if part is None:
            token = hashlib.sha1(f"{self.serial}".encode()).hexdigest()[:12]
            return f"{stamp}.{token}@{person.email.split('@')[1]}"
        return f"{stamp}.{self.serial}-{part}-{person.email}"

    def sha(self) -> str:
        return f"{self.random.getrandbits(160):040x}"

    def sentence(self, low: int = 8, high: int = 20) -> str:
        words = self.random.choices(WORDS, k=self.random.randint(low, high))
        return " ".join(words).capitalize() + "."

    def paragraph(self, sentences: int) -> str:
        text = " ".join(self.sentence() for _ in range(sentences))
        return wrap(text)


def wrap(text: str, width: int = 72) -> str:
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return "\n".join(lines)


def c_line(gen: Generator) -> str:
    """One plausible line of kernel C."""
    rnd = gen.random
    ident = rnd.choice(IDENTIFIERS)
    other = rnd.choice(IDENTIFIERS)
    function = rnd.choice(FUNCTIONS)
    indent = "\t" * rnd.randint(1, 3)
    shapes = (
        f"{indent}{ident} = {function}({other});",
        f"{indent}if ({ident} < 0)",
        f"{indent}\treturn {ident};",
        f"{indent}{function}(&{ident}->lock);",
        f"{indent}{rnd.choice(TYPES)} {ident};",
        f"{indent}if (!{ident}) {{",
        f"{indent}}}",
        f"{indent}{ident}->{other} += {rnd.randint(1, 64)};",
        f"{indent}goto out_{other};",
        f"{indent}/* {gen.sentence(4, 9).lower()} */",
        "",
    )
    return rnd.choice(shapes)


def hunk(gen: Generator, start: int) -> tuple[str, int, int, int]:
    """One unified-diff hunk: text, lines consumed in the old file, added, removed."""
    rnd = gen.random
    lines: list[str] = []
    old = new = added = removed = 0
    for _ in range(3):
        lines.append(" " + c_line(gen))
    for group in range(rnd.randint(1, 3)):
        if group:
            lines.append(" " + c_line(gen))
        minus = rnd.choice((0, 1, 1, 2, 3, 5))
        plus = (
            rnd.choice((1, 1, 2, 3, 4, 8)) if minus == 0 else rnd.randint(0, minus + 3)
        )
        lines += ["-" + c_line(gen) for _ in range(minus)]
        lines += ["+" + c_line(gen) for _ in range(plus)]
        removed += minus
        added += plus
    for _ in range(3):
        lines.append(" " + c_line(gen))
    context = len(lines) - added - removed
    old = context + removed
    new = context + added
    function = f"static int {rnd.choice(IDENTIFIERS)}_{rnd.choice(FUNCTIONS).lower()}(struct {rnd.choice(IDENTIFIERS)} *{rnd.choice(IDENTIFIERS)})"
    header = f"@@ -{start},{old} +{start},{new} @@ {function}"
    return header + "\n" + "\n".join(lines), old, added, removed


def file_diff(gen: Generator, path: str) -> tuple[str, int, int]:
    """A git diff of one file: text, lines added, lines removed."""
    rnd = gen.random
    parts = [
        f"diff --git a/{path} b/{path}",
        f"index {gen.sha()[:12]}..{gen.sha()[:12]} 100644",
        f"--- a/{path}",
        f"+++ b/{path}",
    ]
    start = rnd.randint(20, 400)
    added = removed = 0
    for _ in range(rnd.choice((1, 1, 1, 2, 2, 3))):
        text, old, plus, minus = hunk(gen, start)
        parts.append(text)
        added += plus
        removed += minus
        start += old + rnd.randint(10, 300)
    return "\n".join(parts), added, removed


def diffstat(changes: list[tuple[str, int, int]]) -> str:
    width = max(len(path) for path, _, _ in changes)
    lines = [
        f" {path.ljust(width)} | {plus + minus:3d} {'+' * plus}{'-' * minus}"
        for path, plus, minus in changes
    ]
    files = len(changes)
    plus = sum(change[1] for change in changes)
    minus = sum(change[2] for change in changes)
    summary = f" {files} file{'s' if files > 1 else ''} changed"
    if plus:
        summary += f", {plus} insertion{'s' if plus > 1 else ''}(+)"
    if minus:
        summary += f", {minus} deletion{'s' if minus > 1 else ''}(-)"
    return "\n".join([*lines, summary])


def patch_body(
    gen: Generator, author: Person, paths: list[str]
) -> tuple[str, list[tuple[str, int, int]]]:
    """The body of a git format-patch mail and its per-file change counts."""
    diffs: list[str] = []
    changes: list[tuple[str, int, int]] = []
    for path in paths:
        text, plus, minus = file_diff(gen, path)
        diffs.append(text)
        changes.append((path, plus, minus))
    trailers = [f"Signed-off-by: {author.address}"]
    if gen.random.random() < 0.25:
        trailers.insert(
            0,
            f'Fixes: {gen.sha()[:12]} ("{gen.random.choice(VERBS)} {gen.random.choice(OBJECTS)}")',
        )
    if gen.random.random() < 0.15:
        reporter = gen.random.choice(gen.people)
        trailers.insert(0, f"Reported-by: {reporter.address}")
    body = "\n\n".join(
        [
            gen.paragraph(gen.random.randint(2, 4)),
            gen.paragraph(gen.random.randint(1, 3)),
            "\n".join(trailers) + "\n---\n" + diffstat(changes),
            "\n".join(diffs) + "\n-- \n2.43.0\n",
        ]
    )
    return body, changes


def choose_paths(gen: Generator, files: tuple[str, ...]) -> list[str]:
    count = min(len(files), gen.random.choice((1, 1, 1, 2, 2, 3)))
    return gen.random.sample(files, count)


def summary_line(gen: Generator, prefix: str) -> str:
    return f"{prefix}: {gen.random.choice(VERBS)} {gen.random.choice(OBJECTS)}"


def series(gen: Generator) -> Iterator[Mail]:
    """A patch series: a cover letter (for 2+ patches), the patches, then replies."""
    rnd = gen.random
    author = rnd.choice(gen.people)
    prefix, files = rnd.choice(SUBSYSTEMS)
    total = rnd.choice((1, 1, 1, 2, 2, 3, 3, 4, 5, 6, 8, MAX_PATCHES))
    version = rnd.choice((1, 1, 1, 2, 2, 3, 4))
    tag = "PATCH" if version == 1 else f"PATCH v{version}"
    if rnd.random() < 0.1:
        tag = tag.replace(
            "PATCH", "PATCH net-next" if prefix.startswith("net") else "RFC PATCH"
        )
    start = gen.tick(600, 7200)
    titles = [summary_line(gen, prefix) for _ in range(total)]
    mails: list[Mail] = []
    root: Mail | None = None
    all_changes: list[tuple[str, int, int]] = []
    bodies: list[str] = []
    for _title in titles:
        body, changes = patch_body(gen, author, choose_paths(gen, files))
        all_changes.extend(changes)
        bodies.append(body)
    if total > 1:
        totals: dict[str, tuple[str, int, int]] = {}
        for path, plus, minus in all_changes:
            _, old_plus, old_minus = totals.get(path, (path, 0, 0))
            totals[path] = (path, old_plus + plus, old_minus + minus)
        all_changes = sorted(totals.values())
        listing = "\n".join(f"  {title}" for title in titles)
        cover_body = (
            f"{gen.paragraph(rnd.randint(2, 5))}\n\n"
            + (
                f"Changes in v{version}:\n- {gen.sentence(5, 10)}\n- {gen.sentence(5, 10)}\n\n"
                if version > 1
                else ""
            )
            + f"{author.name} ({total}):\n{listing}\n\n{diffstat(all_changes)}\n\n-- \n2.43.0\n"
        )
        subject = (
            f"[{tag} 0/{total}] {prefix}: {rnd.choice(VERBS)} {rnd.choice(OBJECTS)}"
        )
        root = Mail(
            author,
            subject,
            gen.message_id(author, start, 0),
            start,
            cover_body,
            git=True,
        )
        mails.append(root)
    for index, (title, body) in enumerate(zip(titles, bodies, strict=True), start=1):
        when = start + timedelta(seconds=index)
        numbering = f" {index}/{total}" if total > 1 else ""
        subject = f"[{tag}{numbering}] {title}"
        references = (root.message_id,) if root else ()
        mails.append(
            Mail(
                author,
                subject,
                gen.message_id(author, when, index),
                when,
                body,
                root,
                references,
                git=True,
            )
        )
    yield from mails
    yield from replies(gen, mails)


def pull_request(gen: Generator) -> Iterator[Mail]:
    rnd = gen.random
    author = rnd.choice(gen.maintainers)
    prefix, files = rnd.choice(SUBSYSTEMS)
    tree = prefix.split(":")[0].split("/")[0].lower().replace(" ", "-")
    release = f"6.{rnd.randint(1, 12)}"
    when = gen.tick(1800, 14400)
    titles = [summary_line(gen, prefix) for _ in range(rnd.randint(2, 9))]
    changes = [
        (path, rnd.randint(1, 30), rnd.randint(0, 20))
        for path in choose_paths(gen, files)
    ]
    body = (
        "Hi Linus,\n\n"
        f"{gen.paragraph(rnd.randint(1, 2))}\n\n"
        f"The following changes since commit {gen.sha()}:\n\n"
        f"  Linux {release}-rc{rnd.randint(1, 7)} ({format_datetime(when - timedelta(days=6))})\n\n"
        "are available in the Git repository at:\n\n"
        f"  git://git.kernel.org/pub/scm/linux/kernel/git/{author.email.split('@')[0]}/{tree}.git tags/{tree}-fixes-{release}\n\n"
        f"for you to fetch changes up to {gen.sha()}:\n\n"
        f"  {titles[-1]} ({format_datetime(when - timedelta(days=1))})\n\n"
        + "-" * 64
        + f"\n{gen.paragraph(rnd.randint(1, 3))}\n\n"
        + "-" * 64
        + "\n"
        + f"{author.name} ({len(titles)}):\n"
        + "\n".join(f"      {title}" for title in titles)
        + f"\n\n{diffstat(changes)}\n"
    )
    subject = f"[GIT PULL] {prefix} fixes for {release}"
    mail = Mail(author, subject, gen.message_id(author, when), when, body)
    yield mail
    yield from replies(gen, [mail], limit=1)


def discussion(gen: Generator) -> Iterator[Mail]:
    """A question or bug report that is not a patch, with its replies."""
    rnd = gen.random
    author = rnd.choice(gen.people)
    prefix, files = rnd.choice(SUBSYSTEMS)
    when = gen.tick(600, 7200)
    trace = "\n".join(
        f" {rnd.choice(FUNCTIONS)}+0x{rnd.randint(16, 4095):x}/0x{rnd.randint(4096, 8191):x}"
        for _ in range(rnd.randint(3, 10))
    )
    body = (
        f"Hi,\n\n{gen.paragraph(rnd.randint(2, 4))}\n\n"
        f"WARNING: CPU: {rnd.randint(0, 63)} PID: {rnd.randint(1, 99999)} at {rnd.choice(files)}:{rnd.randint(10, 3000)}\n"
        f"Call Trace:\n{trace}\n\n{gen.paragraph(1)}\n\nThanks,\n{author.name.split()[0]}\n"
    )
    subject = f"{prefix}: {rnd.choice(WORDS)} {rnd.choice(WORDS)} warning in {rnd.choice(FUNCTIONS)}()"
    mail = Mail(author, subject, gen.message_id(author, when), when, body)
    yield mail
    yield from replies(gen, [mail], limit=4)


def quote(mail: Mail, lines: int) -> str:
    """The attribution line and the first `lines` lines of `mail`, quoted."""
    stamp = format_datetime(mail.date)
    quoted = [f"> {line}".rstrip() for line in mail.body.splitlines()[:lines]]
    return f"On {stamp}, {mail.author.address} wrote:\n" + "\n".join(quoted)


def replies(gen: Generator, mails: list[Mail], limit: int = 3) -> Iterator[Mail]:
    """Replies to some of `mails`, some of them replies to replies; with review tags."""
    rnd = gen.random
    for mail in mails:
        parent = mail
        for _ in range(rnd.choice(range(limit + 1))):
            reviewer = rnd.choice(gen.people)
            when = parent.date + timedelta(minutes=rnd.randint(5, 3000))
            comment = rnd.choice(PRONE) if rnd.random() < 0.5 else rnd.choice(DOUBTS)
            text = f"{quote(parent, rnd.randint(8, 30))}\n\n{wrap(comment + ' ' + gen.paragraph(rnd.randint(1, 3)))}\n"
            if mail.git and rnd.random() < 0.5:
                text += f"\n{rnd.choice(('Reviewed-by', 'Acked-by', 'Tested-by'))}: {reviewer.address}\n"
            subject = (
                parent.subject
                if parent.subject.startswith("Re: ")
                else f"Re: {parent.subject}"
            )
            references = (*parent.references, parent.message_id)[-8:]
            reply = Mail(
                reviewer,
                subject,
                gen.message_id(reviewer, when),
                when,
                text,
                parent,
                references,
            )
            yield reply
            if rnd.random() < 0.4:
                parent = reply


def threads(gen: Generator) -> Iterator[Mail]:
    """Every message of the archive, thread after thread, without end."""
    while True:
        roll = gen.random.random()
        if roll < 0.70:
            yield from series(gen)
        elif roll < 0.76:
            yield from pull_request(gen)
        else:
            yield from discussion(gen)


def received(gen: Generator, mail: Mail) -> list[str]:
    host = mail.author.email.split("@")[1]
    arrived = mail.date + timedelta(seconds=gen.random.randint(2, 90))
    relay = gen.random.randint(1, 254)
    return [
        "Received: from vger.kernel.org (vger.kernel.org [23.128.96.18])\n"
        f"\tby smtp.subspace.kernel.org (Postfix) with ESMTP id {gen.sha()[:10].upper()}\n"
        f"\tfor <linux-kernel@archiver.kernel.org>; {format_datetime(arrived)}",
        f"Received: from mail.{host} (mail.{host} [198.51.100.{relay}])\n"
        f"\tby vger.kernel.org with ESMTP id S{gen.random.getrandbits(40):X}\n"
        f"\tfor <{LIST_ADDRESS}>; {format_datetime(arrived - timedelta(seconds=1))}",
    ]


def render(gen: Generator, mail: Mail) -> bytes:
    """One mbox entry: the `From ` line, headers, blank line, escaped body."""
    to = gen.random.choice(gen.maintainers)
    headers = [
        f"From {mail.author.email} {mail.date.strftime('%a %b %d %H:%M:%S %Y')}",
        "Return-Path: <linux-kernel+bounces@vger.kernel.org>",
        *received(gen, mail),
        f"From: {mail.author.address}",
        f"To: {to.address}",
        f"Cc: {LIST_ADDRESS}",
        f"Subject: {mail.subject}",
        f"Date: {format_datetime(mail.date)}",
        f"Message-ID: <{mail.message_id}>",
    ]
    if mail.parent is not None:
        headers.append(f"In-Reply-To: <{mail.parent.message_id}>")
    if mail.references:
        headers.append(
            "References: " + "\n ".join(f"<{ref}>" for ref in mail.references)
        )
    if mail.git:
        headers.append("X-Mailer: git-send-email 2.43.0")
    headers += [
        "MIME-Version: 1.0",
        "Content-Type: text/plain; charset=UTF-8",
        "Content-Transfer-Encoding: 8bit",
        "Precedence: bulk",
        f"List-Id: <{LIST_ID}>",
        f"X-Mailing-List: {LIST_ADDRESS}",
    ]
    return entry(headers, mail.body.encode("utf-8"))


def entry(headers: list[str], body: bytes) -> bytes:
    """One mbox entry from its header lines (the `From ` line first) and body:
    body lines that would start a message escaped the mboxrd way."""
    head = "\n".join(headers).encode("utf-8", "surrogateescape")
    body = FROM_LINE.sub(lambda match: b">" + match.group(0), body)
    if not body.endswith(b"\n"):
        body += b"\n"
    return head + b"\n\n" + body + b"\n"


def write(out: BinaryIO, count: int, seed: int) -> int:
    """Write `count` messages to `out`; return the bytes written."""
    gen = Generator(seed)
    written = 0
    for number, mail in enumerate(threads(gen)):
        if number >= count:
            break
        entry = render(gen, mail)
        out.write(entry)
        written += len(entry)
    return written


def generate(path: Path, count: int, *, seed: int = 1) -> int:
    """Write a `count`-message mbox to `path` (same seed, same bytes); return bytes written."""
    with path.open("wb", buffering=1 << 20) as out:
        return write(out, count, seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="mbox file to write")
    parser.add_argument(
        "--count", type=int, default=100_000, help="messages (default 100000)"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    args = parser.parse_args(argv)
    written = generate(args.out, args.count, seed=args.seed)
    print(f"{args.count} messages, {written:,} bytes -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
