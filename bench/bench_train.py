"""Training byte-level BPE: bytepair vs HF tokenizers (BpeTrainer + ByteLevel)
and rustbpe, each run in a fresh subprocess so that wall time and peak memory
are per tool; bytepair's phase split; and the core's merges against the
pure-Python reference (the specification) in the same run."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from bench_harness import (
    MB,
    Results,
    Section,
    Target,
    corpus_size,
    fmt_seconds,
    fmt_size,
    load_corpus,
    log,
    md_table,
    nproc,
    optional_import,
    plural,
    rounds_caveat,
)

WORKER = Path(__file__).resolve().parent / "bench_worker.py"
PRETOKENIZERS = ("gpt2", "cl100k")
TOOLS = ("bytepair", "HF tokenizers", "rustbpe")
PEERS = TOOLS[1:]  # target 4 asks for both
MODULES = {"HF tokenizers": "tokenizers", "rustbpe": "rustbpe", "bytepair": "bytepair"}


def hf_split_pattern(pretokenizer: str) -> Optional[str]:
    """The Split regex bytepair's own tokenizer.json export writes for ``pretokenizer``
    (Oniguruma syntax, as HF tokenizers needs it); None for gpt2 (ByteLevel's own regex)."""
    if pretokenizer == "gpt2":
        return None
    import bytepair

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.json"
        bytepair.train(["a b"], 257, pretokenizer=pretokenizer, progress=False).save(path)
        document = json.loads(path.read_text(encoding="utf-8"))
    for step in document["pre_tokenizer"].get("pretokenizers", []):
        if step.get("type") == "Split":
            return step["pattern"]["Regex"]
    raise RuntimeError(f"no Split step in bytepair's export for {pretokenizer}")


def hf_pieces_agree(pretokenizer: str, split: Optional[str], text: str) -> str:
    """Whether HF's pre-tokenizer (as configured for training) cuts ``text`` into
    the same pieces as bytepair's; a sentence for the notes."""
    tokenizers = optional_import("tokenizers")
    if tokenizers is None:
        return ""
    from tokenizers import Regex, pre_tokenizers

    import bytepair
    from bytepair.formats.byte_level import unicode_text_to_bytes

    if split is None:
        pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        pre = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(split), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    theirs = [unicode_text_to_bytes(p) for p, _ in pre.pre_tokenize_str(text)]
    tok = bytepair.train(["a b"], 257, pretokenizer=pretokenizer, progress=False)
    ours = [p.encode("utf-8") for p in tok.pretokenize(text)]
    size = fmt_size(len(text.encode("utf-8")))
    if ours == theirs:
        return f"HF's {pretokenizer} pre-tokenizer cuts the same {len(ours):,} pieces as bytepair's on {size} of large_en"
    k = next(
        (i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs))
    )
    return (
        f"HF's {pretokenizer} pre-tokenizer cuts differently from bytepair's on {size} of large_en: "
        f"piece {k}: {theirs[k : k + 1]!r} vs {ours[k : k + 1]!r}"
    )


