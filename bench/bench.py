#!/usr/bin/env python3
"""Side-by-side benchmark of bytepair against its peers.

Every tool runs in this one process, on the same inputs, and is timed with
``time.perf_counter``: the garbage collector runs before each round and is
paused during the timed call (as ``timeit`` does), the tools of one row group
take turns round by round (the order rotates), and the table gives the median
of the rounds. Encoders run once before timing; that run is also the
correctness check: ids that differ from tiktoken's are reported and get no
speed ratio (a faster wrong answer does not count).

What is measured (see bench/README.md):
1. training byte-level BPE (gpt2 pre-tokenizer) on a slice of large_en:
   bytepair core, HuggingFace tokenizers, rustbpe; and bytepair core against
   the pure-Python reference on a small slice, whose merges must be identical;
2. encoding with GPT-2's vocabulary (large_en and large_code slices): bytepair,
   tiktoken (r50k_base, built offline), HuggingFace tokenizers;
3. decoding the ids of the encoded slices.

Usage: python bench/bench.py [--quick] [--rounds N] [--write-readme README.md]
"""

from __future__ import annotations

import argparse
import functools
import gc
import gzip
import importlib
import importlib.metadata
import json
import os
import platform
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

MB = 1_000_000  # sizes and throughputs are in decimal megabytes of UTF-8 input
START_MARKER = "<!-- bench:start -->"
END_MARKER = "<!-- bench:end -->"
REPO = Path(__file__).resolve().parents[1]

DEFAULTS = dict(
    train_mb=10.0, vocab_size=8192, encode_mb=5.0, rounds=5, ref_kb=20.0, ref_vocab_size=756
)
QUICK = dict(train_mb=1.0, vocab_size=512, encode_mb=0.5, rounds=1, ref_kb=20.0, ref_vocab_size=306)


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


def find_data(option: Optional[str]) -> Path:
    if option:
        data, origin = Path(option), "--data"
    elif os.environ.get("BYTEPAIR_SHARED_DATA"):
        data, origin = Path(os.environ["BYTEPAIR_SHARED_DATA"]), "$BYTEPAIR_SHARED_DATA"
    else:
        data, origin = REPO.parent / "shared" / "data", "the default next to the repo"
    needed = [
        "corpus/large_en.txt.gz",
        "corpus/large_code.txt.gz",
        "models/gpt2/encoder.json",
        "models/gpt2/vocab.bpe",
        "models/tiktoken/r50k_base.tiktoken",
    ]
    missing = [name for name in needed if not (data / name).is_file()]
    if missing:
        sys.exit(
            f"bench.py: shared data not found: {data} ({origin}) lacks {', '.join(missing)}.\n"
            "Set BYTEPAIR_SHARED_DATA or pass --data DIR (the folder with corpus/ and models/)."
        )
    return data


def read_slice(corpus_gz: Path, n_bytes: int) -> bytes:
    """The first ``n_bytes`` of the corpus, cut back to the last blank line (a
    paragraph or document boundary), else to the last line end, else to a UTF-8
    character boundary."""
    with gzip.open(corpus_gz, "rb") as f:
        data = f.read(n_bytes)
    if len(data) < n_bytes:
        return data  # the whole corpus
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


@dataclass
class Corpus:
    name: str  # "en", "code"
    text: str  # the slice as one text
    docs: list[str]  # the slice as documents; "\n\n".join(docs) == text when split by the manifest
    paths: list[str]  # the source path of each document ("" when unknown)
    doc_offsets: list[int]  # byte offset of each document in the corpus file
    split: str  # how docs were found
    n_bytes: int  # UTF-8 bytes of the slice

    @property
    def doc_bytes(self) -> int:
        return sum(len(d.encode("utf-8")) for d in self.docs)


