"""Encoding on one thread, with cl100k_base and o200k_base, on slices of
large_en, large_code and large_multilingual (whole text and documents), and
the driver of the three encoder suites (this one, bench_batch, bench_decode),
which share one set of encoders per vocabulary. Every tool's ids are
compared with tiktoken's before it is timed; a tool whose ids differ is
reported and gets no ratio."""

from __future__ import annotations

import functools
import gc
from concurrent.futures import ThreadPoolExecutor

from bench_batch import (
    batch_group,
    batch_targets,
    render_batch,
    render_tiny,
    tiny_groups,
    tiny_rounds,
)
from bench_checks import (
    SHORT,
    Truth,
    check,
    fastest_peer,
    ids_line,
    is_numpy,
    judge,
    listed,
    missing_and_rounds,
    ratio,
    try_call,
)
from bench_decode import decode_group, decode_targets, render_decode
from bench_harness import (
    CORPORA,
    ENCODINGS,
    OK,
    Corpus,
    Results,
    Row,
    Section,
    Target,
    fmt_ratio,
    fmt_seconds,
    fmt_size,
    fmt_spread,
    fmt_throughput,
    log,
    md_table,
    nproc,
    one_cpu,
    race,
    status_note,
)
from bench_peers import Encoder, build_encoders


def encode_all(encode, texts: list[str]) -> list:
    return [encode(t) for t in texts]


def encode_groups(
    args, encoding: str, corpus: Corpus, encoders: list[Encoder], truth: Truth, results: Results
) -> list[list[Row]]:
    groups = []
    modes = {
        "whole text": [corpus.text],
        "per document" if len(corpus.docs) == 1 else f"{len(corpus.docs)} docs": corpus.docs,
    }
    for mode, texts in modes.items():
        what = f"{SHORT[encoding]} {corpus.name} {fmt_size(corpus.n_bytes)}, {mode}"
        want = truth.get(f"{corpus.name}:{mode}", texts)
        n_bytes = sum(len(t.encode("utf-8")) for t in texts)
        log(f"encode {what}: correctness check (also the warm-up)")
        group = []
        for e in encoders:
            labels = {
                "encoding": SHORT[encoding],
                "text": f"{corpus.name} {fmt_size(n_bytes)}, {mode}",
            }
            row = Row(what, e.tool, n_bytes, is_peer=e.is_peer, labels=labels)
            row.before_round = e.before_round
            group.append(row)
            if e.status != OK:
                row.status, row.note = e.status, e.note
                continue
            if e.encode is None:
                row.status, row.note = "not available", e.note
                continue
            row.fn = functools.partial(encode_all, e.encode, texts)
            result = try_call(row)
            if result is not None:
                check(
                    row,
                    [e.to_list(r) for r in result],
                    want,
                    results,
                    f"encode {what}",
                    texts,
                    truth.tk.decode if truth.tk else None,
                )
            del result
        race(group, args.rounds, f"encode {what}")
        groups.append(group)
    return groups


def render_encode(
    groups: list[list[Row]], encoders_seen: dict[str, str], rounds: int, pinned: bool
) -> str:
    table = []
    for group in groups:
        tk = next((r for r in group if r.tool == "tiktoken"), None)
        for row in group:
            best = fastest_peer(group, row)
            note = status_note(row)
            if row.cores is not None and row.cores > 1.3:
                note = f"used {row.cores:.1f} cores (CPU time / wall time)" + (
                    f"; {note}" if note else ""
                )
            if not row.is_peer and best is not None and row.timed_ok:
                kind = "numpy " if is_numpy(best) else "list " if not is_numpy(row) else ""
                note = f"fastest {kind}peer: {best.tool}" + (f"; {note}" if note else "")
            table.append(
                [
                    row.labels["encoding"],
                    row.labels["text"],
                    row.tool,
                    fmt_seconds(row.median),
                    fmt_throughput(row),
                    fmt_spread(row),
                    fmt_ratio(ratio(tk, row)),
                    fmt_ratio(ratio(best, row)),
                    note,
                ]
            )
    out = md_table(
        [
            "encoding",
            "text",
            "tool",
            "median s",
            "MB/s",
            "spread",
            "× tiktoken",
            "× fastest peer",
            "notes",
        ],
        table,
        right={3, 4, 5, 6, 7},
    )
    calls = "; ".join(f"{tool}: {call}" for tool, call in encoders_seen.items())
    pinned_note = (
        ", the calling thread pinned to one CPU (so a tool that starts threads of its own "
        "for one call, such as tokie, also runs on one core)"
        if pinned
        else ", without CPU pinning (not available here)"
    )
    return (
        out + f"\n\nOne thread, median of {rounds} rounds{pinned_note}. "
        '"× tiktoken" and "× fastest peer" = the median over the rounds of that tool\'s time '
        "/ this row's in the same round (above 1: this row is faster; bench/README.md, "
        '"Timing and noise", says why round by round, and why it can differ from the ratio '
        "of the two medians); the fastest peer is the non-bytepair row of the group whose ids were checked "
        "identical that this row is the fewest times faster than (so, by that ratio), like for "
        "like: a row that returns lists "
        "(bytepair's list path, tiktoken, ...) is set against the fastest peer call that "
        "returns lists, and bytepair (numpy) against the fastest peer numpy call (tokie (numpy), "
        "tokie's encode_batch_flat) where one was timed with identical ids, else against the "
        'fastest peer of any kind (the notes of bytepair\'s rows name it). "whole text" encodes the slice as one string; "docs" '
        "encodes its documents (exact byte ranges from the corpus manifest) one call each. "
        "The process's CPU time is measured with the wall time: a row whose call keeps more than "
        "one core busy says so. "
        f"Calls — {calls}."
    )


