"""Corpus scale: counting, training and dataset encoding on a
~1 GB corpus, each call in a fresh process whose peak resident memory is
measured, next to HF tokenizers on a prefix of the same files.

The corpus is built once from ``corpus/large_{en,code,multilingual}.txt.gz``
into a cache directory and reused (see :func:`recipe` and bench/README.md).

    python bench/bench.py scale [--scale-mb 1024] [--scale-cache DIR] [--scale-hf-mb 200]

This file is also the worker: ``bench_scale.py worker JOB_JSON`` runs one job
in its own process and prints one JSON line.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_harness  # noqa: E402
from bench_harness import (  # noqa: E402
    MB,
    Results,
    Section,
    Target,
    fmt_seconds,
    log,
    md_table,
    nproc,
    optional_import,
    plural,
    read_manifest,
)

SOURCES = ("en", "code", "multilingual")
RECIPE_VERSION = 1  # bump when the way a corpus is built changes
CACHE_ENV = "BYTEPAIR_BENCH_CACHE"
ENCODING = "cl100k_base"
MIB = 1 << 20  # memory is in MiB, as `bytepair count --max-memory 64Mi` means it
CHECK_DOCS = 1000  # documents of the dataset compared with encode_ordinary


# ---------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------


def recipe(data: Path, size_mb: float) -> dict:
    """What the corpus is made of; the cache key.

    Each source's documents (as its manifest gives them) are read in a
    rotated order: copy ``r`` of a source starts at document
    ``floor(frac(r * rotation) * n_docs)`` and wraps around, so no two copies
    line up. The stream takes chunks of about ``chunk_mb`` from the sources in
    turn, always from the one furthest below its share (``weights``: half
    English, a quarter each code and multilingual text), until ``size_mb``
    (decimal MB); a source that runs out starts its next copy. The stream is
    written as ``parts`` plain UTF-8 files of about equal size (documents
    separated by a blank line, never split) in ``text/``, so that per-file
    work has something to share out; ``recipe.json`` next to ``text/``
    says what was built."""
    sources = {}
    for name in SOURCES:
        gz = data / "corpus" / f"large_{name}.txt.gz"
        sources[name] = {"file": gz.name, "gz_bytes": gz.stat().st_size}
    return {
        "version": RECIPE_VERSION,
        "size_mb": size_mb,
        "weights": {"en": 0.5, "code": 0.25, "multilingual": 0.25},
        "chunk_mb": min(4.0, size_mb / 64),
        "rotation": 0.6180339887,
        "parts": 16,
        "sources": sources,
    }


def recipe_key(r: dict) -> str:
    return hashlib.sha256(json.dumps(r, sort_keys=True).encode()).hexdigest()[:10]


def default_cache() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path(tempfile.gettempdir()) / "bytepair-bench-scale")


def _documents(data: Path, name: str) -> tuple[bytes, list[tuple[int, int]]]:
    """The decompressed source and the (start, end) byte range of each document."""
    gz = data / "corpus" / f"large_{name}.txt.gz"
    with gzip.open(gz, "rb") as f:
        raw = f.read()
    manifest = gz.with_name(f"large_{name}.manifest.tsv")
    ranges: list[tuple[int, int]] = []
    if manifest.is_file():
        ranges = [(o, o + n) for o, n, _ in read_manifest(manifest) if n > 0 and o + n <= len(raw)]
    if not ranges:  # no manifest: blank lines end documents
        start = 0
        for part in raw.split(b"\n\n"):
            if part.strip():
                ranges.append((start, start + len(part)))
            start += len(part) + 2
    return raw, ranges


def _stream(data: Path, r: dict, target: int, stats: dict):
    """Yields the documents (bytes) of the corpus in order, stopping before ``target`` bytes."""
    sources = {name: _documents(data, name) for name in SOURCES}
    weights, chunk = r["weights"], int(r["chunk_mb"] * MB)
    state = {name: {"copy": 0, "i": 0, "emitted": 0} for name in SOURCES}
    for name in SOURCES:
        stats[name] = {
            "source_bytes": sum(e - s for s, e in sources[name][1]),
            "bytes": 0,
            "docs": 0,
        }
    total = 0
    while True:
        name = min(SOURCES, key=lambda s: (state[s]["emitted"] / weights[s], SOURCES.index(s)))
        raw, ranges = sources[name]
        st, n = state[name], len(ranges)
        start = int((st["copy"] * r["rotation"]) % 1.0 * n)
        taken = 0
        while taken < chunk:
            s, e = ranges[(start + st["i"]) % n]
            if total + (e - s) + 2 > target:
                return
            yield raw[s:e]
            total += e - s + 2
            taken += e - s + 2
            stats[name]["bytes"] += e - s
            stats[name]["docs"] += 1
            st["i"] += 1
            if st["i"] == n:  # this copy is done; the next one starts elsewhere
                st["copy"] += 1
                st["i"] = 0
                break
        st["emitted"] += taken


def build_corpus(data: Path, cache: Path, size_mb: float) -> tuple[Path, dict]:
    """The corpus's text directory for ``size_mb`` (built unless the cache holds
    it) and its info."""
    r = recipe(data, size_mb)
    final = cache / f"corpus-{size_mb:g}MB-{recipe_key(r)}"
    info_path = final / "recipe.json"
    if info_path.is_file():
        info = json.loads(info_path.read_text(encoding="utf-8"))
        text = final / "text"
        if info.get("recipe") == r and sorted(p.name for p in text.iterdir()) == sorted(
            info["files"]
        ):
            if all((text / f).stat().st_size == n for f, n in info["files"].items()):
                info["reused"] = True
                return text, info
        log(f"scale: {final} does not match its recipe; rebuilding it")
        shutil.rmtree(final)
    cache.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=final.name + ".building-", dir=cache))
    (building / "text").mkdir()
    log(f"scale: building the {size_mb:g} MB corpus in {final}")
    started = time.perf_counter()
    target = int(size_mb * MB)
    per_part = target / r["parts"]
    stats: dict = {}
    files: dict[str, int] = {}
    part, written, out, name = 0, 0, None, ""
    try:
        for doc in _stream(data, r, target, stats):
            if out is None or (files[name] >= per_part and part < r["parts"] - 1):
                if out is not None:
                    out.close()
                    part += 1
                name = f"part-{part:02d}.txt"
                out = open(building / "text" / name, "wb")
                files[name] = 0
            out.write(doc + b"\n\n")
            written += len(doc) + 2
            files[name] += len(doc) + 2
        if out is not None:
            out.close()
        info = {
            "recipe": r,
            "files": files,
            "bytes": written,
            "sources": stats,
            "build_s": time.perf_counter() - started,
        }
        (building / "recipe.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
        if final.exists():  # built meanwhile by another run
            shutil.rmtree(building)
        else:
            building.rename(final)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    info["reused"] = False
    return final / "text", info


def fmt_size(n_bytes: float) -> str:
    """Like the harness's, without exponents for a GB or more (1,024 MB)."""
    return f"{n_bytes / MB:,.0f} MB" if n_bytes >= 1000 * MB else bench_harness.fmt_size(n_bytes)