def load_corpus(data: Path, name: str, n_bytes: int) -> Corpus:
    """A slice of ``corpus/large_<name>.txt.gz`` and its documents.

    The corpus documents are separated by a blank line, but prose documents
    have blank lines inside too; the manifest next to the corpus gives each
    document's exact byte range, so documents come from it (the last one is
    cut where the slice ends). Without a manifest, the slice is split on blank
    lines."""
    path = data / "corpus" / f"large_{name}.txt.gz"
    raw = read_slice(path, n_bytes)
    text = raw.decode("utf-8")
    manifest = path.with_name(f"large_{name}.manifest.tsv")
    docs: list[str] = []
    paths: list[str] = []
    offsets: list[int] = []
    split = "blank lines"
    if manifest.is_file():
        with open(manifest, encoding="utf-8") as f:
            header = f.readline().rstrip("\n").split("\t")
            col = {key: i for i, key in enumerate(header)}
            for line in f:
                fields = line.rstrip("\n").split("\t")
                offset, length = int(fields[col["offset"]]), int(fields[col["length"]])
                if offset >= len(raw):
                    break
                piece = raw[offset : min(offset + length, len(raw))]
                if piece:
                    docs.append(piece.decode("utf-8"))
                    paths.append(fields[col["path"]] if "path" in col else "")
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


def fmt_size(n_bytes: float) -> str:
    if n_bytes >= MB:
        return f"{n_bytes / MB:.3g} MB"
    return f"{n_bytes / 1000:.3g} KB"


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()
    return seconds, result


@dataclass
class Row:
    task: str
    tool: str
    n_bytes: int = 0  # input bytes for the throughput (0: no throughput)
    fn: Optional[Callable[[], Any]] = None  # the timed call; None: not run
    status: str = "ok"  # "ok", "not installed", "ids DIFFER", "error: ..."
    note: str = ""
    baseline: bool = False  # bytepair core: the ratio's denominator
    times: list[float] = field(default_factory=list)
    last: Any = None  # the result of the last round (only when keep_result)
    keep_result: bool = False

    @property
    def median(self) -> Optional[float]:
        return statistics.median(self.times) if self.times else None


def race(rows: list[Row], rounds: int, what: str) -> None:
    """Times the rows that can run, taking turns round by round."""
    runnable = [r for r in rows if r.fn is not None and r.status in ("ok", "ids DIFFER")]
    for round_ in range(rounds):
        shift = round_ % len(runnable) if runnable else 0
        for row in runnable[shift:] + runnable[:shift]:
            if row.status.startswith("error"):
                continue
            log(f"{what}: {row.tool}, round {round_ + 1}/{rounds}")
            try:
                seconds, result = timed(row.fn)
            except Exception as e:  # a peer that fails is reported, not fatal
                if row.baseline:
                    raise
                row.status = f"error: {type(e).__name__}: {e}"[:200]
                continue
            row.times.append(seconds)
            row.last = result if row.keep_result else None
            del result


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------


