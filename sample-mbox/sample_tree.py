"""The sample repository's story: people, source files and commits.

Pure data plus one pure function (`apply_edits`); make_sample.py turns it into git
objects. Everything here is fictional: the people, the "frobnicator" project and the
example.org/example.com addresses. Used only by make_sample.py and sample_mail.py.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Person:
    name: str
    email: str

    @property
    def ident(self) -> str:
        return f"{self.name} <{self.email}>"


def at(text: str) -> datetime:
    """'2022-09-05 10:15:00 +0200' -> aware datetime (keeps the offset, as git does)."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S %z")


# --- people (all fictional) -------------------------------------------------------
PETER = Person("Peter Olsen", "polsen@example.org")  # maintainer in 2007
LINH = Person("Linh Tran", "linh@example.com")
HAL = Person("Hal Berger", "hal@example.org")
GRACE = Person("Grace Hopwood", "grace@example.org")  # maintainer from 2022
DMITRI = Person("Dmitri Volkov", "dmitri@example.com")
RAVI = Person("Ravi Narayan", "ravi@example.org")  # net reviewer
TOMASZ = Person("Tomasz Nowak", "tomasz@example.org")
KEIKO = Person("Keiko Tanaka", "keiko@example.com")
ALICE = Person("Alice Example", "alice@example.com")  # her domain has strict DMARC
PRIYA = Person("Priya Raman", "priya@example.org")
CHEN = Person("Chen Wei", "chen.wei@example.org")
BOB = Person("Bob Sender", "bob@example.com")  # sends Chen's patch for him
JOSE = Person("José Müller", "jose.mueller@example.com")
JOERG = Person("Jörg Schäfer", "joerg@example.com")
MARTA = Person("Marta Kowalczyk", "marta@example.com")
SAMIR = Person("Samir Haddad", "samir@example.com")
KURT = Person("Kurt Lindqvist", "kurt@example.com")
URSULA = Person("Ursula Upstream", "ursula@example.org")


# --- edits --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Write:
    """Create or overwrite a file."""

    path: str
    content: bytes | str


@dataclass(frozen=True, slots=True)
class Replace:
    """Replace `old` (which must occur exactly once) by `new` in a file."""

    path: str
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class Rename:
    old: str
    new: str


Edit = Write | Replace | Rename
Tree = dict[str, bytes]


def apply_edits(tree: Tree, edits: tuple[Edit, ...]) -> Tree:
    """Return a new tree with `edits` applied; a Replace that does not match is a bug."""
    result = dict(tree)
    for edit in edits:
        if isinstance(edit, Write):
            content = edit.content
            result[edit.path] = (
                content.encode() if isinstance(content, str) else content
            )
        elif isinstance(edit, Rename):
            result[edit.new] = result.pop(edit.old)
        else:
            text = result[edit.path].decode()
            if text.count(edit.old) != 1:
                raise ValueError(
                    f"{edit.path}: {edit.old!r} does not occur exactly once"
                )
            result[edit.path] = text.replace(edit.old, edit.new).encode()
    return result


@dataclass(frozen=True, slots=True)
class CommitSpec:
    """One commit of the main branch, and (when it differs) the version that was posted.

    The posted message is subject, body and the author's Signed-off-by; the applied
    message adds `trailers` (reviews, Link:), the maintainer's `note` and sign-off.
    """

    key: str
    author: Person
    committer: Person
    authored: datetime
    committed: datetime
    subject: str
    body: str
    edits: tuple[Edit, ...]
    trailers: tuple[str, ...] = ()
    note: str = ""
    posted_edits: tuple[Edit, ...] | None = None  # the posting's diff, if not `edits`
    posted_trailers: tuple[
        str, ...
    ] = ()  # in the posting and the commit (a sender's SoB)

    def posted_message(self) -> str:
        lines = [f"Signed-off-by: {self.author.ident}", *self.posted_trailers]
        return f"{self.subject}\n\n{self.body}\n\n" + "\n".join(lines) + "\n"

    def applied_message(self) -> str:
        lines = [
            f"Signed-off-by: {self.author.ident}",
            *self.posted_trailers,
            *self.trailers,
        ]
        if self.note:
            lines.append(self.note)
        if self.committer != self.author:
            lines.append(f"Signed-off-by: {self.committer.ident}")
        return f"{self.subject}\n\n{self.body}\n\n" + "\n".join(lines) + "\n"