def fmt_mib(n_bytes: float) -> str:
    return f"{n_bytes / MIB:,.0f} MiB"


def describe_corpus(info: dict) -> str:
    """One sentence: what the corpus holds (per source: bytes, share, times its source)."""
    parts = []
    for name in SOURCES:
        s = info["sources"][name]
        share = s["bytes"] / max(info["bytes"], 1)
        repeats = s["bytes"] / max(s["source_bytes"], 1)
        parts.append(
            f"large_{name} {fmt_size(s['bytes'])} ({share:.0%}, {repeats:.2f}× its "
            f"{fmt_size(s['source_bytes'])})"
        )
    return "; ".join(parts)


# ---------------------------------------------------------------------------
# Running one job in a fresh process, with its peak memory
# ---------------------------------------------------------------------------


def _tree_rss_kb(root: int) -> int:
    """Summed VmRSS (kB) of ``root`` and its descendants (Linux /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo += parents.get(pid, [])
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def run_job(job: dict, timeout: float) -> dict:
    """Runs ``job`` in a fresh process; its JSON result, plus ``tree_peak_kb``: the
    largest summed RSS of the process and its children, sampled every 0.2 s."""
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "worker", json.dumps(job)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            try:
                peak[0] = max(peak[0], _tree_rss_kb(proc.pid))
            except OSError:
                pass
            done.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    if os.path.isdir("/proc"):
        sampler.start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"error": f"timed out after {timeout:.0f} s"}
    finally:
        done.set()
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": f"exit {proc.returncode}: {stderr.strip()[-400:]}"}
    result = json.loads(lines[-1])
    result["tree_peak_kb"] = peak[0]
    return result


# ---------------------------------------------------------------------------
# The suite
# ---------------------------------------------------------------------------


def hf_files(files: list[Path], hf_mb: Optional[float]) -> list[Path]:
    """The first files whose sizes add up to at most ``hf_mb`` (at least one);
    all of them when ``hf_mb`` is None."""
    if hf_mb is None:
        return files
    out, total = [], 0
    for f in files:
        size = f.stat().st_size
        if out and total + size > hf_mb * MB:
            break
        out.append(f)
        total += size
    return out


class Step:
    def __init__(self, key: str, tool: str, call: str, what: str, bound: str = "—") -> None:
        self.key, self.tool, self.call, self.what, self.bound = key, tool, call, what, bound
        self.result: dict = {}
        self.note = ""
        self.n_bytes = 0  # bytes for the throughput (0: none)

    @property
    def ok(self) -> bool:
        return bool(self.result) and "error" not in self.result and "skipped" not in self.result

    def peak_kb(self) -> Optional[int]:
        return self.result.get("peak_kb") if self.ok else None


def run(args, ctx, results: Results) -> None:
    data = ctx.data
    cache = Path(args.scale_cache) if args.scale_cache else default_cache()
    corpus, info = build_corpus(data, cache, args.scale_mb)
    files = sorted(corpus / f for f in info["files"])
    total = sum(f.stat().st_size for f in files)
    hf_part = hf_files(files, None if args.scale_hf_full else args.scale_hf_mb)
    hf_bytes = sum(f.stat().st_size for f in hf_part)
    hf_is_all = len(hf_part) == len(files)
    vocab = args.scale_vocab_size
    max_memory = int(args.scale_max_memory * MIB)
    has_dataset = optional_import("bytepair.corpus.dataset") is not None
    has_hf = optional_import("tokenizers") is not None
    work = Path(tempfile.mkdtemp(prefix="scale-", dir=ctx.workdir))
    merges = {k: str(work / f"{k}.merges.json") for k in ("counts", "train", "prefix", "hf")}
    corpus_what = f"{fmt_size(total)} ({plural(len(files), 'file')})"
    if hf_is_all:
        prefix_what = f"all {fmt_size(hf_bytes)}"
    else:
        prefix_what = f"first {len(hf_part)} of {len(files)} files, {fmt_size(hf_bytes)}"

    steps = [
        Step("read", "bytepair", "`read_documents(corpus)` only (no tokenizer)", corpus_what),
        Step(
            "count",
            "bytepair",
            "a. `count_to_shards(read_documents(corpus), out, max_memory=...)`",
            corpus_what,
            f"`max_memory` {fmt_mib(max_memory)}",
        ),
        Step(
            "train_counts",
            "bytepair",
            f"b. `train_from_counts(out, {vocab})`",
            "the shards of a",
        ),
        Step("count_train", "bytepair", "a + b", corpus_what),
        Step(
            "train",
            "bytepair",
            f"c. `bytepair.train(read_documents(corpus), {vocab})`",
            corpus_what,
        ),
        Step(
            "dataset",
            "bytepair",
            f"d. `encode_dataset(corpus, {ENCODING}, out)`",
            corpus_what,
        ),
        Step(
            "prefix",
            "bytepair",
            f"e. `bytepair.train(read_documents(files), {vocab})`",
            prefix_what,
        ),
        Step(
            "hf",
            "HF tokenizers",
            f"e. `BpeTrainer` + `ByteLevel`, `train_from_iterator(read_documents(files))`, {vocab}",
            prefix_what,
        ),
    ]
    by_key = {s.key: s for s in steps}
    common = {"vocab": vocab, "pretokenizer": "gpt2"}
    jobs = {
        "read": {"files": [str(corpus)]},
        "count": {"files": [str(corpus)], "out": str(work / "counts"), "max_memory": max_memory},
        "train_counts": {"counts": str(work / "counts"), "merges_out": merges["counts"]},
        "train": {"files": [str(corpus)], "merges_out": merges["train"]},
        "dataset": {
            "files": [str(corpus)],
            "out": str(work / "dataset"),
            "tiktoken_dir": str(data / "models" / "tiktoken"),
            "encoding": ENCODING,
            "check_docs": CHECK_DOCS,
        },
        "prefix": {"files": [str(f) for f in hf_part], "merges_out": merges["prefix"]},
        "hf": {"files": [str(f) for f in hf_part], "merges_out": merges["hf"]},
    }
    for key, job in jobs.items():
        step = by_key[key]
        if key == "dataset" and not has_dataset:
            step.result = {"skipped": "dataset module missing (bytepair.dataset)"}
            continue
        if key == "hf" and not has_hf:
            step.result = {"skipped": "not installed"}
            continue
        if key == "train_counts" and not by_key["count"].ok:
            step.result = {"skipped": "counting failed"}
            continue
        log(f"scale: {key} on {step.what}")
        step.result = run_job({"kind": key, **common, **job}, args.scale_timeout)
        if key == "count":
            step.result["shard_bytes"] = sum(
                p.stat().st_size for p in (work / "counts").glob("*") if p.is_file()
            )
        if key == "dataset":
            shutil.rmtree(work / "dataset", ignore_errors=True)  # as large as the corpus
        log(f"scale: {key}: {step.result}")
    shutil.rmtree(work / "counts", ignore_errors=True)

    # The sum of a and b: one row, as a user who counts then trains sees it.
    a, b = by_key["count"], by_key["train_counts"]
    if a.ok and b.ok:
        by_key["count_train"].result = {
            "seconds": a.result["seconds"] + b.result["seconds"],
            "peak_kb": max(a.result["peak_kb"], b.result["peak_kb"]),
            "base_kb": min(a.result["base_kb"], b.result["base_kb"]),
            "tree_peak_kb": max(a.result["tree_peak_kb"], b.result["tree_peak_kb"]),
        }
    else:
        by_key["count_train"].result = {"skipped": "a or b failed"}
    for key in ("read", "count", "count_train", "train", "dataset"):
        by_key[key].n_bytes = total
    for key in ("prefix", "hf"):
        by_key[key].n_bytes = hf_bytes

    loaded = {}
    for k, path in merges.items():
        if Path(path).is_file():
            loaded[k] = json.loads(Path(path).read_text())
    notes(by_key, loaded, max_memory)
    checks(by_key, loaded, results, total, corpus_what)
    shutil.rmtree(work, ignore_errors=True)

    rows = []
    for s in steps:
        r = s.result
        seconds = r.get("seconds") if s.ok else None
        peak = s.peak_kb()
        rows.append(
            [
                s.call,
                s.tool,
                s.what,
                s.bound,
                fmt_seconds(seconds),
                "—" if not seconds or not s.n_bytes else f"{s.n_bytes / MB / seconds:.1f}",
                "—" if not peak or peak < 0 else f"{peak / 1024:,.0f}",
                "—" if not peak or peak < 0 else f"{(peak - r['base_kb']) / 1024:,.0f}",
                s.note if s.ok else r.get("skipped") or r.get("error", "not run"),
            ]
        )
    body = md_table(
        [
            "step",
            "tool",
            "input",
            "memory bound",
            "wall s",
            "MB/s",
            "peak RSS MiB",
            "peak − start MiB",
            "notes",
        ],
        rows,
        right={4, 5, 6, 7},
    )
    reused = "reused from the cache" if info["reused"] else f"built in {info['build_s']:.0f} s"
    body += (
        f"\n\n**The corpus**: {fmt_size(total)} of plain UTF-8 text in {len(files)} files "
        f"({reused}): {describe_corpus(info)}. It is built from "
        "`corpus/large_{en,code,multilingual}.txt.gz` by taking chunks of about "
        f"{info['recipe']['chunk_mb']} MB in turn from the source furthest below its share "
        "(half English, a quarter each code and multilingual), each copy of a source starting at "
        "a different document (see bench/README.md), so the text repeats with different counts "
        "and never in the same order. Repeating text does not add new pre-tokens: the counts "
        "table is as large as that of the sources' "
        f"{fmt_size(sum(info['sources'][n]['source_bytes'] for n in SOURCES))}, "
        "where a real corpus of this size would have several times more."
    )
    body += (
        f"\n\nEach step is one run in a fresh Python process (`bench/bench_scale.py worker`), "
        f"with {nproc()} cores, on files already in the page cache. MB/s = bytes of the input "
        "files / wall seconds of the call (reading and splitting the files included; MB = 10^6 "
        "bytes; memory is in MiB = 2^20 bytes, the unit of `bytepair count --max-memory 64Mi`). "
        "Peak RSS = the process's VmHWM, reset just before the call (/proc/self/"
        "clear_refs), so it includes the interpreter, the imports and, for d, the loaded "
        '`cl100k_base`; "peak − start" is what the call added. The parent also sums the RSS of '
        "the process and any child processes every 0.2 s; the notes give that sum when it is "
        "higher. The pre-tokenizer is gpt2 everywhere. a + b: the two calls' seconds added, "
        "their larger peak. "
    )
    if hf_is_all:
        body += "HF tokenizers and bytepair (e) train on the whole corpus. "
    else:
        body += (
            f"HF tokenizers trains on the first {len(hf_part)} of the {len(files)} files "
            f"({fmt_size(hf_bytes)}, `--scale-hf-mb`; `--scale-hf-full` for all of it: on "
            f"{nproc()} cores it is slow), and bytepair (e) on the same files for the comparison. "
        )
    body += (
        "HF: `Tokenizer(BPE())`, `ByteLevel(add_prefix_space=False, use_regex=True)`, "
        f"`BpeTrainer(vocab_size={vocab}, min_frequency=1, "
        "initial_alphabet=ByteLevel.alphabet())`, fed the same document stream. Its merges "
        "are not expected to equal bytepair's (tie rules differ)."
    )
    if not has_dataset:
        body += " d did not run: `bytepair.dataset` is missing from this build (dataset module missing)."
    results.sections.append(Section("Corpus scale", body))
    results.targets += targets(by_key, max_memory, corpus_what)


def notes(by_key: dict[str, Step], loaded: dict, max_memory: int) -> None:
    from bench_train import agreement

    def tree(step: Step) -> str:
        r = step.result
        if r.get("tree_peak_kb", 0) > r.get("peak_kb", 0) * 1.05:
            return f"all processes: {r['tree_peak_kb'] / 1024:,.0f} MB (sampled)"
        return ""

    for step in by_key.values():
        r = step.result
        if not step.ok:
            continue
        parts = []
        if step.key == "read":
            parts.append(f"{plural(r['n_docs'], 'document')}")
        elif step.key == "count":
            parts.append(
                f"{plural(r['runs'], 'run')} written ({plural(r['shards'], 'shard file')}, "
                f"{fmt_size(r['shard_bytes'])}, {r['records']:,} records)"
            )
        elif step.key == "train_counts":
            parts.append(
                f"{r['distinct_pretokens']:,} distinct pre-tokens, {r['n_merges']:,} merges"
            )
        elif step.key in ("train", "prefix"):
            parts.append(
                f"{r['distinct_pretokens']:,} distinct pre-tokens, {r['n_merges']:,} merges "
                f"({r['stop_reason']})"
            )
        elif step.key == "dataset":
            parts.append(
                f"{r['n_tokens']:,} tokens ({r['dtype']}), {plural(r['n_docs'], 'document')}, "
                f"{plural(r['n_shards'], 'shard')}"
            )
            if r.get("check"):
                parts.append(r["check"])
        elif step.key == "hf":
            parts.append(f"{r['n_merges']:,} merges")
            if "prefix" in loaded and "hf" in loaded:
                parts.append(
                    agreement(
                        [bytes.fromhex(a) + bytes.fromhex(b) for a, b in loaded["prefix"]],
                        [bytes.fromhex(a) + bytes.fromhex(b) for a, b in loaded["hf"]],
                    )
                )
        if tree(step):
            parts.append(tree(step))
        step.note = "; ".join(parts)


def checks(by_key: dict[str, Step], loaded: dict, results: Results, total: int, what: str) -> None:
    """Merges from counts = merges from the text; dataset documents = read_documents'."""
    if "counts" in loaded and "train" in loaded:
        ours, direct = loaded["counts"], loaded["train"]
        if ours == direct:
            results.checks.append(
                f"scale: merges from counts identical: yes — `train_from_counts` (b) and "
                f"`bytepair.train` (c) give the same {len(ours):,} merges on the whole "
                f"corpus ({what})"
            )
        else:
            k = next((i for i, (x, y) in enumerate(zip(ours, direct)) if x != y), None)
            k = min(len(ours), len(direct)) if k is None else k
            results.problems.append(
                f"scale: merges from counts identical: NO — {len(ours)} vs {len(direct)} merges, "
                f"first difference at merge #{k}: {ours[k : k + 1]} vs {direct[k : k + 1]}"
            )
    else:
        results.checks.append("scale: merges from counts not compared (b or c did not run)")
    d, read = by_key["dataset"], by_key["read"]
    if d.ok:
        if read.ok and d.result["n_docs"] != read.result["n_docs"]:
            results.problems.append(
                f"scale: the dataset holds {d.result['n_docs']:,} documents, "
                f"read_documents gives {read.result['n_docs']:,}"
            )
        if d.result.get("check_ok") is False:
            results.problems.append(f"scale: dataset ids: {d.result['check']}")
        elif d.result.get("check_ok"):
            results.checks.append(
                f"scale: dataset encoding: {d.result['check']}, and "
                f"{d.result['n_docs']:,} documents as read_documents gives"
            )


