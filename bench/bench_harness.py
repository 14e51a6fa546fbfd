"""Shared pieces of the benchmark: data, timing, rows, tables, targets."""

from __future__ import annotations

import functools
import gc
import gzip
import importlib
import importlib.metadata
import os
import resource
import statistics
import sys
import time
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

GOAL_ROUNDS = 5  # the goals are medians of at least this many rounds
MB = 1_000_000  # sizes and throughputs are in decimal megabytes of UTF-8 input
KB = 1_000
REPO = Path(__file__).resolve().parents[1]
CORPORA = ("en", "code", "multilingual")
ENCODINGS = ("cl100k_base", "o200k_base")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def optional_import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def nproc() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------

NEEDED = [
    "corpus/large_en.txt.gz",
    "corpus/large_code.txt.gz",
    "corpus/large_multilingual.txt.gz",
    "models/tiktoken/cl100k_base.tiktoken",
    "models/tiktoken/o200k_base.tiktoken",
    "models/hf/roberta-base.tokenizer.json",
]


def find_data(option: Optional[str]) -> Path:
    if option:
        data, origin = Path(option), "--data"
    elif os.environ.get("BYTEPAIR_SHARED_DATA"):
        data, origin = Path(os.environ["BYTEPAIR_SHARED_DATA"]), "$BYTEPAIR_SHARED_DATA"
    else:
        data, origin = REPO.parent / "shared" / "data", "the default next to the repo"
    missing = [name for name in NEEDED if not (data / name).is_file()]
    if missing:
        sys.exit(
            f"bench.py: shared data not found: {data} ({origin}) lacks {', '.join(missing)}.\n"
            "Set BYTEPAIR_SHARED_DATA or pass --data DIR (the folder with corpus/ and models/)."
        )
    return data


def tiktoken_file(data: Path, encoding: str) -> Path:
    return data / "models" / "tiktoken" / f"{encoding}.tiktoken"


def cut_back(data: bytes) -> bytes:
    """``data`` cut back to the last blank line, else the last line end, else a
    UTF-8 character boundary."""
    for separator in (b"\n\n", b"\n"):
        cut = data.rfind(separator)
        if cut > 0:
            return data[:cut]
    cut = len(data)
    while cut > 0 and data[cut - 1] & 0xC0 == 0x80:
        cut -= 1
    if cut > 0 and data[cut - 1] >= 0xC0:  # a lead byte whose continuation was cut off
        cut -= 1
    return data[:cut]


def read_slice(corpus_gz: Path, n_bytes: int) -> bytes:
    """The first ``n_bytes`` of the corpus, cut back to a blank line (see cut_back)."""
    with gzip.open(corpus_gz, "rb") as f:
        data = f.read(n_bytes)
    if len(data) < n_bytes:
        return data  # the whole corpus
    return cut_back(data)


def read_manifest(path: Path) -> list[tuple[int, int, str]]:
    """(offset, length, path) of each document, from ``large_<name>.manifest.tsv``."""
    out = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        col = {key: i for i, key in enumerate(header)}
        for line in f:
            fields = line.rstrip("\n").split("\t")
            out.append(
                (
                    int(fields[col["offset"]]),
                    int(fields[col["length"]]),
                    fields[col["path"]] if "path" in col else "",
                )
            )
    return out


@dataclass
class Corpus:
    name: str  # "en", "code", "multilingual"
    text: str  # the slice as one text
    docs: list[str]  # the slice as documents
    paths: list[str]  # the source path of each document ("" when unknown)
    doc_offsets: list[int]  # byte offset of each document in the corpus file
    split: str  # how docs were found
    n_bytes: int  # UTF-8 bytes of the slice

    @property
    def doc_bytes(self) -> int:
        return sum(len(d.encode("utf-8")) for d in self.docs)


def load_corpus(data: Path, name: str, n_bytes: int) -> Corpus:
    """A slice of ``corpus/large_<name>.txt.gz`` and its documents (exact byte
    ranges from the manifest; the last one cut where the slice ends; without a
    manifest, the slice is split on blank lines)."""
    path = data / "corpus" / f"large_{name}.txt.gz"
    raw = read_slice(path, n_bytes)
    text = raw.decode("utf-8")
    manifest = path.with_name(f"large_{name}.manifest.tsv")
    docs: list[str] = []
    paths: list[str] = []
    offsets: list[int] = []
    split = "blank lines"
    if manifest.is_file():
        for offset, length, source in read_manifest(manifest):
            if offset >= len(raw):
                break
            piece = raw[offset : min(offset + length, len(raw))]
            if piece:
                docs.append(piece.decode("utf-8"))
                paths.append(source)
                offsets.append(offset)
        if "\n\n".join(docs) == text:
            split = "manifest"
        else:
            log(f"{manifest.name} does not match the corpus; splitting on blank lines instead")
            docs, paths, offsets = [], [], []
    if split != "manifest":
        position = 0
        for part in text.split("\n\n"):
            if part:
                docs.append(part)
                paths.append("")
                offsets.append(position)
            position += len(part.encode("utf-8")) + 2
    return Corpus(name, text, docs, paths, offsets, split, len(raw))