def lore(message_id: str) -> str:
    return f"Link: https://lore.kernel.org/r/{message_id}"


def firmware_blob() -> bytes:
    """256 bytes that look like a firmware image: a header, then incompressible data."""
    payload = b""
    seed = b"frob rev B"
    while len(payload) < 240:
        seed = hashlib.sha256(seed).digest()
        payload += seed
    return b"FROBFW\x02\x00" + (240).to_bytes(4, "little") + b"\x00" * 4 + payload[:240]


# --- the tree of the first commit (2007) ------------------------------------------
README = """\
frobnicator
===========

A Linux driver for Frobco frobnication boards.

Build it against a kernel tree with "make", then load drivers/frob/frob.ko.
See Documentation/frob.txt for the user interface.

Mailing list: frob-users@lists.example.org
"""

DOC_TXT = """\
The frobnicator driver
----------------------

The frob driver exposes a Frobco frobnication board as the misc device
/dev/frob.  Reading the device returns the last frobnicated buffer;
the board is controlled with ioctls.

ioctls
------

FROB_IOC_GETSTATE (int, read)
	Returns the board state: 0 idle, 1 frobnicating, 2 error.

FROB_IOC_SETSPEED (int, write)
	Sets the frobnication speed in frobs per second (1..1000).

Module parameters
-----------------

None yet.

Bugs
----

Send reports to frob-users@lists.example.org.
"""

FROB_H = """\
#ifndef _FROB_H
#define _FROB_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define FROB_MAGIC		'F'
#define FROB_IOC_GETSTATE	_IOR(FROB_MAGIC, 1, int)
#define FROB_IOC_SETSPEED	_IOW(FROB_MAGIC, 2, int)

#define FROB_BUF_SIZE		256

struct frob_device {
	char buf[FROB_BUF_SIZE];
	size_t len;
	int state;
	int speed;
};

#endif /* _FROB_H */
"""

FROB_C = """\
/*
 * frob.c - driver for Frobco frobnication boards
 *
 * Copyright (C) 2007 Peter Olsen
 *
 * This program is free software; you can redistribute it and/or modify
 * it under the terms of the GNU General Public License version 2.
 */

#include <linux/module.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/uaccess.h>
#include "frob.h"

static struct frob_device frob_dev;

static ssize_t frob_read(struct file *file, char __user *buf,
\t\t\t size_t count, loff_t *ppos)
{
	size_t avail;

	if (*ppos > frob_dev.len)
		return 0;
	avail = frob_dev.len - *ppos;
	if (count > avail)
		count = avail;
	if (copy_to_user(buf, frob_dev.buf + *ppos, count))
		return -EFAULT;
	*ppos += count;
	return count;
}

static long frob_ioctl(struct file *file, unsigned int cmd,
\t\t       unsigned long arg)
{
	int __user *argp = (int __user *)arg;

	switch (cmd) {
	case FROB_IOC_GETSTATE:
		return put_user(frob_dev.state, argp);
	case FROB_IOC_SETSPEED:
		return get_user(frob_dev.speed, argp);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations frob_fops = {
	.owner		= THIS_MODULE,
	.read		= frob_read,
	.unlocked_ioctl	= frob_ioctl,
};

static struct miscdevice frob_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "frob",
	.fops	= &frob_fops,
};

static int __init frob_init(void)
{
	int ret;

	ret = misc_register(&frob_misc);
	if (ret)
		printk(KERN_ERR "frob: cannot register misc devcie\\n");
	return ret;
}

static void __exit frob_exit(void)
{
	misc_deregister(&frob_misc);
}

module_init(frob_init);
module_exit(frob_exit);
MODULE_LICENSE("GPL");
"""

FROB_ALLOC_H = """\
#ifndef _FROB_ALLOC_H
#define _FROB_ALLOC_H

#include <linux/types.h>

struct frob_pool {
	void **objs;
	size_t nr;
	size_t size;
};

int frob_pool_init(struct frob_pool *pool, size_t size);
void *frob_alloc(struct frob_pool *pool, size_t size);
void frob_pool_destroy(struct frob_pool *pool);

#endif /* _FROB_ALLOC_H */
"""