def encode_targets(groups: list[list[Row]]) -> list[Target]:
    targets = []
    comparisons = (
        (
            "≥ 5x tiktoken",
            5.0,
            lambda group, row: next((r for r in group if r.tool == "tiktoken"), None),
        ),
        ("≥ 1.2x the fastest peer", 1.2, fastest_peer),
    )
    for tool, label in (("bytepair", "list[int] path"), ("bytepair (numpy)", "numpy path")):
        ours = [next(r for r in group if r.tool == tool) for group in groups]
        if not any(row.timed_ok for row in ours):
            status = ours[0].status if ours else "not run"
            for name, _, _ in comparisons:
                targets.append(Target(f"encode, one thread, {label}: {name}", None, status))
            continue
        for name, threshold, reference in comparisons:
            values, failed, unmeasured, rounds = [], [], [], []
            for group, row in zip(groups, ours):
                where = f"{row.labels['encoding']} {row.labels['text']}"
                if not row.timed_ok:
                    failed.append(f"{where} ({row.status if row.status != OK else 'not timed'})")
                    continue
                other = reference(group, row)
                if ratio(other, row) is None:
                    why = (
                        "no peer timed with checked, identical ids"
                        if other is None
                        else f"{other.tool}: {other.status if other.status != OK else 'not timed'}"
                    )
                    unmeasured.append(f"{where} ({why})")
                    continue
                values.append((ratio(other, row), where, other.tool))
                rounds += [len(row.times), len(other.times)]
            passing = [v for v in values if v[0] >= threshold]
            detail = f"{len(passing)}/{len(groups)} groups"
            if values:
                low = min(values)
                detail += (
                    f"; lowest {low[0]:.2f}× ({low[1]}, vs {low[2]}); "
                    f"highest {max(v[0] for v in values):.2f}×"
                )
            failing = [v for v in values if v[0] < threshold]
            if failing:
                detail += "; below: " + listed([f"{v[1]} {v[0]:.2f}×" for v in failing])
            detail += missing_and_rounds(failed, unmeasured, rounds)
            targets.append(
                Target(
                    f"encode, one thread, {label}: {name}",
                    judge(values, failed, unmeasured, threshold),
                    detail,
                )
            )
    return targets


# ---------------------------------------------------------------------------
# The three suites together (one set of encoders per vocabulary at a time)
# ---------------------------------------------------------------------------


def run(args, ctx, suites: set[str], results: Results) -> None:
    enc_groups, batch_groups, tiny, dec_groups = [], [], [], []
    calls: dict[str, str] = {}
    notes: dict[str, str] = {}
    pool = ThreadPoolExecutor(nproc())
    pinned = None
    for encoding in ENCODINGS:
        log(f"loading the {encoding} encoders")
        encoders = build_encoders(ctx.data, encoding, ctx.workdir)
        for e in encoders:
            if e.encode_call:
                calls.setdefault(e.tool, e.encode_call)
            if e.note and e.status == OK:
                notes.setdefault(e.tool, e.note)
            elif e.status != OK:
                notes.setdefault(e.tool, f"{e.status}" + (f" ({e.note})" if e.note else ""))
        truth = Truth(next(e for e in encoders if e.tool == "tiktoken"))
        for name in CORPORA:
            corpus = ctx.corpus(name)
            if "encode" in suites:
                with one_cpu() as pinned:
                    enc_groups += encode_groups(args, encoding, corpus, encoders, truth, results)
            if "batch" in suites:
                batch_groups.append(
                    batch_group(args, encoding, corpus, encoders, truth, results, pool)
                )
            if "decode" in suites:
                dec_groups.append(decode_group(args, encoding, corpus, encoders, truth, results))
        if "batch" in suites and encoding == "cl100k_base":
            tiny = tiny_groups(args, encoders, ctx.corpus("en").text, results)
        del encoders, truth
        gc.collect()
    pool.shutdown()

    tools = "; ".join(f"{tool}: {note}" for tool, note in notes.items())
    if "encode" in suites:
        body = render_encode(enc_groups, calls, args.rounds, pinned is not None)
        body += f"\n\nTools — {tools}."
        results.sections.append(Section("Encoding, one thread", body))
        results.targets += encode_targets(enc_groups)
        results.checks.append(ids_line("encode", enc_groups))
    if "batch" in suites:
        body = render_batch(batch_groups, args.batch_rounds)
        if tiny:
            body += "\n\n**Small inputs**\n\n" + render_tiny(tiny, args.rounds, tiny_rounds(args))
        results.sections.append(Section(f"Encoding, batch ({nproc()} threads)", body))
        results.targets += batch_targets(batch_groups, tiny)
        results.checks.append(ids_line("batch", batch_groups + tiny))
    if "decode" in suites:
        results.sections.append(Section("Decoding", render_decode(dec_groups, args.rounds)))
        results.targets += decode_targets(dec_groups)
        results.checks.append(ids_line("decode", dec_groups))
