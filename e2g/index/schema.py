"""SQLite schema of the store and its ordered forward migrations.

The store is the record: every message's parsed fields, its sightings (list, archive,
position), its raw bytes (zstd-compressed), ingest checkpoints, and the commit links the
matcher found. `PRAGMA user_version` holds the schema version; `migrate()` applies the
missing steps in order inside one transaction and refuses a store from a newer e2g.
"""

from __future__ import annotations

import sqlite3

from e2g.errors import StoreError

# Each entry moves the schema from version i to i+1. Never edit a released step:
# append a new one.
# Set by migration 3 on a store that already held files: the next `e2g ingest`
# computes their weights (pipeline.fill_file_weights) and removes it.
WEIGHTS_PENDING_KEY = "file_weights_pending"
# Set by migration 16 on a store that already held replies: the next `e2g ingest`
# reads their raw mail for a quoted patch (pipeline.fill_quoted_patches), keeps here
# the last seq it read, and removes it when done.
QUOTED_PENDING_KEY = "quoted_patches_pending"
# Set by migration 18 on a store that already held messages: their `process` column
# is not written yet. The next `e2g ingest` classifies them (pipeline.fill_process_kinds),
# keeps here the last seq it classified, and removes it when done; until then the
# readers of process mails classify what they read (api.trees).
PROCESS_PENDING_KEY = "process_kinds_pending"
BODIES_KEY = "index_bodies"  # the full-text index holds message bodies
# The highest seq ever deleted: SQLite may give it to the next new message, which
# then goes through the index journal too, since the index follows seqs upwards.
DELETED_SEQ_KEY = "deleted_seq_high"
# The highest id of a raw or diff block that was deleted (meta key per kind): a new
# block's id is above it, so an id names one block for the store's whole life and a
# reader's cache of blocks by id is never stale.
DELETED_BLOCK_KEY = "deleted_{kind}_blocks_high"
# The highest message seq the patch queue has read (e2g.api.queue.refresh): the next
# refresh reads the mail above it; absent, the queue is derived afresh from the store.
QUEUE_SEQ_KEY = "queue_seq"
# The trees tables' fingerprint the queue last read (Store.trees_fingerprint): when it
# moves, the applied patches' branches and releases are read again.
QUEUE_TREES_KEY = "queue_trees"
# The matched commits' fingerprint the queue last read (Store.commits_fingerprint):
# when it moves, which patches no matched repository holds is decided again.
QUEUE_COMMITS_KEY = "queue_commits"
# The version of the queue's rules and of the facts its rows keep, the queue was
# derived by (e2g.api.queue.refresh.VERSION): when it differs, the next refresh
# derives every patch again.
QUEUE_RULES_KEY = "queue_rules"