FROB_ALLOC_C = """\
/*
 * mm/frob_alloc.c - object pools for the frobnicator
 *
 * Copyright (C) 2007 Peter Olsen
 */

#include <linux/slab.h>
#include <linux/string.h>
#include "frob_alloc.h"

int frob_pool_init(struct frob_pool *pool, size_t size)
{
	pool->objs = kmalloc(size * sizeof(void *), GFP_KERNEL);
	if (!pool->objs)
		return -ENOMEM;
	memset(pool->objs, 0, size * sizeof(void *));
	pool->nr = 0;
	pool->size = size;
	return 0;
}

void *frob_alloc(struct frob_pool *pool, size_t size)
{
	void *obj;

	obj = kmalloc(size, GFP_KERNEL);
	if (!obj)
		return NULL;
	if (pool->nr >= pool->size)
		return NULL;
	pool->objs[pool->nr++] = obj;
	return obj;
}

void frob_pool_destroy(struct frob_pool *pool)
{
	int i;

	kfree(pool->objs);
	for (i = 0; i < pool->nr; i++)
		kfree(pool->objs[i]);
}
"""

FROBHASH_H = """\
#ifndef _FROBHASH_H
#define _FROBHASH_H

#include <linux/types.h>

u32 frobhash(const u8 *data, size_t len);
u32 frobhash_fold(u32 h, unsigned int bits);

#endif /* _FROBHASH_H */
"""

FROBHASH_C = """\
/*
 * lib/frobhash.c - a small hash for frob keys
 *
 * Copyright (C) 2007 Peter Olsen
 */

#include <linux/types.h>
#include "frobhash.h"

static inline u32 frobhash_mix(u32 h, u8 c)
{
	h ^= c;
	h = (h << 5) | (h >> 27);
	return h * 0x9e3779b1;
}

u32 frobhash(const u8 *data, size_t len)
{
	u32 h = 0x811c9dc5;
	size_t i;

	for (i = 0; i < len; i++)
		h = frobhash_mix(h, data[i]);
	return h;
}

u32 frobhash_fold(u32 h, unsigned int bits)
{
	return h >> (32 - bits);
}
"""

FROB_NET_H = """\
#ifndef _FROB_NET_H
#define _FROB_NET_H

#include <linux/netdevice.h>

struct frob_net_priv {
	struct net_device *dev;
	unsigned long rx_packets;
	unsigned long rx_dropped;
};

int frob_net_rx(struct frob_net_priv *priv, struct sk_buff *skb);

#endif /* _FROB_NET_H */
"""

FROB_NET_C = """\
/*
 * net/frob_net.c - network glue for frobnicator boards
 *
 * Copyright (C) 2007 Peter Olsen
 */

#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include "frob_net.h"

/* Hooks from the 2.4 driver; nothing calls them any more. */
struct frob_net_legacy_ops {
	int (*open)(struct frob_net_priv *priv);
	int (*close)(struct frob_net_priv *priv);
};

static struct frob_net_legacy_ops frob_net_legacy_ops;

int frob_net_rx(struct frob_net_priv *priv, struct sk_buff *skb)
{
	priv->rx_packets++;
	skb->dev = priv->dev;
	return netif_rx(skb);
}
"""

INITIAL_EDITS: tuple[Edit, ...] = (
    Write("README", README),
    Write("Makefile", "obj-y += drivers/frob/ lib/ mm/ net/\n"),
    Write("Documentation/frob.txt", DOC_TXT),
    Write("drivers/frob/Makefile", "obj-$(CONFIG_FROB) += frob.o\n"),
    Write("drivers/frob/frob.h", FROB_H),
    Write("drivers/frob/frob.c", FROB_C),
    Write("mm/frob_alloc.h", FROB_ALLOC_H),
    Write("mm/frob_alloc.c", FROB_ALLOC_C),
    Write("lib/frobhash.h", FROBHASH_H),
    Write("lib/frobhash.c", FROBHASH_C),
    Write("net/frob_net.h", FROB_NET_H),
    Write("net/frob_net.c", FROB_NET_C),
)