def targets(by_key: dict[str, Step], max_memory: int, what: str) -> list[Target]:
    """The stated memory bounds hold: counting peaks at most at max_memory +
    ``counts.OVERHEAD_BYTES``; training at most at ``training.memory_bound(D)``
    (D distinct pre-tokens). Peaks are the worker process's whole RSS."""
    from bytepair.training.bpe import memory_bound
    from bytepair.training.counts import OVERHEAD_BYTES

    out = []
    name = "scale: counting peaks under max_memory + counts.OVERHEAD_BYTES"
    a = by_key["count"]
    if not a.ok:
        out.append(Target(name, None, "counting did not run"))
    else:
        peak, bound = a.result["peak_kb"] * 1024, max_memory + OVERHEAD_BYTES
        out.append(
            Target(
                name,
                peak <= bound,
                f"{what}, max_memory {fmt_mib(max_memory)}: peak {fmt_mib(peak)}, "
                f"bound {fmt_mib(bound)}",
            )
        )
    for key in ("train_counts", "train"):
        step = by_key[key]
        name = f"scale: training ({step.call}) peaks under training.memory_bound(D)"
        if not step.ok:
            out.append(Target(name, None, "did not run"))
            continue
        peak = step.result["peak_kb"] * 1024
        distinct = step.result["distinct_pretokens"]
        bound = memory_bound(distinct)
        out.append(
            Target(
                name,
                peak <= bound,
                f"D = {distinct:,}: peak {fmt_mib(peak)}, bound 100 MiB + 1 KiB × D = "
                f"{fmt_mib(bound)}",
            )
        )
    return out


