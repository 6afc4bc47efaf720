"""Ingest throughput and peak memory of e2g, side by side with `notmuch new`.

Owns the ingest benchmark: for each archive (a generated kernel-list mbox of `--count`
messages, and the real linux-sparse archive when it is present) it runs

    python -m e2g --data-dir D -q ingest --json ARCHIVE

in a fresh data dir, then converts the same archive to a Maildir (not timed) and runs
`notmuch new --quiet` on a fresh notmuch database. Each command runs as a child process
and is measured from outside:

- wall time, and user+system CPU time of the whole process tree;
- peak RSS of the largest single process, from `os.wait4`'s rusage of that child (Linux
  folds reaped grandchildren into it: it is the max over the tree, per process, exactly
  what `RUSAGE_CHILDREN` would give for this child alone, without the earlier runs'
  maxima mixed in);
- peak RSS of the whole tree (the sum over the process and its descendants, polled from
  /proc at about 20 Hz). Forked workers share pages, so the sum over-counts: it is an
  upper bound.

Messages/s use the number of messages in the archive (the Maildir conversion counts
them); MB/s use the uncompressed archive size. The ratio is e2g's messages/s over
notmuch's. Targets (issue): ratio >= 2 and peak RSS < 1 GiB.

    python benchmarks/ingest.py [--count 100000] [--sparse PATH] [--skip-notmuch]
                                [--workdir DIR] [--index-bodies] [--jobs N] [--json]

Results go to stdout (a table, or one JSON object per archive with --json); progress
notes go to stderr.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SPARSE = REPO.parent / "shared" / "corpus" / "sparse" / "linux-sparse.mbox.gz"
NOTMUCH = "notmuch"
POLL_SECONDS = 0.05  # 20 Hz
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
GIB = 1 << 30
MIB = 1 << 20
TARGET_RATIO = 2.0
HEADER = re.compile(rb"^[!-9;-~]+:")  # a header field name and its colon


@dataclass(frozen=True, slots=True)
class Measured:
    """One measured child-process run."""

    seconds: float
    cpu_seconds: float
    peak_process_rss: int  # bytes, largest single process of the tree
    peak_tree_rss: int  # bytes, largest polled sum over the tree
    returncode: int
    stdout: str
    stderr: str
    load: float  # the 1-minute load average at the end: other work on the machine


@dataclass(frozen=True, slots=True)
class Archive:
    name: str
    path: Path  # what e2g ingests (may be compressed)
    plain: Path  # the uncompressed mbox, for the Maildir conversion
    messages: int
    size: int  # uncompressed bytes


@dataclass(frozen=True, slots=True)
class Result:
    archive: str
    messages: int
    megabytes: float
    e2g_seconds: float | None = None
    e2g_cpu_seconds: float | None = None
    e2g_messages_per_second: float | None = None
    e2g_megabytes_per_second: float | None = None
    e2g_peak_process_rss: int | None = None
    e2g_peak_tree_rss: int | None = None
    e2g_load: float | None = None
    e2g_report: dict[str, object] | None = None
    e2g_error: str | None = None
    notmuch_seconds: float | None = None
    notmuch_cpu_seconds: float | None = None
    notmuch_messages_per_second: float | None = None
    notmuch_peak_process_rss: int | None = None
    notmuch_peak_tree_rss: int | None = None
    notmuch_load: float | None = None
    notmuch_indexed: int | None = None
    notmuch_error: str | None = None
    ratio: float | None = None
    cpu_ratio: float | None = (
        None  # the same, per CPU second instead of per wall second
    )


def note(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


# --- measuring a process tree ------------------------------------------------------


def _parents() -> dict[int, list[int]]:
    """Children of every live process, from /proc/*/stat."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue  # gone between listing and reading
        # comm may hold spaces and parentheses: the fields follow the last ")".
        fields = stat.rsplit(")", 1)[1].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def tree_rss(root: int) -> int:
    """Resident bytes of `root` and all its descendants (iterative walk)."""
    children = _parents()
    total = 0
    pending = [root]
    while pending:
        pid = pending.pop()
        pending.extend(children.get(pid, ()))
        try:
            resident = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        total += resident * PAGE_SIZE
    return total


class TreePoller:
    """Samples the tree RSS of one process at POLL_SECONDS until stopped."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, tree_rss(self.pid))
            if self._stop.wait(POLL_SECONDS):
                return

    def __enter__(self) -> TreePoller:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def measure(argv: list[str], *, env: dict[str, str], logs: Path) -> Measured:
    """Run `argv` to completion; time it and its peak memory from outside."""
    logs.mkdir(parents=True, exist_ok=True)
    out_path, err_path = logs / "stdout", logs / "stderr"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        with TreePoller(process.pid) as poller:
            # wait4, not Popen.wait: it returns this child's own rusage.
            _, status, usage = os.wait4(process.pid, 0)
            seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
    return Measured(
        seconds=seconds,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        peak_process_rss=usage.ru_maxrss * 1024,  # Linux reports KiB
        peak_tree_rss=poller.peak,
        returncode=process.returncode,
        stdout=out_path.read_text(errors="replace"),
        stderr=err_path.read_text(errors="replace"),
        load=os.getloadavg()[0],
    )


# --- archives ------------------------------------------------------------------------


def _generator() -> ModuleType:
    """benchmarks/gen_archive.py, loaded by path (benchmarks/ is not a package)."""
    path = Path(__file__).with_name("gen_archive.py")
    spec = importlib.util.spec_from_file_location("e2g_bench_gen_archive", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def generated_archive(workdir: Path, count: int, seed: int) -> Archive:
    """The generated mbox, reused from an earlier run in the same workdir."""
    path = workdir / f"generated-{count}-seed{seed}.mbox"
    done = path.with_suffix(".done")
    if not (
        done.exists() and path.exists() and int(done.read_text()) == path.stat().st_size
    ):
        note(f"generating {count:,} messages -> {path}")
        started = time.perf_counter()
        size = _generator().generate(path, count, seed=seed)
        done.write_text(str(size))
        note(f"generated {size / 1e6:,.1f} MB in {time.perf_counter() - started:.1f} s")
    messages = count_messages(path)
    return Archive(f"generated-{count}", path, path, messages, path.stat().st_size)


def sparse_archive(workdir: Path, path: Path) -> Archive:
    """The real archive; decompressed once into the workdir for the Maildir."""
    plain = workdir / path.name.removesuffix(".gz")
    if path.suffix == ".gz":
        if not plain.exists():
            note(f"decompressing {path} -> {plain}")
            with gzip.open(path, "rb") as source, plain.open("wb") as target:
                shutil.copyfileobj(source, target, 1 << 20)
    else:
        plain = path
    return Archive(path.name, path, plain, count_messages(plain), plain.stat().st_size)


def split_mbox(stream: BinaryIO) -> Iterator[bytes]:
    """Messages of an mbox(rd) stream, one at a time, unquoted, without `From ` lines.

    A separator is a `From ` line at the start or after a blank line whose next line
    looks like a header (so unquoted prose "From the start, ..." stays in the body); the
    blank line before it belongs to the format and is dropped. One `>` is removed from
    `>+From ` lines.
    """
    lines: list[bytes] = []
    blank = True
    started = False
    candidate: bytes | None = None  # a `From ` line waiting for the line after it
    for line in stream:
        if candidate is not None:
            if HEADER.match(line) or not started:
                if started:
                    yield _without_separator(lines)
                lines, started = [], True
            else:
                lines.append(candidate)
            candidate = None
        if line.startswith(b"From ") and blank:
            candidate, blank = line, False
            continue
        blank = line in (b"\n", b"\r\n")
        if line.startswith(b">") and line.lstrip(b">").startswith(b"From "):
            line = line[1:]
        lines.append(line)
    if candidate is not None and started:
        lines.append(candidate)
    if started:
        yield _without_separator(lines)


def _without_separator(lines: list[bytes]) -> bytes:
    """The message, less the blank line the mbox format puts after it."""
    if lines and lines[-1] in (b"\n", b"\r\n"):
        lines = lines[:-1]
    return b"".join(lines)


def count_messages(path: Path) -> int:
    with path.open("rb") as stream:
        return sum(1 for _ in split_mbox(stream))


def to_maildir(mbox: Path, maildir: Path) -> int:
    """Write every message of `mbox` as a file in `maildir/new`; return the count."""
    for sub in ("cur", "new", "tmp"):
        (maildir / sub).mkdir(parents=True, exist_ok=True)
    count = 0
    with mbox.open("rb") as stream:
        for count, message in enumerate(split_mbox(stream), start=1):
            (maildir / "new" / f"{count:08d}.bench").write_bytes(message)
    return count


# --- the two contenders ------------------------------------------------------------


def run_e2g(archive: Archive, workdir: Path, options: argparse.Namespace) -> Measured:
    data_dir = workdir / "e2g-data" / archive.name
    shutil.rmtree(data_dir, ignore_errors=True)
    argv = [
        sys.executable,
        "-m",
        "e2g",
        "--data-dir",
        str(data_dir),
        "-q",
        "ingest",
        "--json",
    ]
    if options.index_bodies:
        argv.append("--index-bodies")
    if options.jobs is not None:
        argv += ["--jobs", str(options.jobs)]
    argv.append(str(archive.path))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    note(f"e2g ingest {archive.name} ...")
    return measure(argv, env=env, logs=workdir / "logs" / f"e2g-{archive.name}")


def notmuch_config(path: Path, maildir: Path) -> None:
    path.write_text(
        "[database]\n"
        f"path={maildir}\n"
        "[new]\n"
        "tags=\n"
        "[user]\n"
        "name=Benchmark\n"
        "primary_email=bench@example.org\n"
        "[maildir]\n"
        "synchronize_flags=false\n"
    )


def run_notmuch(archive: Archive, workdir: Path) -> tuple[Measured, int | None]:
    """Time `notmuch new` on a fresh database; return the run and messages indexed."""
    maildir = workdir / "maildir" / archive.name
    done = maildir / ".converted"
    if not done.exists():
        shutil.rmtree(maildir, ignore_errors=True)
        note(f"converting {archive.plain.name} to a Maildir (not timed) ...")
        done.parent.mkdir(parents=True, exist_ok=True)
        done.write_text(str(to_maildir(archive.plain, maildir)))
    shutil.rmtree(maildir / ".notmuch", ignore_errors=True)
    config = workdir / f"notmuch-{archive.name}.config"
    notmuch_config(config, maildir)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("NOTMUCH_")
    }
    env["NOTMUCH_CONFIG"] = str(config)
    note(f"notmuch new {archive.name} ...")
    run = measure(
        [NOTMUCH, "new", "--quiet"],
        env=env,
        logs=workdir / "logs" / f"notmuch-{archive.name}",
    )
    counted = subprocess.run(
        [NOTMUCH, "count", "*"], env=env, capture_output=True, text=True, check=False
    )
    indexed = (
        int(counted.stdout)
        if counted.returncode == 0 and counted.stdout.strip().isdigit()
        else None
    )
    return run, indexed


# --- results -----------------------------------------------------------------------


def _failure(run: Measured) -> str:
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    return f"exit {run.returncode}: {lines[-1] if lines else 'no output'}"[:300]


def _report(stdout: str) -> dict[str, object] | None:
    for line in reversed(stdout.splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def bench(archive: Archive, workdir: Path, options: argparse.Namespace) -> Result:
    fields: dict[str, object] = {}
    megabytes = archive.size / 1e6
    e2g = run_e2g(archive, workdir, options)
    if e2g.returncode == 0:
        fields.update(
            e2g_seconds=e2g.seconds,
            e2g_cpu_seconds=e2g.cpu_seconds,
            e2g_messages_per_second=archive.messages / e2g.seconds,
            e2g_megabytes_per_second=megabytes / e2g.seconds,
            e2g_peak_process_rss=e2g.peak_process_rss,
            e2g_peak_tree_rss=e2g.peak_tree_rss,
            e2g_load=e2g.load,
            e2g_report=_report(e2g.stdout),
        )
    else:
        fields["e2g_error"] = _failure(e2g)
        note(f"e2g failed on {archive.name}: {fields['e2g_error']}")
    if not options.skip_notmuch:
        fields.update(_bench_notmuch(archive, workdir))
    e2g_rate = fields.get("e2g_messages_per_second")
    notmuch_rate = fields.get("notmuch_messages_per_second")
    if isinstance(e2g_rate, float) and isinstance(notmuch_rate, float):
        fields["ratio"] = e2g_rate / notmuch_rate
        e2g_cpu, notmuch_cpu = fields["e2g_cpu_seconds"], fields["notmuch_cpu_seconds"]
        if (
            isinstance(e2g_cpu, float)
            and isinstance(notmuch_cpu, float)
            and e2g_cpu > 0
        ):
            fields["cpu_ratio"] = notmuch_cpu / e2g_cpu
    return Result(archive.name, archive.messages, megabytes, **fields)  # type: ignore[arg-type]


def _bench_notmuch(archive: Archive, workdir: Path) -> dict[str, object]:
    if shutil.which(NOTMUCH) is None:
        return {"notmuch_error": "notmuch is not installed"}
    run, indexed = run_notmuch(archive, workdir)
    if run.returncode != 0:
        note(f"notmuch failed on {archive.name}: {_failure(run)}")
        return {"notmuch_error": _failure(run)}
    return {
        "notmuch_seconds": run.seconds,
        "notmuch_cpu_seconds": run.cpu_seconds,
        "notmuch_messages_per_second": archive.messages / run.seconds,
        "notmuch_peak_process_rss": run.peak_process_rss,
        "notmuch_peak_tree_rss": run.peak_tree_rss,
        "notmuch_load": run.load,
        "notmuch_indexed": indexed,
    }


COLUMNS = (
    ("archive", 22),
    ("messages", 9),
    ("MB", 8),
    ("e2g s", 8),
    ("e2g cpu s", 9),
    ("e2g msg/s", 10),
    ("e2g MB/s", 9),
    ("e2g peak RSS", 13),
    ("notmuch s", 9),
    ("notmuch cpu s", 13),
    ("notmuch msg/s", 13),
    ("notmuch peak RSS", 16),
    ("ratio e2g/notmuch msg/s", 23),
)


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _memory(value: int | None) -> str:
    return "-" if value is None else f"{value / MIB:,.0f} MiB"


def _peak(process: int | None, tree: int | None) -> int | None:
    return None if process is None or tree is None else max(process, tree)


def row(result: Result) -> list[str]:
    return [
        result.archive,
        f"{result.messages:,}",
        _number(result.megabytes),
        _number(result.e2g_seconds, 2),
        _number(result.e2g_cpu_seconds, 2),
        _number(result.e2g_messages_per_second, 0),
        _number(result.e2g_megabytes_per_second, 2),
        _memory(_peak(result.e2g_peak_process_rss, result.e2g_peak_tree_rss)),
        _number(result.notmuch_seconds, 2),
        _number(result.notmuch_cpu_seconds, 2),
        _number(result.notmuch_messages_per_second, 0),
        _memory(_peak(result.notmuch_peak_process_rss, result.notmuch_peak_tree_rss)),
        _number(result.ratio, 2),
    ]


def table(results: list[Result]) -> str:
    lines = ["  ".join(name.rjust(width) for name, width in COLUMNS)]
    for result in results:
        lines.append(
            "  ".join(
                cell.rjust(width)
                for cell, (_, width) in zip(row(result), COLUMNS, strict=True)
            )
        )
    return "\n".join(lines)


def verdicts(results: list[Result]) -> list[str]:
    """One line per archive: the issue's two targets, met or not, and any failure."""
    lines = []
    for result in results:
        if result.e2g_error:
            lines.append(f"{result.archive}: e2g failed: {result.e2g_error}")
            continue
        peak = _peak(result.e2g_peak_process_rss, result.e2g_peak_tree_rss) or 0
        memory = "met" if peak < GIB else "MISSED"
        text = f"{result.archive}: peak RSS < 1 GiB {memory} (largest process {_memory(result.e2g_peak_process_rss)}, tree {_memory(result.e2g_peak_tree_rss)})"
        if result.ratio is not None:
            speed = "met" if result.ratio >= TARGET_RATIO else "MISSED"
            text += (
                f"; msg/s >= {TARGET_RATIO:g}x notmuch {speed} ({result.ratio:.2f}x"
                f", per CPU second {_number(result.cpu_ratio, 2)}x"
                f"; load average {_number(result.e2g_load, 1)} / {_number(result.notmuch_load, 1)})"
            )
        elif result.notmuch_error:
            text += f"; notmuch: {result.notmuch_error}"
        lines.append(text)
    return lines


# --- command line --------------------------------------------------------------------


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--count",
        type=int,
        default=100_000,
        help="messages in the generated archive (default 100000)",
    )
    parser.add_argument(
        "--seed", type=int, default=1, help="generator seed (default 1)"
    )
    parser.add_argument(
        "--sparse",
        type=Path,
        default=DEFAULT_SPARSE,
        help="the real archive (skipped with a note when absent)",
    )
    parser.add_argument(
        "--skip-notmuch", action="store_true", help="do not run notmuch"
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        help="keep archives, Maildirs and data dirs here (default: a temporary dir, removed)",
    )
    parser.add_argument(
        "--index-bodies", action="store_true", help="pass --index-bodies to e2g ingest"
    )
    parser.add_argument("--jobs", type=int, help="pass --jobs to e2g ingest")
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per archive on stdout instead of the table",
    )
    return parser.parse_args(argv)


def run(options: argparse.Namespace, workdir: Path) -> list[Result]:
    archives = [generated_archive(workdir, options.count, options.seed)]
    if options.sparse.exists():
        archives.append(sparse_archive(workdir, options.sparse))
    else:
        note(f"skipping the real archive: {options.sparse} does not exist")
    return [bench(archive, workdir, options) for archive in archives]


def main(argv: list[str] | None = None) -> int:
    options = arguments(argv)
    if options.workdir is not None:
        options.workdir.mkdir(parents=True, exist_ok=True)
        results = run(options, options.workdir.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="e2g-bench-") as temporary:
            results = run(options, Path(temporary))
    if options.json:
        for result in results:
            print(json.dumps(asdict(result), sort_keys=True))
    else:
        print(table(results))
        print()
        print("\n".join(verdicts(results)))
    return 0 if all(result.e2g_error is None for result in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