def corpus_size(data: Path, name: str) -> int:
    """Bytes of ``large_<name>.txt`` (from the manifest's last document)."""
    manifest = data / "corpus" / f"large_{name}.manifest.tsv"
    entries = read_manifest(manifest)
    return max(offset + length for offset, length, _ in entries)


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def rounds_caveat(rounds: Iterable[int], why: str = "") -> str:
    """The clause (``"; ..."``) a target's detail ends with when the fewest of
    ``rounds`` (the round counts behind its ratios) is below what the goals
    ask, followed by ``why``; "" otherwise, and for no rounds."""
    fewest = min(rounds, default=GOAL_ROUNDS)
    if fewest >= GOAL_ROUNDS:
        return ""
    return f"; median of {plural(fewest, 'round')}, where the goal asks for {GOAL_ROUNDS}{why}"


def paired_ratio(slower: list[float], faster: list[float]) -> float:
    """How many times faster the times ``faster`` are than ``slower``, taken round for round:
    the median of ``slower[i] / faster[i]``. Both come from one race, in which every round
    times each row once, and the machines here drift by tens of percent from one second to
    the next; a round's ratio compares two tools under closer conditions, where the ratio
    of the two medians can set a slow stretch of one against a fast stretch of the other.
    Lists of different lengths (not timed round for round) fall back to that ratio."""
    if len(slower) == len(faster):
        return statistics.median(s / f for s, f in zip(slower, faster))
    return statistics.median(slower) / statistics.median(faster)


def taking_turns(calls: list, argument: Any, rounds: int) -> list[list[float]]:
    """The times of each ``call(argument)``, round by round, the calls taking turns (the
    order alternates), so that a round's times come from the same stretch of a machine
    that drifts (see ``paired_ratio``)."""
    times: list[list[float]] = [[] for _ in calls]
    for round_ in range(rounds):
        order = list(range(len(calls)))
        for k in order[::-1] if round_ % 2 else order:
            times[k].append(timed(functools.partial(calls[k], argument))[0])
    return times


def fmt_size(n_bytes: float) -> str:
    if n_bytes >= MB:
        return f"{n_bytes / MB:.3g} MB"
    return f"{n_bytes / KB:.3g} KB"


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------


@contextmanager
def own_cpu(k: int):
    """Pins the calling thread to the k-th of its allowed CPUs (Linux), so that
    k = 0, 1, ... put threads on different CPUs. Yields the CPU, or None where
    affinity cannot be set or there are fewer CPUs."""
    try:
        before = os.sched_getaffinity(0)
        cpus = sorted(before)
        if k >= len(cpus):
            raise OSError("no such CPU")
        os.sched_setaffinity(0, {cpus[k]})
    except (AttributeError, OSError):
        yield None
        return
    try:
        yield cpus[k]
    finally:
        os.sched_setaffinity(0, before)


def one_cpu():
    """Pins the calling thread to one CPU for a one-thread suite: threads that
    a tool starts inherit the pinning, so a tool that spreads one call over
    threads of its own gets one core like the rest."""
    return own_cpu(0)


