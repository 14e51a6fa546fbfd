"""The README's performance summary, derived from the benchmark report.

The report (what ``bench.py --write-report docs/performance.md`` writes between
its markers) holds one markdown table per section. :func:`summary_table` reads
those tables back and picks bytepair's rows: for each task, the range of its
throughput over the inputs and the range of its ratio to the peer the report
compares it with. Nothing is typed: a section the report lacks gives no row,
and a cell that is no number (a failed peer) is left out of the ranges.

    python bench/bench.py --summary-from docs/performance.md --write-summary README.md
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Optional

SUMMARY_START = "<!-- bench-summary:start -->"
SUMMARY_END = "<!-- bench-summary:end -->"
REPORT_START = "<!-- bench:start -->"
REPORT_END = "<!-- bench:end -->"

Table = list[dict[str, str]]


def report_block(page: str, start: str = REPORT_START, end: str = REPORT_END) -> str:
    """The text between the report markers of ``page``."""
    i, j = page.find(start), page.find(end)
    if i < 0 or j < i:
        raise ValueError(f"the page has no report between {start} and {end}")
    return page[i + len(start) : j].strip("\n")


def sections(report: str) -> dict[str, list[Table]]:
    """Each ``### Title`` of the report with the markdown tables under it, in order."""
    out: dict[str, list[Table]] = {}
    title: Optional[str] = None
    header: Optional[list[str]] = None
    for line in report.splitlines():
        if line.startswith("### "):
            title, header = line[4:].strip(), None
            out[title] = []
            continue
        if title is None:
            continue
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            out[title].append([])
        elif all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue
        else:
            out[title][-1].append(dict(zip(header, cells)))
    return out


def number(cell: str) -> Optional[float]:
    """The number a cell starts with (``7.85×``, ``1,024``, ``0.021``), or None."""
    m = re.match(r"^\s*(-?[\d,]*\.?\d+)", cell or "")
    return float(m.group(1).replace(",", "")) if m else None