# A member of a lineage whose root joined another points at that root's root.
_REPOINT = """
    UPDATE series SET lineage = (SELECT p.lineage FROM series p WHERE p.id = series.lineage)
    WHERE lineage IN (SELECT id FROM series WHERE lineage IS NOT NULL);
"""

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

    CREATE TABLE messages (
        seq INTEGER PRIMARY KEY,
        message_id TEXT NOT NULL UNIQUE,
        synthetic INTEGER NOT NULL DEFAULT 0,
        subject TEXT NOT NULL,
        title TEXT NOT NULL,
        subject_key TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 1,
        part INTEGER,
        total INTEGER,
        rfc INTEGER NOT NULL DEFAULT 0,
        resend INTEGER NOT NULL DEFAULT 0,
        is_reply INTEGER NOT NULL DEFAULT 0,
        tags TEXT NOT NULL DEFAULT '',
        author_name TEXT NOT NULL,
        author_email TEXT NOT NULL,
        patch_author_name TEXT,
        patch_author_email TEXT,
        date INTEGER,
        date_raw TEXT NOT NULL,
        date_source TEXT NOT NULL,
        received_at INTEGER,
        list_id TEXT,
        in_reply_to TEXT,
        refs TEXT NOT NULL DEFAULT '',
        parent_id TEXT,
        thread_root TEXT NOT NULL,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,
        pull_url TEXT,
        pull_ref TEXT,
        patch_id TEXT,
        added INTEGER NOT NULL DEFAULT 0,
        removed INTEGER NOT NULL DEFAULT 0,
        series_id INTEGER
    );
    CREATE INDEX messages_subject_key ON messages(subject_key);
    CREATE INDEX messages_patch_id ON messages(patch_id) WHERE patch_id IS NOT NULL;
    CREATE INDEX messages_author_email ON messages(author_email);
    CREATE INDEX messages_patch_author ON messages(patch_author_email)
        WHERE patch_author_email IS NOT NULL;
    CREATE INDEX messages_date ON messages(date);
    CREATE INDEX messages_parent ON messages(parent_id);
    CREATE INDEX messages_thread_root ON messages(thread_root);
    CREATE INDEX messages_series ON messages(series_id);

    CREATE TABLE files (
        seq INTEGER NOT NULL REFERENCES messages(seq) ON DELETE CASCADE,
        path TEXT NOT NULL,
        old_path TEXT,
        status TEXT NOT NULL,
        binary INTEGER NOT NULL DEFAULT 0,
        added INTEGER NOT NULL DEFAULT 0,
        removed INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (seq, path)
    ) WITHOUT ROWID;
    CREATE INDEX files_path ON files(path);

    CREATE TABLE trailers (
        seq INTEGER NOT NULL REFERENCES messages(seq) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL
    );
    CREATE INDEX trailers_seq ON trailers(seq);

    CREATE TABLE sightings (
        seq INTEGER NOT NULL REFERENCES messages(seq) ON DELETE CASCADE,
        list TEXT NOT NULL,
        source TEXT NOT NULL,
        position TEXT NOT NULL,
        PRIMARY KEY (seq, list, source, position)
    ) WITHOUT ROWID;
    CREATE INDEX sightings_list ON sightings(list);

    CREATE TABLE zdicts (id INTEGER PRIMARY KEY, data BLOB NOT NULL);

    CREATE TABLE raw (
        seq INTEGER PRIMARY KEY REFERENCES messages(seq) ON DELETE CASCADE,
        dict_id INTEGER,
        data BLOB NOT NULL
    );

    CREATE TABLE diffs (
        seq INTEGER PRIMARY KEY REFERENCES messages(seq) ON DELETE CASCADE,
        dict_id INTEGER,
        data BLOB NOT NULL
    );

    CREATE TABLE series (
        id INTEGER PRIMARY KEY,
        cover_seq INTEGER,
        author_email TEXT NOT NULL,
        version INTEGER NOT NULL,
        total INTEGER,
        subject_key TEXT NOT NULL,
        first_date INTEGER,
        lineage INTEGER
    );
    CREATE INDEX series_lineage ON series(lineage);
    CREATE INDEX series_author ON series(author_email);

    CREATE TABLE checkpoints (
        source TEXT PRIMARY KEY,
        token TEXT,
        updated INTEGER NOT NULL
    );

    CREATE TABLE malformed (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        position TEXT NOT NULL,
        reason TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        UNIQUE (source, position)
    );

    CREATE TABLE links (
        commit_sha TEXT NOT NULL,
        repo TEXT NOT NULL,
        message_id TEXT NOT NULL,
        method TEXT NOT NULL,
        score REAL NOT NULL,
        applied INTEGER NOT NULL DEFAULT 0,
        evidence TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (repo, commit_sha, message_id)
    ) WITHOUT ROWID;
    CREATE INDEX links_message ON links(message_id);

    CREATE TABLE commits (
        repo TEXT NOT NULL,
        sha TEXT NOT NULL,
        subject TEXT NOT NULL,
        author_name TEXT NOT NULL,
        author_email TEXT NOT NULL,
        author_date INTEGER NOT NULL,
        commit_date INTEGER NOT NULL,
        files TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL,
        method TEXT,
        score REAL,
        matched_at_seq INTEGER NOT NULL,
        PRIMARY KEY (repo, sha)
    ) WITHOUT ROWID;
    """,
    # 2: the author map asks "this author's patches in a date window": index both.
    """
    DROP INDEX messages_author_email;
    DROP INDEX messages_patch_author;
    CREATE INDEX messages_author_date ON messages(author_email, date);
    CREATE INDEX messages_patch_author_date ON messages(patch_author_email, date)
        WHERE patch_author_email IS NOT NULL;
    """,
    # 3: each mail file's line weight (model.lines_weight), so the matcher can bound
    # a diff's similarity before reading it; NULL for mail stored before.
    f"""
    ALTER TABLE files ADD COLUMN weight REAL;
    INSERT INTO meta(key, value)
        SELECT '{WEIGHTS_PENDING_KEY}', '1' WHERE EXISTS (SELECT 1 FROM files);
    """,
    # 4: the full-text index follows new messages by `seq`; this journal holds the
    # other changes it must follow (a message that gained a list, a deletion, a
    # reused seq), written in the batch's transaction, so an index that died at any
    # point can tell exactly what it missed. Pruned once the index has them.
    """
    CREATE TABLE index_changes (
        rev INTEGER PRIMARY KEY AUTOINCREMENT,
        message_id TEXT NOT NULL
    );
    """,
    # 5: raw mail is compressed in blocks of consecutive messages, not one by one:
    # replies quote what came before and a series repeats its headers, which zstd
    # finds only within one frame (io-uring: 2.7x one by one, 4.2x in blocks of 64).
    # Rows stored before stay in `raw` and are read from there.
    """
    CREATE TABLE raw_blocks (
        id INTEGER PRIMARY KEY,
        dict_id INTEGER,
        data BLOB NOT NULL
    );
    CREATE TABLE raw_parts (
        seq INTEGER PRIMARY KEY REFERENCES messages(seq) ON DELETE CASCADE,
        block INTEGER NOT NULL REFERENCES raw_blocks(id),
        start INTEGER NOT NULL,
        size INTEGER NOT NULL
    );
    CREATE INDEX raw_parts_block ON raw_parts(block);
    """,
    # 6: a message's body (its commentary) is kept zstd-compressed apart from the
    # messages row: it was a third of the store, uncompressed, and read with every
    # row the matcher fetched, which never looks at it. Rows stored before keep
    # theirs in messages.body and are read from there.
    """
    CREATE TABLE bodies (
        seq INTEGER PRIMARY KEY REFERENCES messages(seq) ON DELETE CASCADE,
        dict_id INTEGER,
        data BLOB NOT NULL
    );
    """,
    # 7: nothing stored twice. A message's diff (kept in `diffs`, read per message
    # by the matcher) is cut out of its raw bytes where it occurs verbatim, and put
    # back when the raw bytes are read (diff_at: where). Its body is read from its
    # raw bytes where it occurs verbatim (body_at, body_size) instead of a `bodies`
    # row. On 200k messages built from git.git's history (benchmarks/scale.py) the
    # store went from 472 MB to 362 MB for a 482 MB mbox.
    """
    ALTER TABLE raw_parts ADD COLUMN diff_at INTEGER;
    ALTER TABLE raw_parts ADD COLUMN body_at INTEGER;
    ALTER TABLE raw_parts ADD COLUMN body_size INTEGER;
    """,
    # 8: where each message was seen names its list and archive once, in `places`,
    # not in every row: a public-inbox path or an mbox path and a list id were
    # ~115 bytes a row, twice (the table and its index on list), 8% of the io-uring
    # store and 1 GB at LKML's 4M messages. `sightings` stays, as a view, for reads.
    """
    CREATE TABLE places (
        id INTEGER PRIMARY KEY,
        list TEXT NOT NULL,
        source TEXT NOT NULL,
        UNIQUE (list, source)
    );
    CREATE TABLE seen (
        seq INTEGER NOT NULL REFERENCES messages(seq) ON DELETE CASCADE,
        place INTEGER NOT NULL REFERENCES places(id),
        position TEXT NOT NULL,
        PRIMARY KEY (seq, place, position)
    ) WITHOUT ROWID;
    INSERT INTO places(list, source)
        SELECT DISTINCT list, source FROM sightings ORDER BY list, source;
    INSERT INTO seen(seq, place, position)
        SELECT s.seq, p.id, s.position FROM sightings s
        JOIN places p ON p.list = s.list AND p.source = s.source;
    DROP TABLE sightings;
    CREATE VIEW sightings(seq, list, source, position) AS
        SELECT seen.seq, places.list, places.source, seen.position
        FROM seen JOIN places ON places.id = seen.place;
    """,
    # 9: no header a message row only repeated. In-Reply-To and References were kept
    # beside parent_id and thread_root, which are what threading reads, and nothing
    # read them back: the raw mail holds them. 17 MB of a 200k-message store (5%);
    # a store that migrates reuses the space for new rows (VACUUM returns it).
    """
    ALTER TABLE messages DROP COLUMN in_reply_to;
    ALTER TABLE messages DROP COLUMN refs;
    """,
    # 10: diffs are compressed in blocks of consecutive patches, not one by one
    # (store.DIFF_BLOCK_DIFFS says how many, and what it costs the matcher). Rows
    # stored before stay in `diffs` and are read from there.
    """
    CREATE TABLE diff_blocks (
        id INTEGER PRIMARY KEY,
        dict_id INTEGER,
        data BLOB NOT NULL
    );
    CREATE TABLE diff_parts (
        seq INTEGER PRIMARY KEY REFERENCES messages(seq) ON DELETE CASCADE,
        block INTEGER NOT NULL REFERENCES diff_blocks(id),
        start INTEGER NOT NULL,
        size INTEGER NOT NULL
    );
    CREATE INDEX diff_parts_block ON diff_parts(block);
    """,
    # 11: the index journal names a message by its seq, as the full-text index now
    # keys its documents (index format 6: a Message-ID term and stored field per
    # document were a third of the index). A deleted message's seq is known when it
    # is deleted, not later, so entries whose message is gone cannot be carried
    # over; they need not be: an index of format 5 is rebuilt, which reads the store
    # afresh. Revisions go on from where index_changes stopped.
    """
    CREATE TABLE index_journal (
        rev INTEGER PRIMARY KEY AUTOINCREMENT,
        seq INTEGER NOT NULL
    );
    INSERT INTO index_journal(rev, seq)
        SELECT c.rev, m.seq FROM index_changes c JOIN messages m USING (message_id);
    INSERT INTO sqlite_sequence(name, seq)
        SELECT 'index_journal', seq FROM sqlite_sequence WHERE name = 'index_changes'
        AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'index_journal');
    UPDATE sqlite_sequence SET seq = (
        SELECT MAX(seq) FROM sqlite_sequence
        WHERE name IN ('index_changes', 'index_journal')
    ) WHERE name = 'index_journal';
    DROP TABLE index_changes;
    """,
    # 12: no `title`: nothing read it back (the matcher compares `subject_key`, and
    # the title is `mail.subject.parse_subject(subject).title` should it be needed).
    # 49 bytes a row at 200k generated messages, 2.5% of the store.
    """
    ALTER TABLE messages DROP COLUMN title;
    """,
    # 13: each matched commit's own `git patch-id --stable` (NULL when match read no
    # diff: a commit older than the archive), written by `e2g match`, which has it
    # anyway. `e2g audit` compares it with each posted version's patch-id; reading
    # it back is what keeps an audit of git.git's 60,000 commits off git's diffs.
    """
    ALTER TABLE commits ADD COLUMN patch_id TEXT;
    """,
    # 14: trees (issue 26). Which named tree and branch reaches each commit
    # (`gone` once a rebase left it behind: kept as history, dropped from answers);
    # backport edges to the upstream commit and how they were found; and per
    # repository the first tag that contains each commit, with the tags already
    # walked, so a later run walks only new tags. Commits are found by sha (an
    # upstream named in a backport's message, in any repository) and by patch-id.
    """
    CREATE INDEX commits_sha ON commits(sha);
    CREATE INDEX commits_patch_id ON commits(patch_id) WHERE patch_id IS NOT NULL;
    CREATE TABLE tree_commits (
        repo TEXT NOT NULL,
        tree TEXT NOT NULL,
        branch TEXT NOT NULL,
        sha TEXT NOT NULL,
        gone INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (repo, tree, branch, sha)
    ) WITHOUT ROWID;
    CREATE INDEX tree_commits_sha ON tree_commits(sha);
    CREATE TABLE backports (
        repo TEXT NOT NULL,
        sha TEXT NOT NULL,
        upstream_repo TEXT NOT NULL,
        upstream_sha TEXT NOT NULL,
        how TEXT NOT NULL,
        PRIMARY KEY (repo, sha)
    ) WITHOUT ROWID;
    CREATE INDEX backports_upstream ON backports(upstream_sha);
    CREATE TABLE releases (
        repo TEXT NOT NULL,
        sha TEXT NOT NULL,
        tag TEXT NOT NULL,
        PRIMARY KEY (repo, sha)
    ) WITHOUT ROWID;
    CREATE TABLE release_tags (
        repo TEXT NOT NULL,
        tag TEXT NOT NULL,
        target TEXT NOT NULL,
        PRIMARY KEY (repo, tag)
    ) WITHOUT ROWID;
    """,
    # 15: the merge on a branch's first-parent line that brought each commit in
    # (NULL: committed on the branch itself), so `e2g link` names it without a walk;
    # and each branch's tip when it was recorded, so the next run walks only what
    # the branch gained since (git.git's master: 1.9 s for the whole history).
    """
    ALTER TABLE tree_commits ADD COLUMN merge TEXT;
    CREATE TABLE branch_tips (
        repo TEXT NOT NULL,
        tree TEXT NOT NULL,
        branch TEXT NOT NULL,
        tip TEXT NOT NULL,
        PRIMARY KEY (repo, tree, branch)
    ) WITHOUT ROWID;
    """,
    # 16: a reply that quotes a whole patch keeps that patch's patch-id (its kind
    # stays "reply"): the posting of a thread whose first mail the archive lacks.
    f"""
    INSERT INTO meta(key, value)
        SELECT '{QUOTED_PENDING_KEY}', '0'
        WHERE EXISTS (SELECT 1 FROM messages WHERE kind = 'reply');
    """,
    # 17: the stable team's X-stable: and X-stable-base: headers, which mark a mail
    # of the backport process whatever its subject says (e2g.mail.backport); NULL
    # for mail stored before (its subject still says what it is).
    """
    ALTER TABLE messages ADD COLUMN stable TEXT;
    ALTER TABLE messages ADD COLUMN stable_base TEXT;
    """,
    # 18: each mail's step of the backport process (e2g.mail.backport.process_kind of
    # its subject and X-stable:, written at ingest; NULL: none), so a backport's
    # process mails are an index lookup, not every mail of its title read and
    # classified (the original patch and its replies share the title). Mail stored
    # before is classified by the next ingest.
    f"""
    ALTER TABLE messages ADD COLUMN process TEXT;
    CREATE INDEX messages_process ON messages(subject_key) WHERE process IS NOT NULL;
    INSERT INTO meta(key, value)
        SELECT '{PROCESS_PENDING_KEY}', '0' WHERE EXISTS (SELECT 1 FROM messages);
    """,
    # 19: stored commits by subject: a plain cherry-pick onto a branch whose context
    # changed has another patch-id, and is found by its upstream's subject, author,
    # files and changed lines (e2g.api.copies).
    """
    CREATE INDEX commits_subject ON commits(subject);
    """,
    # 20: the patch queue (issue 35), derived by ingest, match and sync
    # (e2g.api.queue), read by `e2g patches`, the feeds and `e2g ty`. `queue` holds
    # one row per patch version: its lifecycle's facts (JSON), its mail state and its
    # state, with the columns the list view filters on. `queue_links` is the links
    # the queue last read, so a refresh knows which families `match` changed.
    # `events` is append-only: a refresh records a change against the stored row
    # (under the write lock, so two runs never both see the old state), so a rerun
    # adds nothing; '' for no value. A store that migrates derives
    # its queue at its next ingest or match (QUEUE_SEQ_KEY absent).
    """
    CREATE TABLE queue (
        seq INTEGER PRIMARY KEY REFERENCES messages(seq) ON DELETE CASCADE,
        message_id TEXT NOT NULL,
        series TEXT NOT NULL,
        list TEXT NOT NULL,
        date INTEGER,
        author_name TEXT NOT NULL,
        author_email TEXT NOT NULL,
        subject TEXT NOT NULL,
        version INTEGER NOT NULL,
        part INTEGER,
        total INTEGER,
        answer TEXT NOT NULL,
        mail_state TEXT NOT NULL,
        untracked TEXT NOT NULL,
        superseded_by TEXT NOT NULL,
        last_activity INTEGER,
        state TEXT NOT NULL,
        facts TEXT NOT NULL
    );
    CREATE INDEX queue_date ON queue(date);
    CREATE INDEX queue_state_date ON queue(state, date);
    CREATE INDEX queue_series ON queue(series);
    CREATE TABLE queue_links (
        repo TEXT NOT NULL,
        commit_sha TEXT NOT NULL,
        message_id TEXT NOT NULL,
        PRIMARY KEY (repo, commit_sha, message_id)
    ) WITHOUT ROWID;
    CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        found INTEGER NOT NULL,
        message_id TEXT NOT NULL,
        series TEXT NOT NULL,
        list TEXT NOT NULL,
        author_name TEXT NOT NULL,
        author_email TEXT NOT NULL,
        subject TEXT NOT NULL,
        from_state TEXT NOT NULL,
        to_state TEXT NOT NULL,
        commit_sha TEXT NOT NULL,
        tree TEXT NOT NULL,
        release TEXT NOT NULL
    );
    CREATE INDEX events_found ON events(found);
    CREATE INDEX events_message ON events(message_id, kind);
    """,
    # 21: a series' lineage no longer depends on the order mail was read in (a v2
    # read before its v1 started a lineage of its own: e2g.index.series). Each
    # lineage root with an older version of the same author and subject key joins
    # that version's lineage (always a lower version, so no cycle), its members are
    # pointed at the new root (a chain is at most as deep as versions go: four passes
    # reach v5), and the queue is derived afresh (QUEUE_SEQ_KEY removed): a v1 may
    # now be superseded.
    f"""
    UPDATE series SET lineage = (
        SELECT COALESCE(o.lineage, o.id) FROM series o
        WHERE o.author_email = series.author_email
          AND o.subject_key = series.subject_key AND o.version < series.version
        ORDER BY o.version DESC, o.id LIMIT 1)
    WHERE lineage IS NULL AND EXISTS (
        SELECT 1 FROM series o WHERE o.author_email = series.author_email
          AND o.subject_key = series.subject_key AND o.version < series.version);
    {_REPOINT * 4}
    DELETE FROM meta WHERE key = '{QUEUE_SEQ_KEY}';
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


def newer_schema(found: int) -> str:
    return (
        f"the store was written by a newer e2g (schema {found}, this e2g knows "
        f"{SCHEMA_VERSION}); upgrade e2g or use another --data-dir"
    )


def migrate(connection: sqlite3.Connection) -> int:
    """Bring the schema to SCHEMA_VERSION; return the version found before."""
    found = int(connection.execute("PRAGMA user_version").fetchone()[0])
    if found > SCHEMA_VERSION:
        raise StoreError(newer_schema(found))
    if found == SCHEMA_VERSION:
        return found
    for version, step in enumerate(MIGRATIONS[found:], start=found + 1):
        # One script per step: the DDL and the version bump commit together, so a
        # crash mid-migration leaves the previous version intact.
        connection.executescript(
            f"BEGIN IMMEDIATE;{step};PRAGMA user_version = {version};COMMIT;"
        )
    if found == 0:  # a new store: without the pages of tables its history dropped
        connection.execute("VACUUM")
    return found