def timed(fn: Callable[[], Any]) -> tuple[float, Any, float]:
    """Wall seconds of one call, its result, and the CPU seconds of the whole
    process (every thread) during it; the garbage collector runs before and is
    paused during the call."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        cpu = time.process_time()
        start = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
    finally:
        if enabled:
            gc.enable()
    return seconds, result, cpu


OK = "ok"
DIFFER = "ids DIFFER"


@dataclass
class Row:
    """One tool in one row group; ``fn`` is the timed call."""

    group: str
    tool: str
    n_bytes: int = 0  # bytes for the throughput (0: no throughput)
    fn: Optional[Callable[[], Any]] = None  # None: not run
    # Run before each timed round, untimed: bytepair's rows clear its piece cache, so that
    # every round encodes text new to the tokenizer (it remembers words between calls).
    before_round: Optional[Callable[[], Any]] = None
    status: str = OK  # "ok", "ids DIFFER", "not installed", "not available", "error: ..."
    note: str = ""
    is_peer: bool = True  # False for bytepair's own rows
    # The output was compared with the oracle's before timing (False: nothing to compare
    # with, e.g. tiktoken absent); a row not checked is never the "fastest peer".
    checked: bool = False
    calls: int = 1  # calls per round (times are per call)
    labels: dict = field(default_factory=dict)
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # CPU seconds of the process per round

    @property
    def cores(self) -> Optional[float]:
        """CPU time / wall time over the rounds: about 1 for one thread."""
        wall = sum(self.times) * self.calls
        return sum(self.cpu) / wall if self.cpu and wall > 0 else None

    @property
    def median(self) -> Optional[float]:
        return statistics.median(self.times) if self.times else None

    @property
    def spread(self) -> Optional[float]:
        if len(self.times) < 2:
            return None
        return (max(self.times) - min(self.times)) / statistics.median(self.times)

    @property
    def timed_ok(self) -> bool:
        return self.status == OK and bool(self.times)

    def add_note(self, note: str) -> None:
        self.note = f"{self.note}; {note}" if self.note else note


def race(rows: list[Row], rounds: int, what: str) -> None:
    """Times the rows that can run, taking turns round by round (the order rotates)."""
    runnable = [r for r in rows if r.fn is not None and r.status in (OK, DIFFER)]
    for round_ in range(rounds):
        shift = round_ % len(runnable) if runnable else 0
        for row in runnable[shift:] + runnable[:shift]:
            if row.status.startswith("error"):
                continue
            log(f"{what}: {row.tool}, round {round_ + 1}/{rounds}")
            try:
                if row.before_round is not None:
                    row.before_round()
                seconds, result, cpu = timed(row.fn)
            except Exception as e:  # a tool that fails is reported, not fatal
                row.status = f"error: {type(e).__name__}: {e}"[:200]
                continue
            row.times.append(seconds / row.calls)
            row.cpu.append(cpu)
            del result


@dataclass
class CpuSnapshot:
    wall: float  # time.monotonic()
    busy: float  # CPU seconds the whole machine spent busy (all processes)
    steal: float  # CPU seconds taken by the hypervisor
    ours: float  # CPU seconds of this process and its waited-for children


def cpu_snapshot() -> Optional[CpuSnapshot]:
    """The machine's CPU counters (Linux /proc/stat) and ours, to tell how busy
    other processes kept the machine while a suite ran; None where unavailable."""
    try:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
        tick = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal ...
    busy = sum(values[i] for i in (0, 1, 2, 5, 6) if i < len(values)) / tick
    steal = (values[7] if len(values) > 7 else 0) / tick
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    ours = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    return CpuSnapshot(time.monotonic(), busy, steal, ours)


def background_load(
    before: Optional[CpuSnapshot], after: Optional[CpuSnapshot], what: str = "this suite"
) -> str:
    """A sentence: how many cores other processes kept busy between two snapshots."""
    if before is None or after is None or after.wall <= before.wall:
        return ""
    wall = after.wall - before.wall
    others = max(0.0, (after.busy - before.busy) - (after.ours - before.ours)) / wall
    steal = (after.steal - before.steal) / wall
    return (
        f"Machine load while {what} ran ({wall:.0f} s): other processes kept "
        f"{others:.2f} of the {nproc()} cores busy on average"
        + (f", the hypervisor took {steal:.2f}" if steal >= 0.01 else "")
        + "."
    )


# ---------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------


def fmt_seconds(seconds: Optional[float]) -> str:
    if seconds is None:
        return "—"
    if seconds >= 10:
        return f"{seconds:.1f}"
    if seconds >= 0.01:
        return f"{seconds:.3f}"
    if seconds >= 1e-4:
        return f"{seconds:.5f}"
    return f"{seconds:.2e}"


def fmt_ratio(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:.2f}×"


def fmt_spread(row: Row) -> str:
    spread = row.spread
    return "—" if spread is None else f"{spread:.0%}"


def fmt_throughput(row: Row) -> str:
    if not row.n_bytes or row.median is None:
        return "—"
    return f"{row.n_bytes / MB / row.median:.1f}"


def cell(text: object) -> str:
    return " ".join(str(text).replace("|", "\\|").split())


def md_table(headers: list[str], rows: list[list[object]], right: set[int] = frozenset()) -> str:
    """A markdown table; columns whose index is in ``right`` are right-aligned."""
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("--:" if i in right else "---" for i in range(len(headers))) + "|",
    ]
    for r in rows:
        lines.append("| " + " | ".join(cell(c) for c in r) + " |")
    return "\n".join(lines)


def status_note(row: Row) -> str:
    """The notes cell: the status first when it is not ok."""
    if row.status == OK:
        return row.note if row.times or row.fn is None else (row.note or "not run")
    status = f"**{row.status}**" if row.status == DIFFER else row.status
    return f"{status}; {row.note}" if row.note else status


# ---------------------------------------------------------------------------
# Results of a suite
# ---------------------------------------------------------------------------


@dataclass
class Target:
    """One goal: met (True/False) or not measured (None), with the numbers."""

    name: str
    met: Optional[bool]
    detail: str


@dataclass
class Section:
    title: str
    body: str  # markdown: table(s) and notes


@dataclass
class Results:
    sections: list[Section] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # correctness failures
    checks: list[str] = field(default_factory=list)  # correctness lines that passed
    peer_diffs: list[str] = field(default_factory=list)  # peers whose output differs (no ratio)