# ---------------------------------------------------------------------------
# The worker side
# ---------------------------------------------------------------------------


def worker(job: dict) -> None:
    import bench_worker

    import bytepair  # noqa: F401 - imported before the peak is reset
    from bytepair.corpus.sources import read_documents
    from bytepair.training import counts

    kind, files = job["kind"], job.get("files", [])
    tok = None
    if kind == "dataset":
        os.environ["BYTEPAIR_TIKTOKEN_DIR"] = job["tiktoken_dir"]
        from bytepair.corpus import dataset

        tok = bytepair.get_encoding(job["encoding"])
    if kind == "hf":
        import tokenizers
        from tokenizers import models, pre_tokenizers, trainers
    result: dict = {}
    merges: list = []
    reset = bench_worker.reset_peak()
    result["base_kb"] = bench_worker.status_kb("VmRSS")
    t0 = time.perf_counter()
    if kind == "read":
        n = 0
        for _ in read_documents(files):
            n += 1
        result["n_docs"] = n
    elif kind == "count":
        counts.count_to_shards(
            read_documents(files),
            job["out"],
            pretokenizer=job["pretokenizer"],
            max_memory=job["max_memory"],
            progress=False,
        )
    elif kind == "train_counts":
        trained = counts.train_from_counts(job["counts"], job["vocab"])
        merges = trained.merges
    elif kind in ("train", "prefix"):
        trained = bytepair.train(
            read_documents(files), job["vocab"], pretokenizer=job["pretokenizer"], progress=False
        )
        merges = trained.merges
    elif kind == "dataset":
        dataset.encode_dataset(files, tok, job["out"], progress=False)
    elif kind == "hf":
        hf = tokenizers.Tokenizer(models.BPE())
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        trainer = trainers.BpeTrainer(
            vocab_size=job["vocab"],
            min_frequency=1,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        hf.train_from_iterator(read_documents(files), trainer=trainer)
    else:
        raise SystemExit(f"unknown job {kind}")
    result["seconds"] = time.perf_counter() - t0
    result["peak_kb"] = bench_worker.status_kb("VmHWM") if reset else -1
    if result["peak_kb"] < 0:
        import resource

        result["peak_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    # After the timing: what the call made.
    if kind == "count":
        manifest = json.loads((Path(job["out"]) / counts.MANIFEST).read_text())
        shards = manifest["shards"]
        result["shards"] = len(shards)
        result["records"] = sum(s["records"] for s in shards)
        result["runs"] = len({s["file"].rsplit("-", 1)[1] for s in shards})
    if kind in ("train_counts", "train", "prefix"):
        merges = [[a.hex(), b.hex()] for a, b in merges]
        if kind == "train_counts":
            counter, _ = counts.read_counts(job["counts"])
            result["distinct_pretokens"] = len(counter)
        else:
            result["distinct_pretokens"] = trained.training.distinct_pretokens
            result["stop_reason"] = trained.training.stop_reason
    if kind == "hf":
        from bytepair.formats.byte_level import unicode_text_to_bytes

        for merge in json.loads(hf.to_str())["model"]["merges"]:
            left, right = merge if isinstance(merge, list) else merge.split(" ", 1)
            merges.append([unicode_text_to_bytes(left).hex(), unicode_text_to_bytes(right).hex()])
    if kind == "dataset":
        ds = dataset.TokenDataset(job["out"])
        result["n_docs"] = len(ds)
        result["n_tokens"] = int(ds.n_tokens)
        result["dtype"] = str(ds.dtype)
        result["n_shards"] = len(ds.shards)
        checked = 0
        for i, doc in enumerate(read_documents(files)):
            if i >= job["check_docs"] or i >= len(ds):
                break
            got = [int(t) for t in ds[i]]
            want = tok.encode_ordinary(doc)
            if got != want:
                result["check_ok"] = False
                result["check"] = (
                    f"document {i}: {len(got)} ids in the dataset, encode_ordinary gives "
                    f"{len(want)}; first difference at "
                    f"{next((k for k, (x, y) in enumerate(zip(got, want)) if x != y), None)}"
                )
                break
            checked += 1
        if "check_ok" not in result:
            result["check_ok"] = True
            result["check"] = (
                f"the ids of the first {checked:,} documents equal `encode_ordinary`'s"
            )
    result["n_merges"] = len(merges)
    if job.get("merges_out"):
        Path(job["merges_out"]).write_text(json.dumps(merges))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "worker":
        worker(json.loads(sys.argv[2]))
    else:
        raise SystemExit(__doc__)