def run_worker(job: dict, timeout: float) -> dict:
    try:
        proc = subprocess.run(
            [sys.executable, str(WORKER), "train", json.dumps(job)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"error": f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"error": f"no result: {proc.stderr.strip()[-300:]}"}
    return json.loads(lines[-1])


def agreement(ours: list[str], theirs: list[str]) -> str:
    same = 0
    for a, b in zip(ours, theirs):
        if a != b:
            break
        same += 1
    common = len(set(ours) & set(theirs))
    return f"first {same:,} merges same as bytepair's, {common:,}/{len(set(theirs)):,} merged tokens in common"


class Run:
    """All rounds of one tool on one configuration."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.results: list[dict] = []
        self.error: str = ""
        self.note: str = ""

    def ok(self) -> bool:
        return bool(self.results) and not self.error

    def median(self, key: str) -> Optional[float]:
        values = [r[key] for r in self.results if key in r and r[key] is not None and r[key] >= 0]
        return statistics.median(values) if values else None

    def spread(self, key: str) -> Optional[float]:
        values = [r[key] for r in self.results if key in r]
        if len(values) < 2:
            return None
        return (max(values) - min(values)) / statistics.median(values)


def configs(args, full_bytes: int) -> list[tuple[str, int, int, int, bool]]:
    """(pre-tokenizer, bytes, vocab, rounds, is_main) in the order they run."""
    main_bytes = min(int(args.train_mb * MB), full_bytes)
    small_bytes = min(int(args.train_small_mb * MB), full_bytes)
    out = []
    for pretok in PRETOKENIZERS:
        out.append((pretok, main_bytes, args.vocab_size, args.train_rounds, True))
        out.append((pretok, small_bytes, args.vocab_size, args.rounds, False))
        out.append((pretok, main_bytes, args.small_vocab_size, args.train_rounds, False))
    return out


def run(args, ctx, results: Results) -> None:
    from bytepair.pretokenizers import CL100K_PATTERN, GPT2_PATTERN

    data = ctx.data
    full_bytes = corpus_size(data, "en")
    patterns = {"gpt2": GPT2_PATTERN, "cl100k": CL100K_PATTERN}
    splits = {p: hf_split_pattern(p) for p in PRETOKENIZERS}
    sample = load_corpus(data, "en", int(min(args.train_small_mb, 1.0) * MB)).text
    notes = [hf_pieces_agree(p, splits[p], sample) for p in PRETOKENIZERS]
    installed = {tool: optional_import(MODULES[tool]) is not None for tool in TOOLS}

    table, phase_table = [], []
    main_results: dict[str, dict[str, Run]] = {}
    with tempfile.TemporaryDirectory(prefix="bytepair-bench-train-") as tmp:
        for pretok, n_bytes, vocab, rounds, is_main in configs(args, full_bytes):
            whole = " (all of large_en)" if n_bytes >= full_bytes else ""
            what = f"{pretok}, {fmt_size(n_bytes)}{whole}, vocab {vocab}"
            runs = {tool: Run(tool) for tool in TOOLS}
            phases = Run("bytepair phases")
            for tool in TOOLS:
                if not installed[tool]:
                    runs[tool].error = "not installed"
            order = [t for t in TOOLS if installed[t]] + ["bytepair phases"]
            for round_ in range(rounds):
                shift = round_ % len(order)
                for tool in order[shift:] + order[:shift]:
                    run_ = phases if tool == "bytepair phases" else runs[tool]
                    if run_.error:
                        continue
                    log(f"train {what}: {tool}, round {round_ + 1}/{rounds}")
                    job = {
                        "tool": tool,
                        "pretokenizer": pretok,
                        "vocab": vocab,
                        "n_bytes": n_bytes,
                        "data": str(data),
                        "pattern": patterns[pretok],
                        "hf_split_pattern": splits[pretok],
                        "merges_out": (
                            str(Path(tmp) / f"{tool}.json") if round_ == 0 and tool in TOOLS else ""
                        ),
                    }
                    out = run_worker(job, args.train_timeout)
                    if "error" in out:
                        run_.error = out["error"]
                    else:
                        run_.results.append(out)
            merges = {}
            for tool in TOOLS:
                path = Path(tmp) / f"{tool}.json"
                if path.is_file():
                    merges[tool] = json.loads(path.read_text())
                    path.unlink()
            ours = runs["bytepair"]
            base_t = ours.median("train_s") if ours.ok() else None
            for tool in TOOLS:
                r = runs[tool]
                t = r.median("train_s") if r.ok() else None
                peak = r.median("peak_kb") if r.ok() else None
                base = r.median("base_kb") if r.ok() else None
                note = r.error
                if r.ok():
                    first = r.results[0]
                    if tool == "bytepair":
                        note = (
                            f"{plural(first['n_docs'], 'text')}, {first.get('distinct_pretokens', 0):,} distinct "
                            f"pre-tokens, {first['n_merges']:,} merges ({first.get('stop_reason', '')})"
                        )
                    elif tool in merges and "bytepair" in merges:
                        note = f"{first['n_merges']:,} merges; " + agreement(
                            merges["bytepair"], merges[tool]
                        )
                table.append(
                    [
                        what,
                        tool,
                        fmt_seconds(t),
                        "—" if r.spread("train_s") is None else f"{r.spread('train_s'):.0%}",
                        "—" if t is None or base_t is None else f"{t / base_t:.2f}×",
                        "—" if not peak or peak < 0 else f"{peak / 1024:,.0f}",
                        "—"
                        if not peak or peak < 0 or base is None
                        else f"{(peak - base) / 1024:,.0f}",
                        len(r.results),
                        note,
                    ]
                )
            if phases.ok():
                count, merge, read = (
                    phases.median("count_s"),
                    phases.median("merge_s"),
                    phases.median("read_s"),
                )
                phase_table.append(
                    [
                        what,
                        fmt_seconds(read),
                        fmt_seconds(count),
                        fmt_seconds(merge),
                        fmt_seconds(count + merge),
                        f"{phases.results[0]['n_bytes'] / MB / count:.0f}",
                        f"{phases.results[0]['distinct_pretokens']:,}",
                        len(phases.results),
                    ]
                )
            else:
                phase_table.append([what, "—", "—", "—", "—", "—", "—", phases.error or "not run"])
            if is_main:
                main_results[what] = runs

    body = md_table(
        [
            "configuration",
            "tool",
            "wall s (median)",
            "spread",
            "time vs bytepair",
            "peak RSS MB",
            "peak − after reading MB",
            "rounds",
            "notes",
        ],
        table,
        right={2, 3, 4, 5, 6, 7},
    )
    body += (
        f"\n\nEach round of each tool is a fresh Python process (`bench/bench_worker.py train`) that "
        f"reads the slice of large_en.txt.gz (its documents, as the manifest gives them), resets "
        f"its peak-memory mark (/proc/self/clear_refs), trains with {nproc()} cores available, and "
        "reports the wall time of the training call and its peak resident memory (VmHWM: the "
        'interpreter, the texts, and what training added; "peak − after reading" is the part '
        "training added). \"time vs bytepair\" = the tool's median / bytepair's. Tools take turns "
        "round by round. bytepair: `bytepair.train(docs, vocab, pretokenizer=...)`. HF tokenizers: "
        "`BpeTrainer(vocab_size, min_frequency=1, initial_alphabet=ByteLevel.alphabet())` with "
        "`ByteLevel(use_regex=True)` for gpt2 and, for cl100k, `Split(regex, isolated)` + "
        "`ByteLevel(use_regex=False)` with the regex bytepair's tokenizer.json export writes "
        "(Oniguruma syntax). rustbpe: `train_from_iterator(docs, vocab, pattern=...)` with the "
        "same pattern bytepair uses. Their merges are not expected to equal bytepair's: their tie "
        "rules differ (bytepair: highest count, then the smallest (left, right) bytes)."
    )
    if full_bytes < args.train_mb * MB:
        body += (
            f" large_en holds {fmt_size(full_bytes)}, less than the {args.train_mb:g} MB asked: "
            "those rows train on all of it."
        )
    notes = [n for n in notes if n]
    if notes:
        body += " " + "; ".join(notes) + "."
    body += "\n\n**bytepair's phases**\n\n" + md_table(
        [
            "configuration",
            "read s",
            "pre-tokenize + count s",
            "merge s",
            "count + merge s",
            "count MB/s",
            "distinct pre-tokens",
            "rounds",
        ],
        phase_table,
        right={1, 2, 3, 4, 5, 6, 7},
    )
    body += (
        "\n\nMedians, each round a fresh process: read = decompressing the slice and decoding "
        "its documents (the same for every tool, not in the wall times above); pre-tokenize + "
        "count = `bytepair._native.PretokenCounter(...).add_texts` in batches as "
        "`bytepair.train` feeds it; merge = `bytepair._native.train_bpe`."
    )

    ref_body, ref_target = reference_check(args, data, results)
    body += "\n\n**Merges against the reference (the specification)**\n\n" + ref_body
    results.sections.append(Section("Training", body))
    results.targets += train_targets(main_results)
    results.targets.append(ref_target)


def train_targets(main_results: dict[str, dict[str, Run]]) -> list[Target]:
    """Speed (≥ 3x each peer) and memory (≤ the lower peak of the two peers). A measured
    shortfall or a failure of bytepair makes a target NOT met; else a configuration where a
    peer has no figure leaves it not measured (naming the peer), since the lower peak of
    two peers cannot be judged from one of them."""
    speed, memory = [], []
    speed_short = memory_short = False  # a measured figure misses the target
    speed_missing = memory_missing = False  # a figure the target needs is absent
    rounds = []
    for what, runs in main_results.items():
        ours = runs["bytepair"]
        if not ours.ok():  # bytepair's own failure misses the target, as in the encode targets
            speed_short = memory_short = True
            speed.append(f"{what}: bytepair failed ({ours.error or 'not run'})")
            memory.append(f"{what}: bytepair failed")
            continue
        t, peak = ours.median("train_s"), ours.median("peak_kb")
        rounds.append(len(ours.results))
        peer_peaks, peers_without_peak = [], []
        for tool in PEERS:
            r = runs[tool]
            if not r.ok():
                speed_missing = True
                speed.append(f"{what}: {tool} not measured ({r.error or 'not run'})")
                peers_without_peak.append(tool)
                continue
            rounds.append(len(r.results))
            x = r.median("train_s") / t
            speed.append(f"{what}: {x:.2f}× faster than {tool}")
            speed_short |= x < 3.0
            if r.median("peak_kb") and r.median("peak_kb") > 0:
                peer_peaks.append((r.median("peak_kb"), tool))
            else:
                peers_without_peak.append(tool)
        if not peak or peak <= 0:
            memory_missing = True
            memory.append(f"{what}: not measured, no peak RSS for bytepair")
            continue
        line = f"{what}: {peak / 1024:,.0f} MB vs " + (
            ", ".join(f"{low / 1024:,.0f} MB ({tool})" for low, tool in sorted(peer_peaks))
            or "no peer"
        )
        if peer_peaks and peak > min(peer_peaks)[0]:
            memory_short = True  # above one peer's peak, so above the lower of the two
        if peers_without_peak:
            memory_missing = True
            line += f"; {', '.join(peers_without_peak)} not measured"
        memory.append(line)
    caveat = rounds_caveat(rounds)

    def verdict(short: bool, missing: bool) -> Optional[bool]:
        return False if short else None if missing else True

    return [
        Target(
            "training ≥ 3x faster than HF BpeTrainer and rustbpe",
            verdict(speed_short, speed_missing) if speed else None,
            ("; ".join(speed) + caveat).removeprefix("; ") or "not run",
        ),
        Target(
            "training peak RSS ≤ the lower of HF's and rustbpe's",
            verdict(memory_short, memory_missing) if memory else None,
            ("; ".join(memory) + caveat).removeprefix("; ") or "not measured",
        ),
    ]


def reference_check(args, data: Path, results: Results) -> tuple[str, Target]:
    """bytepair.train and bytepair.reference.bpe.train on the same slice: merges
    and their counts must be identical."""
    import bytepair
    from bytepair.reference import bpe as reference

    corpus = load_corpus(data, "en", int(args.ref_kb * 1000))
    rows, all_ok = [], True
    for pretok in PRETOKENIZERS:
        log(
            f"train: reference check, {pretok}, {fmt_size(corpus.n_bytes)}, vocab {args.ref_vocab_size}"
        )
        t0 = time.perf_counter()
        ref = reference.train(corpus.docs, args.ref_vocab_size, pretokenizer=pretok)
        ref_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        core = bytepair.train(corpus.docs, args.ref_vocab_size, pretokenizer=pretok, progress=False)
        core_s = time.perf_counter() - t0
        same_merges = core.merges == list(ref.merges)
        same_counts = list(core.training.merge_counts) == list(ref.counts)
        ok = same_merges and same_counts
        all_ok &= ok
        if ok:
            verdict = "yes"
        else:
            k = next(
                (i for i, (a, b) in enumerate(zip(core.merges, ref.merges)) if a != b),
                min(len(core.merges), len(ref.merges)),
            )
            verdict = (
                f"**NO**: {len(core.merges)} vs {len(ref.merges)} merges; first difference at "
                f"merge #{k}: core {core.merges[k : k + 1]!r} vs reference {list(ref.merges[k : k + 1])!r}"
                + ("" if same_merges else "")
                + ("; counts differ" if same_merges and not same_counts else "")
            )
            results.problems.append(
                f"merges identical: NO — bytepair vs the reference, {pretok}, "
                f"{fmt_size(corpus.n_bytes)} of large_en, vocab {args.ref_vocab_size}: {verdict}"
            )
        rows.append(
            [
                pretok,
                f"{fmt_size(corpus.n_bytes)} ({plural(len(corpus.docs), 'text')})",
                args.ref_vocab_size,
                len(ref.merges),
                fmt_seconds(ref_s),
                fmt_seconds(core_s),
                verdict,
            ]
        )
    if all_ok:
        results.checks.append(
            f"merges identical: yes — bytepair and the pure-Python reference give the same merges "
            f"with the same counts on {fmt_size(corpus.n_bytes)} of large_en (vocab "
            f"{args.ref_vocab_size}; pre-tokenizers {', '.join(PRETOKENIZERS)})"
        )
    body = md_table(
        [
            "pre-tokenizer",
            "slice of large_en",
            "vocab",
            "merges",
            "reference s",
            "bytepair s",
            "merges and counts identical",
        ],
        rows,
        right={2, 3, 4, 5},
    )
    body += (
        "\n\nOne run of each, in this process, on the same documents. The reference "
        "(`bytepair.reference.bpe.train`) recounts every pair after each merge, so its time grows "
        "with the slice and the number of merges; the size of the check (`--ref-kb`, "
        "`--ref-vocab-size`; by default 1 MB and 500 merges for each pre-tokenizer) keeps it "
        "under a minute (see bench/README.md)."
    )
    target = Target(
        "merges identical to the reference (same run)",
        all_ok,
        f"{fmt_size(corpus.n_bytes)} of large_en, vocab {args.ref_vocab_size}, "
        f"{', '.join(PRETOKENIZERS)}: " + ("identical" if all_ok else "DIFFERENT"),
    )
    return body, target