# --- Message-IDs that commits name in Link: trailers --------------------------------
MM_SERIES_IDS = tuple(
    f"20220905081500.4711-{n}-dmitri@example.com" for n in (1, 2, 3, 4)
)
HASH64_DISCUSSION_ID = "YxsN2d3mV0lk7Qp1@example.com"  # a question, not a patch posting

POOL_DESTROY_OLD = """\
void frob_pool_destroy(struct frob_pool *pool)
{
	int i;

	kfree(pool->objs);
	for (i = 0; i < pool->nr; i++)
		kfree(pool->objs[i]);
}
"""

ETHTOOL_COMMON = """\

int frob_net_get_sset_count(struct net_device *dev, int sset)
{
	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return FROB_NET_QUEUES * 2;
}

void frob_net_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	int i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < FROB_NET_QUEUES; i++) {
{strings}	}
}

void frob_net_get_ethtool_stats(struct net_device *dev,
				struct ethtool_stats *estats, u64 *data)
{
	struct frob_net_priv *priv = netdev_priv(dev);
	int i;

	for (i = 0; i < FROB_NET_QUEUES; i++) {
		*data++ = priv->rxq[i].packets;
		*data++ = priv->rxq[i].bytes;
	}
}
"""

STRINGS_V1 = """\
		sprintf(data, "rx_queue_%d_packets", i);
		data += ETH_GSTRING_LEN;
		sprintf(data, "rx_queue_%d_bytes", i);
		data += ETH_GSTRING_LEN;
"""

STRINGS_V2 = """\
		ethtool_sprintf(&data, "rx_queue_%d_packets", i);
		ethtool_sprintf(&data, "rx_queue_%d_bytes", i);
"""

ETHTOOL_DECLS = """\
int frob_net_rx(struct frob_net_priv *priv, struct sk_buff *skb);
void frob_net_count_rx(struct frob_net_priv *priv, unsigned int queue,
\t\t       unsigned int len);
"""


def ethtool_edits(strings: str) -> tuple[Edit, ...]:
    """Keiko's 2/2: v1 and v2 differ only in how the stat names are written."""
    return (
        Replace(
            "net/frob_stats.c",
            "#include <linux/netdevice.h>\n",
            "#include <linux/ethtool.h>\n#include <linux/netdevice.h>\n",
        ),
        Replace(
            "net/frob_stats.c",
            "\tstats->bytes += len;\n}\n",
            "\tstats->bytes += len;\n}\n"
            + ETHTOOL_COMMON.replace("{strings}", strings),
        ),
        Replace(
            "net/frob_net.h",
            ETHTOOL_DECLS,
            ETHTOOL_DECLS
            + "int frob_net_get_sset_count(struct net_device *dev, int sset);\n"
            "void frob_net_get_strings(struct net_device *dev, u32 sset, u8 *data);\n"
            "void frob_net_get_ethtool_stats(struct net_device *dev,\n"
            "\t\t\t\tstruct ethtool_stats *estats, u64 *data);\n",
        ),
    )


FROB_STATS_C = """\
/*
 * net/frob_stats.c - per-queue statistics for frobnicator boards
 */

#include <linux/netdevice.h>
#include "frob_net.h"

void frob_net_count_rx(struct frob_net_priv *priv, unsigned int queue,
\t\t       unsigned int len)
{
	struct frob_net_queue_stats *stats = &priv->rxq[queue % FROB_NET_QUEUES];

	stats->packets++;
	stats->bytes += len;
}
"""


def _c(
    key: str,
    author: Person,
    authored: str,
    committed: str,
    subject: str,
    body: str,
    edits: tuple[Edit, ...],
    *,
    trailers: tuple[str, ...] = (),
    note: str = "",
    posted_edits: tuple[Edit, ...] | None = None,
    posted_trailers: tuple[str, ...] = (),
) -> CommitSpec:
    """A commit; 2007 commits were applied by Peter, the later ones by Grace."""
    return CommitSpec(
        key=key,
        author=author,
        committer=PETER if authored.startswith("2007") else GRACE,
        authored=at(authored),
        committed=at(committed),
        subject=subject,
        body=body.strip("\n"),
        edits=edits,
        trailers=trailers,
        note=note,
        posted_edits=posted_edits,
        posted_trailers=posted_trailers,
    )