def render(rows: list[Row]) -> str:
    lines = [
        "| what | tool | median s | throughput | time vs bytepair | spread | notes |",
        "|---|---|--:|--:|--:|--:|---|",
    ]
    baselines = {r.task: r for r in rows if r.baseline}
    for row in rows:
        median = row.median
        base = baselines.get(row.task)
        if row.status not in ("ok", "ids DIFFER") or median is None:
            cells = ["—", "—", "—", "—"]
            note = row.status if row.status != "ok" else "not run"
            if row.note:
                note = f"{note}; {row.note}"
        else:
            spread = (max(row.times) - min(row.times)) / median if len(row.times) > 1 else None
            throughput = f"{row.n_bytes / MB / median:.2f} MB/s" if row.n_bytes else "—"
            if row.status != "ok":
                ratio = "—"
            elif base is None or base.status != "ok" or base.median is None:
                ratio = "—"
            elif row is base:
                ratio = "1.00×"
            else:
                ratio = f"{median / base.median:.2f}×"
            cells = [
                f"{median:.4f}" if median < 10 else f"{median:.2f}",
                throughput,
                ratio,
                f"{spread:.0%}" if spread is not None else "—",
            ]
            note = row.note
            if row.status != "ok":
                note = f"**{row.status}**" + (f"; {note}" if note else "")
        note = " ".join(note.replace("|", "\\|").split())  # one table cell
        lines.append(f"| {row.task} | {row.tool} | " + " | ".join(cells) + f" | {note} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# 1. Training
# ---------------------------------------------------------------------------


def merged_tokens_bytepair(tok) -> list[bytes]:
    return [left + right for left, right in tok.merges]


def merged_tokens_hf(hf_tokenizer) -> list[bytes]:
    from bytepair.formats.byte_level import unicode_text_to_bytes

    merges = json.loads(hf_tokenizer.to_str())["model"]["merges"]
    out = []
    for merge in merges:
        left, right = merge if isinstance(merge, list) else merge.split(" ", 1)
        out.append(unicode_text_to_bytes(left) + unicode_text_to_bytes(right))
    return out


def merged_tokens_rustbpe(tok) -> list[bytes]:
    ranks = sorted(tok.get_mergeable_ranks(), key=lambda item: item[1])
    return [bytes(token) for token, rank in ranks if rank >= 256]


def agreement(ours: list[bytes], theirs: list[bytes]) -> str:
    same_prefix = 0
    for a, b in zip(ours, theirs):
        if a != b:
            break
        same_prefix += 1
    common = len(set(ours) & set(theirs))
    return (
        f"{len(theirs)} merges; first {same_prefix} same as bytepair's, "
        f"{common}/{len(set(theirs))} merged tokens in common"
    )


def bench_training(args, data: Path, problems: list[str], notes: list[str]) -> list[Row]:
    import bytepair
    from bytepair.pretokenizers import GPT2_PATTERN
    from bytepair.reference import bpe as reference

    rows: list[Row] = []

    # -- bytepair core against the pure-Python reference, small slice --
    small = load_corpus(data, "en", int(args.ref_kb * 1000))
    task = f"train {fmt_size(small.n_bytes)} en, vocab {args.ref_vocab_size}"
    log(f"{task}: checking the core's merges against the reference")
    core = bytepair.train(small.docs, args.ref_vocab_size, pretokenizer="gpt2", progress=False)
    ref = reference.train(small.docs, args.ref_vocab_size, pretokenizer="gpt2")
    core_merges, core_counts = core.merges, list(core.training.merge_counts)
    if core_merges == list(ref.merges) and core_counts == list(ref.counts):
        notes.append(
            f"merges identical: yes — bytepair core and the pure-Python reference give the same "
            f"{len(ref.merges)} merges with the same counts on {fmt_size(small.n_bytes)} of "
            f"large_en ({len(small.docs)} text(s), vocab {args.ref_vocab_size})."
        )
    else:
        k = next(
            (i for i, (a, b) in enumerate(zip(core_merges, ref.merges)) if a != b),
            min(len(core_merges), len(ref.merges)),
        )
        pair_core = core_merges[k] if k < len(core_merges) else None
        pair_ref = ref.merges[k] if k < len(ref.merges) else None
        count_core = core_counts[k] if k < len(core_counts) else None
        count_ref = ref.counts[k] if k < len(ref.counts) else None
        first_count = next(
            (i for i, (a, b) in enumerate(zip(core_counts, ref.counts)) if a != b), None
        )
        problems.append(
            f"merges identical: NO — bytepair core vs reference on the first "
            f"{fmt_size(small.n_bytes)} of large_en (vocab {args.ref_vocab_size}): "
            f"{len(core_merges)} vs {len(ref.merges)} merges; first different merge #{k}: "
            f"core {pair_core!r} (count {count_core}) vs reference {pair_ref!r} (count {count_ref})"
            + (
                f"; first different count at merge #{first_count}"
                if first_count is not None
                else ""
            )
        )
    del core, ref
    n = small.doc_bytes
    rows.append(
        Row(
            task,
            "bytepair core",
            n,
            baseline=True,
            fn=lambda: bytepair.train(
                small.docs, args.ref_vocab_size, pretokenizer="gpt2", progress=False
            ),
        )
    )
    rows.append(
        Row(
            task,
            "bytepair.reference (pure Python)",
            n,
            fn=lambda: reference.train(small.docs, args.ref_vocab_size, pretokenizer="gpt2"),
            note="naive recount of all pairs per merge",
        )
    )
    race(rows, args.rounds, task)

    # -- bytepair core against HF tokenizers and rustbpe, large slice --
    corpus = load_corpus(data, "en", int(args.train_mb * MB))
    texts = corpus.docs
    n = corpus.doc_bytes
    vocab = args.vocab_size
    task = f"train {fmt_size(corpus.n_bytes)} en, vocab {vocab}"
    group: list[Row] = []
    group.append(
        Row(
            task,
            "bytepair core",
            n,
            baseline=True,
            keep_result=True,
            fn=lambda: bytepair.train(texts, vocab, pretokenizer="gpt2", progress=False),
        )
    )

    tokenizers = optional_import("tokenizers")
    if tokenizers is None:
        group.append(Row(task, "HF tokenizers", status="not installed"))
    else:
        from tokenizers import models, pre_tokenizers, trainers

        def train_hf():
            tok = tokenizers.Tokenizer(models.BPE())
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
            trainer = trainers.BpeTrainer(
                vocab_size=vocab,
                min_frequency=1,
                initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                show_progress=False,
            )
            tok.train_from_iterator(texts, trainer=trainer, length=len(texts))
            return tok

        group.append(Row(task, "HF tokenizers", n, fn=train_hf, keep_result=True))

    rustbpe = optional_import("rustbpe")
    if rustbpe is None:
        group.append(Row(task, "rustbpe", status="not installed"))
    else:

        def train_rustbpe():
            tok = rustbpe.Tokenizer()
            tok.train_from_iterator(iter(texts), vocab, pattern=GPT2_PATTERN)
            return tok

        group.append(Row(task, "rustbpe", n, fn=train_rustbpe, keep_result=True))

    race(group, args.rounds, task)

    core_row = group[0]
    ours = merged_tokens_bytepair(core_row.last)
    report = core_row.last.training
    core_row.note = (
        f"{len(texts)} texts, {report.distinct_pretokens:,} distinct pre-tokens, "
        f"{len(ours)} merges ({report.stop_reason})"
    )
    for row, extract in zip(group[1:], (merged_tokens_hf, merged_tokens_rustbpe)):
        if row.last is not None:
            try:
                row.note = agreement(ours, extract(row.last))
            except Exception as e:  # only a note: never fail the benchmark for it
                row.note = f"merges not compared ({type(e).__name__}: {e})"
        row.last = None
    core_row.last = None
    notes.append(
        "HF tokenizers and rustbpe merges are not expected to be identical to bytepair's: "
        "their tie rules differ (bytepair: highest count, then the smallest (left, right) bytes)."
    )
    return rows + group


# ---------------------------------------------------------------------------
# 2-3. Encoding and decoding with GPT-2's vocabulary
# ---------------------------------------------------------------------------


def load_encoders(data: Path, workdir: Path):
    import bytepair

    gpt2_dir = workdir / "gpt2"
    gpt2_dir.mkdir()
    for source, target in (("encoder.json", "vocab.json"), ("vocab.bpe", "merges.txt")):
        src = data / "models" / "gpt2" / source
        try:
            (gpt2_dir / target).symlink_to(src.resolve())
        except OSError:
            shutil.copyfile(src, gpt2_dir / target)
    ours = bytepair.load(gpt2_dir)

    tiktoken = optional_import("tiktoken")
    tk = None
    if tiktoken is not None:
        from tiktoken.load import load_tiktoken_bpe
        from tiktoken_ext.openai_public import r50k_pat_str

        tk = tiktoken.Encoding(
            name="r50k_base",
            pat_str=r50k_pat_str,
            mergeable_ranks=load_tiktoken_bpe(
                str(data / "models" / "tiktoken" / "r50k_base.tiktoken")
            ),
            special_tokens={"<|endoftext|>": 50256},
        )

    tokenizers = optional_import("tokenizers")
    hf = None
    if tokenizers is not None:
        from tokenizers import decoders, models, pre_tokenizers

        hf = tokenizers.Tokenizer(
            models.BPE.from_file(str(gpt2_dir / "vocab.json"), str(gpt2_dir / "merges.txt"))
        )
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        hf.decoder = decoders.ByteLevel()
    return ours, tk, hf


def describe_difference(
    corpus: Corpus,
    mode: str,
    tool: str,
    got: list[list[int]],
    want: list[list[int]],
    texts: list[str],
    ours,
    tk,
) -> str:
    """Where ``got`` first differs from tiktoken's ``want``, with the input that fails."""
    import regex
    from tiktoken_ext.openai_public import r50k_pat_str

    from bytepair.reference import bpe as reference

    if len(got) != len(want):
        return f"{tool}, {mode}: {len(got)} results for {len(want)} texts"
    d = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
    a, b = got[d], want[d]
    pos = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    text = texts[d]
    byte_pos = len(tk.decode_bytes(b[:pos]))
    char_pos = len(text.encode("utf-8")[:byte_pos].decode("utf-8", errors="ignore"))
    where = f"document {d}" + (
        f" ({corpus.paths[d]})" if mode != "whole text" and corpus.paths[d] else ""
    )
    if mode == "whole text":
        where = "the whole text"
        corpus_offset = byte_pos
    else:
        corpus_offset = corpus.doc_offsets[d] + byte_pos
    piece = next(
        (m.group() for m in regex.finditer(r50k_pat_str, text) if m.start() <= char_pos < m.end()),
        text[char_pos : char_pos + 20],
    )
    ours_piece = ours.encode_ordinary(piece)
    tk_piece = tk.encode_ordinary(piece)
    ref_piece = reference.encode(
        piece, list(ours.model.tokens), list(ours.model.merges), pretokenizer="gpt2"
    )
    return (
        f"ids DIFFER — {tool} vs tiktoken on large_{corpus.name}, {mode}: {where}, token {pos} "
        f"(byte {byte_pos} of the text, byte {corpus_offset} of large_{corpus.name}.txt); "
        f"{tool} {a[pos : pos + 8]} vs tiktoken {b[pos : pos + 8]}; "
        f"context {text[max(0, char_pos - 40) : char_pos + 40]!r}; "
        f"pre-token there (tiktoken's pattern) {piece!r}: bytepair {ours_piece}, tiktoken {tk_piece}, "
        f"reference {ref_piece}; bytepair's pieces {ours.pretokenize(text[max(0, char_pos - 20) : char_pos + 20])!r}"
    )


def bench_encoding(args, data: Path, problems: list[str], notes: list[str]) -> list[Row]:
    nthreads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with tempfile.TemporaryDirectory(prefix="bytepair-bench-") as tmp:
        ours, tk, hf = load_encoders(data, Path(tmp))
    rows: list[Row] = []
    for name in ("en", "code"):
        corpus = load_corpus(data, name, int(args.encode_mb * MB))
        rows += bench_corpus(args, corpus, ours, tk, hf, nthreads, problems)
    notes.append(
        "Encoding: tiktoken is r50k_base (GPT-2's ranks and pattern) built offline; every tool's ids "
        "were compared with tiktoken's on the whole slice before timing. HF tokenizers: "
        "BPE.from_file(GPT-2 vocab.json, merges.txt) + ByteLevel pre-tokenizer; its encode also "
        f"computes offsets. Batch rows: bytepair's and HF's calls use rayon's pool ({nthreads} "
        f"threads), tiktoken gets num_threads={nthreads}."
    )
    return rows


def if_installed(peer, fn):
    return fn if peer is not None else None


def bench_corpus(
    args, corpus: Corpus, ours, tk, hf, nthreads: int, problems: list[str]
) -> list[Row]:
    """Encoding (three ways) and decoding of one corpus slice."""
    text, docs, name = corpus.text, corpus.docs, corpus.name
    size = fmt_size(corpus.n_bytes)
    batch = f"documents, batch ({nthreads} threads)"
    # mode -> (its texts, {tool: (what is called, the call or None when not installed)})
    modes = {
        "whole text": (
            [text],
            {
                "bytepair": ("encode_ordinary(text)", lambda: [ours.encode_ordinary(text)]),
                "tiktoken": (
                    "encode_ordinary(text)",
                    if_installed(tk, lambda: [tk.encode_ordinary(text)]),
                ),
                "HF tokenizers": (
                    "encode(text)",
                    if_installed(hf, lambda: [hf.encode(text, add_special_tokens=False).ids]),
                ),
            },
        ),
        "documents, 1 thread": (
            docs,
            {
                "bytepair": (
                    "encode_ordinary per document",
                    lambda: [ours.encode_ordinary(d) for d in docs],
                ),
                "tiktoken": (
                    "encode_ordinary per document",
                    if_installed(tk, lambda: [tk.encode_ordinary(d) for d in docs]),
                ),
                "HF tokenizers": (
                    "encode per document",
                    if_installed(
                        hf, lambda: [hf.encode(d, add_special_tokens=False).ids for d in docs]
                    ),
                ),
            },
        ),
        batch: (
            docs,
            {
                "bytepair": ("encode_ordinary_batch", lambda: ours.encode_ordinary_batch(docs)),
                "tiktoken": (
                    f"encode_ordinary_batch(num_threads={nthreads})",
                    if_installed(tk, lambda: tk.encode_ordinary_batch(docs, num_threads=nthreads)),
                ),
                "HF tokenizers": (
                    "encode_batch",
                    if_installed(
                        hf, lambda: [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)]
                    ),
                ),
            },
        ),
    }
    log(f"encode large_{name} {size}: correctness check (also the warm-up)")
    rows: list[Row] = []
    truth_whole: Optional[list[int]] = None
    truth_docs: Optional[list[list[int]]] = None  # tiktoken's per-document ids
    for mode, (texts, tools) in modes.items():
        task = f"encode {size} {name}, {mode}"
        n_bytes = corpus.n_bytes if mode == "whole text" else corpus.doc_bytes
        # The first call of every tool is the warm-up and the correctness check.
        truth = tools["tiktoken"][1]() if tools["tiktoken"][1] else None
        group: list[Row] = []
        for tool, (call, fn) in tools.items():
            if not fn:
                group.append(Row(task, tool, status="not installed", baseline=tool == "bytepair"))
                continue
            row = Row(task, tool, n_bytes, fn=fn, baseline=tool == "bytepair")
            ids = truth if tool == "tiktoken" else fn()
            row.note = f"{call}; {sum(len(x) for x in ids):,} tokens"
            if tool == "bytepair" and len(texts) > 1:
                row.note += f"; {len(texts)} documents (split by {corpus.split})"
            if truth is None:
                row.note += "; ids not checked (tiktoken not installed)"
            elif tool == "tiktoken":
                if mode == batch and truth_docs is not None and truth != truth_docs:
                    row.status = "ids DIFFER"
                    problems.append(
                        f"tiktoken's batch ids differ from its per-document ids ({name})"
                    )
            elif ids != truth:
                row.status = "ids DIFFER"
                problems.append(
                    describe_difference(corpus, mode, tool, ids, truth, texts, ours, tk)
                )
            group.append(row)
        if mode == "whole text" and truth is not None:
            truth_whole = truth[0]
        elif mode == "documents, 1 thread":
            truth_docs = truth
        if group[0].status == "ids DIFFER":
            for row in group[1:]:
                if row.status == "ok":
                    row.note += "; no ratio: bytepair's ids are wrong"
        del truth
        race(group, args.rounds, task)
        rows.extend(group)

    # Decoding tiktoken's ids of the whole slice: the same ids for both tools.
    decode_ids = truth_whole if truth_whole is not None else ours.encode_ordinary(text)
    want = text.encode("utf-8")
    task = f"decode {len(decode_ids):,} tokens {name}"
    decoders = (("bytepair", ours.decode_bytes), ("tiktoken", tk.decode_bytes if tk else None))
    group = []
    for tool, decode in decoders:
        if decode is None:
            group.append(Row(task, tool, status="not installed"))
            continue
        row = Row(
            task,
            tool,
            len(want),
            fn=functools.partial(decode, decode_ids),
            baseline=tool == "bytepair",
        )
        row.note = "decode_bytes(ids); throughput = output bytes"
        if decode(decode_ids) != want:  # also the warm-up
            row.status = "ids DIFFER"
            row.note += "; output is not the input text"
            problems.append(f"{tool} decode_bytes of the {name} slice is not the input text")
        group.append(row)
    race(group, args.rounds, task)
    rows.extend(group)
    return rows


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def machine_line(argv: list[str]) -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = ", ".join(
        f"{dist} {version(dist)}" for dist in ("bytepair", "tiktoken", "tokenizers", "rustbpe")
    )
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = "python " + shlex.join(argv)
    return (
        f"{date}; nproc {nproc}; CPU {cpu}; Python {platform.python_version()}; {versions}; "
        f"command: `{command}`"
    )