def span(values: list[float], fmt: Callable[[float], str], unit: str = "") -> str:
    """``a–b`` (or ``a`` when all are equal) of ``values``, formatted."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return (lo if lo == hi else f"{lo}–{hi}") + unit


def _mbs(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 else f"{x:.1f}"


def _ratio(x: float) -> str:
    return f"{x:.1f}"


def section(secs: dict[str, list[Table]], prefix: str) -> Table:
    """The first table of the first section whose title starts with ``prefix``."""
    for title, tables in secs.items():
        if title.startswith(prefix) and tables:
            return tables[0]
    return []


def values(rows: Table, column: str) -> list[float]:
    return [v for v in (number(r.get(column, "")) for r in rows) if v is not None]


def _encode_rows(secs) -> list[tuple[str, str, str, str]]:
    rows = section(secs, "Encoding, one thread")
    out = []
    for enc in dict.fromkeys(r["encoding"] for r in rows):
        ours = [r for r in rows if r["encoding"] == enc and r["tool"] == "bytepair"]
        mbs, tk, peer = (values(ours, c) for c in ("MB/s", "× tiktoken", "× fastest peer"))
        if not (mbs and tk and peer):
            continue
        texts = sorted({re.split(r"\s+[\d.,]+\s*[KMG]?B\b|,", r["text"])[0] for r in ours})
        out.append(
            (
                "encode, one thread",
                f"{enc}: {', '.join(texts)} ({len(ours)} inputs)",
                span(mbs, _mbs, " MB/s"),
                f"{span(tk, _ratio, '×')} tiktoken; {span(peer, _ratio, '×')} the fastest other tool",
            )
        )
    return out


def _batch_rows(secs) -> list[tuple[str, str, str, str]]:
    rows = section(secs, "Encoding, batch")
    ours = [
        r
        for r in rows
        if r.get("tool") == "bytepair" and r.get("call") == "encode_ordinary_batch(texts)"
    ]
    mbs, tk = values(ours, "MB/s"), values(ours, "× tiktoken batch")
    if not (mbs and tk):
        return []
    encs = ", ".join(dict.fromkeys(r["encoding"] for r in ours))
    return [
        (
            "encode a batch, 2 threads",
            f"{encs} ({len(ours)} inputs)",
            span(mbs, _mbs, " MB/s"),
            f"{span(tk, _ratio, '×')} tiktoken's batch",
        )
    ]


def _worst_rows(secs) -> list[tuple[str, str, str, str]]:
    rows = [r for r in section(secs, "Worst case") if r.get("tool") == "bytepair"]
    huge = values(rows, "10 MB s")
    growth = values(rows, "1 MB / 100 KB")
    if not (huge and growth):
        return []
    return [
        (
            "worst-case inputs",
            f"{len(rows)} adversarial texts of 10 MB",
            f"at most {max(huge):.2f} s",
            f"time grows linearly: 1 MB takes at most {max(growth):.1f}× 100 KB",
        )
    ]


def _train_rows(secs) -> list[tuple[str, str, str, str]]:
    rows = section(secs, "Training")
    if not rows:
        return []
    config = rows[0]["configuration"]
    group = [r for r in rows if r["configuration"] == config]
    ours = [r for r in group if r["tool"] == "bytepair"]
    peers = [r for r in group if r["tool"] != "bytepair" and number(r.get("time vs bytepair", ""))]
    if not ours or not peers:
        return []
    wall = number(ours[0]["wall s (median)"])
    rss = number(ours[0].get("peak RSS MB", ""))
    against = "; ".join(
        f"{number(r['time vs bytepair']):.1f}× faster than {r['tool']}" for r in peers
    )
    memory = ", ".join(
        f"{r['tool']} {number(r['peak RSS MB']):,.0f} MB"
        for r in peers
        if number(r.get("peak RSS MB", ""))
    )
    peak = f"; peak memory {rss:,.0f} MB ({memory})" if rss and memory else ""
    return [("train byte-level BPE", config, f"{wall:.2f} s" if wall else "—", against + peak)]


def _decode_rows(secs) -> list[tuple[str, str, str, str]]:
    rows = section(secs, "Decoding")
    ours = [r for r in rows if r.get("tool") == "bytepair" and r.get("call") == "decode_bytes(ids)"]
    mbs, tk = values(ours, "MB/s out"), values(ours, "× tiktoken")
    if not (mbs and tk):
        return []
    return [
        (
            "decode to bytes",
            f"{len(ours)} inputs",
            span(mbs, _mbs, " MB/s"),
            f"{span(tk, _ratio, '×')} tiktoken",
        )
    ]


def _load_rows(secs) -> list[tuple[str, str, str, str]]:
    rows = section(secs, "Loading")
    ours = [r for r in rows if r.get("tool") == "bytepair"]
    ratios = values(ours, "× tiktoken / HF")
    if not ratios:
        return []
    files = ", ".join(dict.fromkeys(r["file"].split(" (")[0] for r in ours))
    seconds = values(ours, "median s")
    return [
        (
            "load a tokenizer",
            files,
            span(seconds, lambda x: f"{x:.3f}", " s"),
            f"{span(ratios, _ratio, '×')} tiktoken / HF tokenizers",
        )
    ]


def _unigram_rows(secs) -> list[tuple[str, str, str, str]]:
    rows = section(secs, "Unigram")
    pairs = []
    for corpus in dict.fromkeys(r["corpus, vocabulary"] for r in rows):
        by_tool = {r["tool"]: r for r in rows if r["corpus, vocabulary"] == corpus}
        ours, peer = by_tool.get("bytepair"), by_tool.get("sentencepiece")
        if ours is None or peer is None:
            continue
        a, b = number(ours["training"]), number(peer["training"])
        if a and b:
            pairs.append((a, b / a))
    if not pairs:
        return []
    return [
        (
            "train a unigram model",
            f"{len(pairs)} corpora and sizes",
            span([a for a, _ in pairs], lambda x: f"{x:.2f}", " s"),
            f"{span([r for _, r in pairs], _ratio, '×')} faster than sentencepiece",
        )
    ]


def _sentencepiece_rows(secs) -> list[tuple[str, str, str, str]]:
    rows = section(secs, "SentencePiece model files")
    out = []
    for call in ("encode", "decode"):
        ours = [r for r in rows if r.get("call") == call]
        mbs, ratio = values(ours, "bytepair MB/s"), values(ours, "× peer")
        if not (mbs and ratio):
            continue
        peers = " / ".join(dict.fromkeys(r["peer"] for r in ours))
        out.append(
            (
                f"{call} with SentencePiece and Unigram files",
                f"{len(ours)} model and text pairs",
                span(mbs, _mbs, " MB/s"),
                f"{span(ratio, _ratio, '×')} {peers}",
            )
        )
    return out


ROWS = (
    _encode_rows,
    _batch_rows,
    _worst_rows,
    _decode_rows,
    _load_rows,
    _train_rows,
    _unigram_rows,
    _sentencepiece_rows,
)


def summary_table(report: str) -> str:
    """The summary (a markdown table and the run it comes from) of a report."""
    secs = sections(report)
    rows = [row for make in ROWS for row in make(secs)]
    first = report.strip().splitlines()[0] if report.strip() else ""
    m = re.match(r"^(\d{4}-\d\d-\d\d \d\d:\d\d UTC); commit (\S+); nproc (\d+)", first)
    where = f"Run of {m.group(1)}, commit {m.group(2)}, {m.group(3)} cores." if m else ""
    if not rows:
        return "(the report holds no result yet)"
    lines = ["| task | inputs | bytepair | against the others |", "|---|---|--:|---|"]
    lines += [f"| {' | '.join(cell.replace('|', '/') for cell in row)} |" for row in rows]
    return "\n".join(lines + (["", where] if where else []))


def replace_block(text: str, block: str, start: str = SUMMARY_START, end: str = SUMMARY_END) -> str:
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"needs the markers {start} and {end}, in that order")
    return text[: i + len(start)] + "\n" + block + "\n" + text[j:]


def write_summary(report_page: Path, readme: Path) -> None:
    """Writes the summary of ``report_page``'s report between ``readme``'s markers."""
    report = report_block(report_page.read_text(encoding="utf-8"))
    text = readme.read_text(encoding="utf-8")
    readme.write_text(replace_block(text, summary_table(report)), encoding="utf-8")