COMMITS: tuple[CommitSpec, ...] = (
    _c(
        "initial",
        PETER,
        "2007-02-20 21:04:13 +0100",
        "2007-02-20 21:04:13 +0100",
        "Initial import of the frobnicator driver",
        """
This is the driver as it has been kept out of tree since 2005, updated
for linux-2.6.20: the misc device, the object pools, the key hash and
the network glue.
""",
        INITIAL_EDITS,
    ),
    _c(
        "read-eof",
        LINH,
        "2007-03-05 09:12:44 +0100",
        "2007-03-06 18:30:00 +0100",
        "frob: fix off-by-one in frob_read()",
        """
frob_read() only returns end of file when *ppos is past the end of the
buffer.  A read that starts exactly at the end goes on to copy zero
bytes from frob_dev.buf + len, which is one past the last valid byte
when the buffer is full.  Compare with >= so that such a read returns 0
straight away.
""",
        (
            Replace(
                "drivers/frob/frob.c",
                "if (*ppos > frob_dev.len)",
                "if (*ppos >= frob_dev.len)",
            ),
        ),
    ),
    _c(
        "reset-ioctl",
        PETER,
        "2007-03-14 22:41:09 +0100",
        "2007-03-20 20:10:00 +0100",
        "frob: add FROB_IOC_RESET ioctl",
        """
Boards that hit an error stay in state 2 until the module is reloaded.
Add an ioctl that clears the buffer and puts the board back to idle, so
that frobd can recover without root unloading the driver.
""",
        (
            Replace(
                "drivers/frob/frob.h",
                "_IOW(FROB_MAGIC, 2, int)\n",
                "_IOW(FROB_MAGIC, 2, int)\n#define FROB_IOC_RESET\t\t_IO(FROB_MAGIC, 3)\n",
            ),
            Replace(
                "drivers/frob/frob.c",
                "static long frob_ioctl(",
                "static void frob_reset(struct frob_device *dev)\n{\n"
                "\tmemset(dev->buf, 0, sizeof(dev->buf));\n\tdev->len = 0;\n"
                "\tdev->state = 0;\n}\n\nstatic long frob_ioctl(",
            ),
            Replace(
                "drivers/frob/frob.c",
                "\t\treturn get_user(frob_dev.speed, argp);\n",
                "\t\treturn get_user(frob_dev.speed, argp);\n\tcase FROB_IOC_RESET:\n"
                "\t\tfrob_reset(&frob_dev);\n\t\treturn 0;\n",
            ),
            Replace(
                "Documentation/frob.txt",
                "(1..1000).\n",
                "(1..1000).\n\nFROB_IOC_RESET (none)\n"
                "\tClears the buffer and returns the board to the idle state.\n",
            ),
        ),
    ),
    _c(
        "doc-rst",
        GRACE,
        "2022-08-29 14:02:11 +0200",
        "2022-08-31 09:00:00 +0200",
        "Documentation: frob: convert frob.txt to reST",
        """
Move the driver documentation to reStructuredText so that it can be
built with the rest of the documentation: proper section headings and
literal markup for the device name.  No change to the content.
""",
        (
            Rename("Documentation/frob.txt", "Documentation/frob.rst"),
            Replace(
                "Documentation/frob.rst",
                "The frobnicator driver\n----------------------\n",
                ".. SPDX-License-Identifier: GPL-2.0\n\n======================\n"
                "The frobnicator driver\n======================\n",
            ),
            Replace("Documentation/frob.rst", "\n/dev/frob.  ", "\n``/dev/frob``.  "),
            Replace("Documentation/frob.rst", "ioctls\n------\n", "ioctls\n======\n"),
            Replace(
                "Documentation/frob.rst",
                "Module parameters\n-----------------\n",
                "Module parameters\n=================\n",
            ),
            Replace("Documentation/frob.rst", "Bugs\n----\n", "Bugs\n====\n"),
            Replace("README", "Documentation/frob.txt", "Documentation/frob.rst"),
        ),
    ),
    _c(
        "mm-leak",
        DMITRI,
        "2022-09-02 16:01:37 +0200",
        "2022-09-14 09:00:00 +0200",
        "mm: fix leak in frob_alloc()",
        """
frob_alloc() allocates the object before it checks whether the pool has
room for it, and returns NULL without freeing the object when the pool
is full.  Free it on that path.
""",
        (
            Replace(
                "mm/frob_alloc.c",
                "\tif (pool->nr >= pool->size)\n\t\treturn NULL;\n",
                "\tif (pool->nr >= pool->size) {\n\t\tkfree(obj);\n\t\treturn NULL;\n\t}\n",
            ),
        ),
        trailers=(
            f"Reviewed-by: {RAVI.ident}",
            f"Tested-by: {TOMASZ.ident}",
            lore(MM_SERIES_IDS[1]),
        ),
    ),
    _c(
        "mm-kcalloc",
        DMITRI,
        "2022-09-02 16:20:05 +0200",
        "2022-09-14 09:00:01 +0200",
        "mm: use kcalloc() in frob_pool_init()",
        """
kcalloc() zeroes the table and checks the multiplication for overflow,
which the open-coded kmalloc() + memset() does not.
""",
        (
            Replace(
                "mm/frob_alloc.c",
                "\tpool->objs = kmalloc(size * sizeof(void *), GFP_KERNEL);\n"
                "\tif (!pool->objs)\n\t\treturn -ENOMEM;\n"
                "\tmemset(pool->objs, 0, size * sizeof(void *));\n",
                "\tpool->objs = kcalloc(size, sizeof(void *), GFP_KERNEL);\n"
                "\tif (!pool->objs)\n\t\treturn -ENOMEM;\n",
            ),
        ),
        trailers=(f"Tested-by: {TOMASZ.ident}", lore(MM_SERIES_IDS[2])),
    ),
    _c(
        "mm-array",
        DMITRI,
        "2022-09-05 09:40:52 +0200",
        "2022-09-14 09:00:02 +0200",
        "mm: add frob_alloc_array() with overflow check",
        """
Callers in net/ compute n * size by hand before calling frob_alloc().
Give them a helper that refuses products that overflow size_t.
""",
        (
            Replace(
                "mm/frob_alloc.c",
                "#include <linux/slab.h>\n",
                "#include <linux/overflow.h>\n#include <linux/slab.h>\n",
            ),
            Replace(
                "mm/frob_alloc.c",
                "\treturn obj;\n}\n",
                "\treturn obj;\n}\n\nvoid *frob_alloc_array(struct frob_pool *pool, size_t n, size_t size)\n"
                "{\n\tsize_t bytes;\n\n\tif (check_mul_overflow(n, size, &bytes))\n"
                "\t\treturn NULL;\n\treturn frob_alloc(pool, bytes);\n}\n",
            ),
            Replace(
                "mm/frob_alloc.h",
                "size_t size);\nvoid frob_pool_destroy",
                "size_t size);\nvoid *frob_alloc_array(struct frob_pool *pool, size_t n, size_t size);\n"
                "void frob_pool_destroy",
            ),
        ),
        trailers=(f"Tested-by: {TOMASZ.ident}", lore(MM_SERIES_IDS[3])),
    ),
    _c(
        "fw-revb",
        TOMASZ,
        "2022-09-07 11:20:00 +0200",
        "2022-09-14 09:05:00 +0200",
        "drivers/frob: add firmware for rev B boards",
        """
Rev B boards need a firmware image at probe time.  Frobco has released
it under a redistributable licence; add it next to the driver and tell
modinfo about it.
""",
        (
            Write("drivers/frob/firmware.bin", firmware_blob()),
            Replace(
                "drivers/frob/frob.c",
                'MODULE_LICENSE("GPL");\n',
                'MODULE_LICENSE("GPL");\nMODULE_FIRMWARE("frob/firmware.bin");\n',
            ),
        ),
    ),
    _c(
        "net-null",
        ALICE,
        "2022-09-07 15:47:30 +0200",
        "2022-09-14 09:10:00 +0200",
        "net: frob: fix NULL dereference in frob_net_rx()",
        """
When the DMA ring underruns, the interrupt handler calls frob_net_rx()
with a NULL skb, which is dereferenced right away.  Count the packet as
dropped instead.
""",
        (
            Replace(
                "net/frob_net.c",
                "{\n\tpriv->rx_packets++;\n",
                "{\n\tif (unlikely(!skb)) {\n\t\tpriv->rx_dropped++;\n"
                "\t\treturn NET_RX_DROP;\n\t}\n\tpriv->rx_packets++;\n",
            ),
        ),
    ),
    _c(
        "mm-uaf",
        PRIYA,
        "2022-09-08 10:05:00 +0530",
        "2022-09-15 10:00:00 +0200",
        "mm: fix use-after-free in frob_pool_destroy()",
        """
frob_pool_destroy() frees the object table and then walks it to free
the objects.  Free the objects first.
""",
        (
            Replace(
                "mm/frob_alloc.c",
                POOL_DESTROY_OLD,
                POOL_DESTROY_OLD.replace("\tint i;\n", "\tsize_t i;\n")
                .replace("\tkfree(pool->objs);\n", "")
                .replace("objs[i]);\n", "objs[i]);\n\tkfree(pool->objs);\n"),
            ),
        ),
        note="[grace: use size_t for the loop counter, as pool->nr is a size_t]",
        posted_edits=(
            Replace(
                "mm/frob_alloc.c",
                POOL_DESTROY_OLD,
                POOL_DESTROY_OLD.replace("\tkfree(pool->objs);\n", "").replace(
                    "objs[i]);\n", "objs[i]);\n\tkfree(pool->objs);\n"
                ),
            ),
        ),
    ),
    _c(
        "net-legacy",
        CHEN,
        "2022-09-08 17:12:00 +0800",
        "2022-09-15 10:05:00 +0200",
        "net: frob: remove unused frob_net_legacy_ops",
        """
Nothing has used the 2.4-era hooks since the driver moved to the misc
device, and gcc warns about the unused static variable.  Remove them.
""",
        (
            Replace(
                "net/frob_net.c",
                FROB_NET_C[
                    FROB_NET_C.index("/* Hooks") : FROB_NET_C.index("int frob_net_rx")
                ],
                "",
            ),
        ),
        posted_trailers=(f"Signed-off-by: {BOB.ident}",),
    ),
    _c(
        "hash-rol",
        JOSE,
        "2022-09-12 09:30:00 +0200",
        "2022-09-15 10:10:00 +0200",
        "lib: frobhash: use rol32() instead of open-coding it",
        """
frobhash_mix() open-codes a 32-bit rotate.  Use rol32(), which says what
it does.

From the disassembly, gcc already emits a single rotate instruction for
the open-coded version, so this is no functional change.
""",
        (
            Replace(
                "lib/frobhash.c",
                "#include <linux/types.h>\n",
                "#include <linux/bitops.h>\n#include <linux/types.h>\n",
            ),
            Replace(
                "lib/frobhash.c",
                "\th = (h << 5) | (h >> 27);\n",
                "\th = rol32(h, 5);\n",
            ),
        ),
    ),
    _c(
        "net-stats",
        KEIKO,
        "2022-09-06 08:00:00 +0900",
        "2022-09-16 09:00:00 +0200",
        "net: frob: add per-queue rx counters",
        """
The board has four rx queues, but the driver only keeps global counters,
which makes it hard to see when one queue is starved.  Count packets and
bytes per queue.
""",
        (
            Write("net/frob_stats.c", FROB_STATS_C),
            Replace(
                "net/frob_net.h",
                "struct frob_net_priv {\n",
                "#define FROB_NET_QUEUES\t4\n\nstruct frob_net_queue_stats {\n"
                "\tu64 packets;\n\tu64 bytes;\n};\n\nstruct frob_net_priv {\n",
            ),
            Replace(
                "net/frob_net.h",
                "\tunsigned long rx_dropped;\n",
                "\tunsigned long rx_dropped;\n\tstruct frob_net_queue_stats rxq[FROB_NET_QUEUES];\n",
            ),
            Replace(
                "net/frob_net.h",
                "int frob_net_rx(struct frob_net_priv *priv, struct sk_buff *skb);\n",
                ETHTOOL_DECLS,
            ),
        ),
        trailers=(f"Acked-by: {RAVI.ident}",),
    ),
    _c(
        "net-ethtool",
        KEIKO,
        "2022-09-06 08:30:00 +0900",
        "2022-09-16 09:00:01 +0200",
        "net: frob: report per-queue counters via ethtool",
        """
Expose the per-queue counters as ethtool statistics, named
rx_queue_<n>_packets and rx_queue_<n>_bytes like other drivers do.
""",
        ethtool_edits(STRINGS_V2),
        trailers=(f"Acked-by: {RAVI.ident}",),
        posted_edits=ethtool_edits(STRINGS_V1),
    ),
    _c(
        "probe-typo",
        JOERG,
        "2022-09-13 13:13:13 +0200",
        "2022-09-19 09:00:00 +0200",
        "drivers/frob: fix typo in registration error message",
        """
"devcie" -> "device".
""",
        (Replace("drivers/frob/frob.c", "misc devcie", "misc device"),),
    ),
    _c(
        "hash-fold",
        MARTA,
        "2022-09-14 08:44:00 +0200",
        "2022-09-19 09:05:00 +0200",
        "lib: frobhash: avoid undefined shift in frobhash_fold()",
        """
frobhash_fold(h, 0) shifts a u32 right by 32, which is undefined
behaviour; UBSAN reports it when a net table is configured with zero
hash bits.  Return 0 for an empty table instead.
""",
        (
            Replace(
                "lib/frobhash.c",
                "{\n\treturn h >> (32 - bits);\n",
                "{\n\tif (!bits)\n\t\treturn 0;\n\treturn h >> (32 - bits);\n",
            ),
        ),
    ),
    _c(
        "pool-pow2",
        SAMIR,
        "2022-09-14 19:02:00 +0100",
        "2022-09-19 09:10:00 +0200",
        "mm: round frob pool size up to a power of two",
        """
The rev B board indexes the object table with a mask.  A pool whose size
is not a power of two makes it read past the end of the table.
""",
        (
            Replace(
                "mm/frob_alloc.c",
                "#include <linux/overflow.h>\n",
                "#include <linux/log2.h>\n#include <linux/overflow.h>\n",
            ),
            Replace(
                "mm/frob_alloc.c",
                "size_t size)\n{\n\tpool->objs",
                "size_t size)\n{\n\t/* Rev B boards index the object table with (size - 1): keep size == 2^n. */\n"
                "\tsize = roundup_pow_of_two(size);\n\tpool->objs",
            ),
        ),
    ),
    _c(
        "hash64",
        GRACE,
        "2022-09-20 11:00:00 +0200",
        "2022-09-20 11:00:00 +0200",
        "lib: frobhash: add frobhash64()",
        """
The net side wants 64-bit hashes for flow keys.  Add an FNV-1a based
frobhash64(); it is not compatible with frobhash() and is not meant to
be.
""",
        (
            Replace(
                "lib/frobhash.c",
                "\treturn h;\n}\n\nu32 frobhash_fold",
                "\treturn h;\n}\n\nu64 frobhash64(const u8 *data, size_t len)\n{\n"
                "\tu64 h = 0xcbf29ce484222325ULL;\n\tsize_t i;\n\n"
                "\tfor (i = 0; i < len; i++) {\n\t\th ^= data[i];\n"
                "\t\th *= 0x100000001b3ULL;\n\t}\n\treturn h;\n}\n\nu32 frobhash_fold",
            ),
            Replace(
                "lib/frobhash.h",
                "size_t len);\n",
                "size_t len);\nu64 frobhash64(const u8 *data, size_t len);\n",
            ),
        ),
        trailers=(f"Suggested-by: {DMITRI.ident}", lore(HASH64_DISCUSSION_ID)),
    ),
)

COMMIT_BY_KEY = {spec.key: spec for spec in COMMITS}
TAG = "frob-for-6.1"
TAG_MESSAGE = """\
frobnicator changes for 6.1

- fix a leak and a use-after-free in the object pools, and add
  frob_alloc_array()
- per-queue rx statistics, reported through ethtool
- firmware for rev B boards
- frobhash64() and two frobhash fixes
- assorted small fixes
"""
TAG_DATE = at("2022-09-26 10:00:00 +0200")
