"""Feeding the full-text index from the store: in a child process during ingest, or in
place when a reader finds the index behind.

The index is derived: documents are built only from rows the store has committed, so
the index can lag behind the store but never run ahead of it. An `Indexer` follows the
store from the index's `IndexMark`: new messages by `seq`, other changes (a cross-post's
new list, a deletion, a reused seq) through the store's index journal. Whoever catches
up (the ingest's child, the next ingest, a search) reads the same mark and does the same
work, so a run that died anywhere leaves nothing that cannot be caught up exactly.

During `e2g ingest`, an `IndexProcess` runs the Indexer beside the parse workers and
the store writer, so that Whoosh (about a thousand documents per CPU-second) is off the
critical path. It is a plain subprocess (`python -m e2g.ingest.indexing`), not a
multiprocessing child, because its liveness must hold under every start method and no
queue or feeder thread may be left to block the exit:

- The ingest writes one byte ("more was committed") to the child's stdin after each
  store batch, without ever blocking (a full pipe already says it), and a final byte
  when the store is done. The child reads the store itself, so nothing but these bytes
  crosses the pipe and nothing can pile up in it.
- End of file on stdin means the ingest is gone (killed, or stopping after Ctrl-C): the
  child commits what it holds, which the store had already committed, and ends.
- The ingest sees the child's death at its next batch (a write to a closed pipe, or its
  exit status), starts it again once, and the new child catches up from the mark.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from e2g import errors, faults
from e2g.errors import notice
from e2g.index.fulltext import Fulltext, FulltextWriter, IndexDoc, IndexMark, read_mark
from e2g.index.schema import BODIES_KEY
from e2g.index.store import Store
from e2g.mail.subject import search_kind
from e2g.model import Kind
from e2g.model.stored import StoredMessage

log = logging.getLogger(__name__)

INDEX_COMMIT_EVERY = (
    50_000  # documents between full-text commits: each makes a final segment
)
LOCK_WAIT_SECONDS = 120.0  # a previous run's child may still be committing
STALL_SECONDS = 900.0  # a child whose index has not moved for this long is stuck
STOP_SECONDS = 60.0  # after Ctrl-C, how long the child may take to commit
RESTARTS = 1  # a child that dies is started again this many times per run
# Store batches before the child starts: a smaller ingest indexes in place at the
# end, since starting the child (~0.4 s of imports) costs more than the work.
SPAWN_AFTER = 2
MORE = b"m"  # ingest -> child: the store committed more
DONE = b"d"  # ingest -> child: the store is complete; catch up, commit and report


def index_doc(stored: StoredMessage, *, body: str | None) -> IndexDoc:
    """The full-text document of a stored message."""
    return IndexDoc(
        subject=stored.subject,
        author_name=stored.author_name,
        author_email=stored.author_email,
        lists=stored.lists,
        date=stored.date,
        kind=search_kind(stored.kind, stored.subject),
        version=stored.version,
        files=stored.files,
        body=body,
        seq=stored.seq,
        diff=stored.kind is Kind.PATCH,
    )


class Indexer:
    """Follows the store from the index's mark, committing the index in large steps."""

    def __init__(
        self, fulltext: Fulltext, store: Store, *, bodies: bool, wait: float = 0.0
    ) -> None:
        self._fulltext = fulltext
        self._store = store
        self._bodies = bodies
        self._wait = wait
        self._writer: FulltextWriter | None = None
        self._pending = 0
        self._mark = fulltext.mark()  # what the index holds once pending is committed
        self.indexed = 0

    def catch_up(self) -> None:
        """Add everything the store has committed past the mark (committing the
        index every INDEX_COMMIT_EVERY documents, not at the end)."""
        for stored in self._store.iter_messages(after_seq=self._mark.seq):
            self._add(stored)
            self._mark = IndexMark(stored.seq, self._mark.change)
        while changes := self._store.changes_after(self._mark.change):
            found = {
                stored.seq: stored
                for stored in self._store.by_seqs([seq for _, seq in changes])
            }
            for rev, seq in changes:
                changed = found.get(seq)
                if changed is None:
                    self._hold().delete(seq)
                    self._pending += 1
                elif changed.seq <= self._mark.seq:  # else the seq walk takes it
                    self._add(changed)
                self._mark = IndexMark(self._mark.seq, rev)

    def commit(self) -> None:
        """Make what was added durable, and the mark with it."""
        if self._writer is None:
            return
        faults.point("index.commit")
        self._writer.commit(self._mark)
        self.indexed += self._pending
        self._writer = None
        self._pending = 0

    def cancel(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            self._writer = None
            self._pending = 0

    def _add(self, stored: StoredMessage) -> None:
        body = self._store.body(stored.seq) if self._bodies else None
        self._hold().add(index_doc(stored, body=body))
        self._pending += 1
        if self._pending % 2000 == 0:
            faults.point("index.add")
        if self._pending >= INDEX_COMMIT_EVERY:
            self.commit()

    def _hold(self) -> FulltextWriter:
        if self._writer is None:
            self._writer = self._fulltext.writer(wait=self._wait)
        return self._writer


def catch_up(
    store_path: Path,
    index_dir: Path,
    *,
    bodies: bool,
    wait: float = 0.0,
) -> int:
    """Bring the index level with the store in this process; return documents indexed.
    Bodies are indexed when asked, or when the store's index holds them already.

    Raises IndexError_ when another process is still writing the index after `wait`
    seconds.
    """
    with Store(store_path) as store, Fulltext.open(index_dir) as fulltext:
        bodies = bodies or store.meta(BODIES_KEY) == "1"
        indexer = Indexer(fulltext, store, bodies=bodies, wait=wait)
        try:
            indexer.catch_up()
            indexer.commit()
        finally:
            indexer.cancel()
        return indexer.indexed


# --- the ingest's side ----------------------------------------------------------------


@dataclass(slots=True)
class IndexOutcome:
    indexed: int = 0  # documents committed by this run's children
    restarts: int = 0
    problem: str | None = None  # what went wrong with the child, if anything


class IndexProcess:
    """The index writer as a child process, nudged after each committed store batch
    (started at the SPAWN_AFTER-th; before that, `finish` indexes in place)."""

    def __init__(self, store_path: Path, index_dir: Path, *, bodies: bool) -> None:
        self._store_path = store_path
        self._bodies = bodies
        self._nudges = 0
        self._command = [
            sys.executable,
            "-m",
            __name__,
            str(store_path),
            str(index_dir),
            "1" if bodies else "0",
        ]
        self._index_dir = index_dir
        self.outcome = IndexOutcome()
        self._process: subprocess.Popen[bytes] | None = None
        try:  # so that readers meanwhile find an index, if behind
            Fulltext.open(index_dir).close()
        except errors.E2gError:
            pass  # broken: the store goes on, and the end of the run says what to do

    def nudge(self) -> None:
        """Say that the store committed more; never blocks, notices a dead child."""
        self._nudges += 1
        if self._nudges == SPAWN_AFTER:
            self._process = self._spawn()
        process = self._process
        if process is None:
            return
        if process.poll() is not None:
            self._lost(process)
            return
        try:
            os.write(_stdin(process).fileno(), MORE)
        except BlockingIOError:
            pass  # unread nudges are waiting already: the child will see this batch
        except BrokenPipeError:
            self._lost(process)

    def finish(self, progress: Callable[[IndexMark], None] | None = None) -> None:
        """Have the child index all the store committed, and wait until it has.

        The wait ends when the child does; a child that dies is restarted once, and one
        whose index stops moving for STALL_SECONDS is killed: the run always ends.
        """
        if self._nudges < SPAWN_AFTER:
            self._index_here()
            return
        while (process := self._process) is not None:
            if self._finish_one(process, progress):
                self._process = None
                return
            self._lost(process)

    def _index_here(self) -> None:
        try:
            self.outcome.indexed += catch_up(
                self._store_path,
                self._index_dir,
                bodies=self._bodies,
                wait=LOCK_WAIT_SECONDS,
            )
        except (errors.E2gError, OSError) as error:  # full disk: the store is kept
            self.outcome.problem = f"indexing failed: {error}"

    def stop(self) -> None:
        """Ctrl-C or an error: the child commits what it holds and ends (bounded)."""
        process, self._process = self._process, None
        if process is None:
            return
        _reap(process)
        self._collect(process)

    def _spawn(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [package_root, env.get("PYTHONPATH")])
        )
        # Its stderr comes back here: the one line it writes when it fails becomes part
        # of the run's own message, not a second error line on the terminal.
        process = subprocess.Popen(
            self._command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        os.set_blocking(_stdin(process).fileno(), False)
        return process

    def _lost(self, process: subprocess.Popen[bytes]) -> None:
        """The child died or failed: start another one once, else give up."""
        code = _reap(process)
        said = self._said(process)
        self._collect(process)
        problem = f"the full-text index process {_died(code)}{said}"
        if self.outcome.restarts < RESTARTS:
            self.outcome.restarts += 1
            notice.warning("%s; starting it again", problem)
            self._process = self._spawn()
            return
        self.outcome.problem = problem
        self._process = None

    def _finish_one(
        self,
        process: subprocess.Popen[bytes],
        progress: Callable[[IndexMark], None] | None,
    ) -> bool:
        if not _send(process, DONE):
            return False
        _close(_stdin(process))
        if not self._wait(process, progress):
            process.kill()
            process.wait()
            self.outcome.problem = (
                f"the full-text index did not move for {STALL_SECONDS:.0f} s"
            )
            self._collect(process)
            return True  # killed for good: no restart, the caller reports the lag
        return process.returncode == 0 and self._collect(process)

    def _wait(
        self,
        process: subprocess.Popen[bytes],
        progress: Callable[[IndexMark], None] | None,
    ) -> bool:
        """Wait for the child's exit while its index keeps moving; False if it stalls."""
        mark, moved = _peek_mark(self._index_dir), time.monotonic()
        while True:
            try:
                process.wait(timeout=1.0)
                return True
            except subprocess.TimeoutExpired:
                pass
            now = _peek_mark(self._index_dir)
            if now != mark:
                mark, moved = now, time.monotonic()
                if progress is not None and now is not None:
                    progress(now)
            elif time.monotonic() - moved > STALL_SECONDS:
                return False

    @staticmethod
    def _said(process: subprocess.Popen[bytes]) -> str:
        """The last line the child wrote on stderr (its error), if any."""
        stderr = process.stderr
        if stderr is None or stderr.closed:
            return ""
        try:
            lines = stderr.read().decode("utf-8", "replace").strip().splitlines()
        finally:
            stderr.close()
        if not lines:
            return ""
        return ": " + lines[-1].removeprefix("e2g: error: full-text index: ")[:300]

    def _collect(self, process: subprocess.Popen[bytes]) -> bool:
        """Read the child's report line; True when it said it finished."""
        if process.stderr is not None:
            process.stderr.close()
        stdout = process.stdout
        if stdout is None or stdout.closed:
            return False
        try:
            line = stdout.read()
        finally:
            stdout.close()
        try:
            report = json.loads(line or b"{}")
        except ValueError:
            return False
        self.outcome.indexed += int(report.get("indexed", 0))
        return bool(report.get("done"))


def _send(process: subprocess.Popen[bytes], data: bytes) -> bool:
    """Write `data` to the child, waiting while its pipe is full but never for a
    child that died or stopped reading for STALL_SECONDS; True once written."""
    descriptor = _stdin(process).fileno()
    deadline = time.monotonic() + STALL_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        try:
            os.write(descriptor, data)
            return True
        except BlockingIOError:
            select.select([], [descriptor], [], 1.0)
        except BrokenPipeError:
            return False
    return False


def _reap(process: subprocess.Popen[bytes]) -> int:
    """Close the child's stdin (it commits what it holds and ends) and wait for it,
    at most STOP_SECONDS; then kill it. Returns its exit status."""
    _close(_stdin(process))
    try:
        return process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()  # Whoosh commits atomically: a kill loses only this batch
        return process.wait()


def _stdin(process: subprocess.Popen[bytes]) -> IO[bytes]:
    assert process.stdin is not None
    return process.stdin


def _close(stream: IO[bytes]) -> None:
    try:
        stream.close()
    except (BrokenPipeError, BlockingIOError):
        pass


def _died(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"failed (exit status {code})"


def _peek_mark(index_dir: Path) -> IndexMark | None:
    try:
        return read_mark(index_dir)
    except errors.E2gError:
        return None


# --- the child's side ----------------------------------------------------------------


def serve(store_path: Path, index_dir: Path, *, bodies: bool) -> int:
    """The child: follow the store on each nudge until told it is done or orphaned."""
    # Ctrl-C reaches the whole process group; the ingest decides when this one stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with Store(store_path) as store, Fulltext.open(index_dir) as fulltext:
        indexer = Indexer(fulltext, store, bodies=bodies, wait=LOCK_WAIT_SECONDS)
        try:
            done = _follow(indexer)
            indexer.commit()
        finally:
            indexer.cancel()
    sys.stdout.write(json.dumps({"done": done, "indexed": indexer.indexed}) + "\n")
    sys.stdout.flush()
    return 0


def _follow(indexer: Indexer) -> bool:
    """Catch up on each nudge; True once the ingest says the store is complete,
    False when its end of the pipe closed first (it is gone or stopping)."""
    while True:
        faults.point("index.wait")
        data = os.read(sys.stdin.fileno(), 4096)
        if not data:
            return False
        indexer.catch_up()
        if DONE in data:
            return True


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        sys.stderr.write("usage: python -m e2g.ingest.indexing STORE INDEX_DIR 0|1\n")
        return 2
    try:
        return serve(Path(argv[0]), Path(argv[1]), bodies=argv[2] == "1")
    except errors.E2gError as error:
        sys.stderr.write(f"e2g: error: full-text index: {error}\n")
        return 1
    except Exception as error:
        if os.environ.get("E2G_DEBUG"):
            raise
        sys.stderr.write(
            f"e2g: error: full-text index: {type(error).__name__}: {error}\n"
        )
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