def replace_between_markers(path: Path, block: str) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.find(START_MARKER), text.find(END_MARKER)
    if start < 0 or end < 0 or end < start:
        raise ValueError(
            f"{path}: needs the markers {START_MARKER} and {END_MARKER}, in that order"
        )
    text = text[: start + len(START_MARKER)] + "\n" + block + "\n" + text[end:]
    path.write_text(text, encoding="utf-8")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Benchmark bytepair against tiktoken, HF tokenizers and rustbpe (same process, same inputs).",
    )
    p.add_argument(
        "--rounds", type=int, help="timed rounds per row; the median is reported (default 5)"
    )
    p.add_argument("--train-mb", type=float, help="MB of large_en to train on (default 10)")
    p.add_argument("--vocab-size", type=int, help="vocabulary size for training (default 8192)")
    p.add_argument(
        "--encode-mb", type=float, help="MB of large_en and of large_code to encode (default 5)"
    )
    p.add_argument(
        "--ref-kb",
        type=float,
        help="KB of large_en for the core-vs-reference training check (default 20)",
    )
    p.add_argument(
        "--ref-vocab-size", type=int, help="vocabulary size for that check (default 756: 500 merges)"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 MB train, vocab 512, 500 KB encode, 1 round (explicit options still win)",
    )
    p.add_argument(
        "--data", help="the shared data folder (default $BYTEPAIR_SHARED_DATA, else ../shared/data)"
    )
    p.add_argument(
        "--write-readme",
        metavar="PATH",
        help=(f"replace the text between {START_MARKER} and {END_MARKER} in PATH with the table"),
    )
    args = p.parse_args(argv)
    defaults = QUICK if args.quick else DEFAULTS
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    if args.ref_vocab_size < 256 or args.vocab_size < 256:
        p.error("vocabulary sizes must be at least 256")
    return args


def main(argv: Optional[list[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    readme = Path(args.write_readme) if args.write_readme else None
    if readme is not None:  # fail before the long run, not after
        content = readme.read_text(encoding="utf-8") if readme.is_file() else ""
        if START_MARKER not in content or END_MARKER not in content:
            sys.exit(f"bench.py: {readme} lacks the markers {START_MARKER} and {END_MARKER}")
    data = find_data(args.data)
    try:
        import bytepair  # noqa: F401
    except ImportError as e:
        sys.exit(f"bench.py: cannot import bytepair ({e}); install it (maturin develop --release)")

    problems: list[str] = []
    notes: list[str] = []
    started = time.perf_counter()
    rows = bench_training(args, data, problems, notes)
    rows += bench_encoding(args, data, problems, notes)

    header = machine_line([sys.argv[0], *argv])
    table = render(rows)
    legend = (
        f'Median of {args.rounds} round(s); "time vs bytepair" = the tool\'s median time / bytepair '
        "core's on the same row group (above 1 means bytepair is faster); spread = (max - min) / median; "
        "MB = 10^6 bytes of UTF-8 input."
    )
    out = [header, "", table, "", legend, ""]
    out += [f"- {note}" for note in notes]
    if problems:
        out += ["", "Correctness problems:"] + [f"- {p}" for p in problems]
    report = "\n".join(out)
    print(report)
    log(f"done in {time.perf_counter() - started:.0f} s")
    if readme is not None:
        if problems:
            print(f"\n{readme} not updated: a correctness check failed.", file=sys.stderr)
        else:
            replace_between_markers(readme, report)
            log(f"wrote the table into {readme}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
