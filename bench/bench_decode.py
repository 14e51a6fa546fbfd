"""Decoding: decode_bytes of tiktoken's ids of each slice, against tiktoken
and the peers that decode to bytes; the output must be the slice."""

from __future__ import annotations

import functools

from bench_checks import (
    SHORT,
    Truth,
    is_numpy,
    judge,
    listed,
    missing_and_rounds,
    ratio,
    try_call,
)
from bench_harness import (
    DIFFER,
    OK,
    Corpus,
    Results,
    Row,
    Target,
    fmt_ratio,
    fmt_seconds,
    fmt_spread,
    fmt_throughput,
    md_table,
    race,
    status_note,
)
from bench_peers import Encoder


def decode_group(
    args, encoding: str, corpus: Corpus, encoders: list[Encoder], truth: Truth, results: Results
):
    ids = truth.get(f"{corpus.name}:whole text", [corpus.text])
    if ids is None:
        ids = [encoders[0].encode(corpus.text)]
    ids = ids[0]
    want = corpus.text.encode("utf-8")
    what = f"{SHORT[encoding]} {corpus.name}, {len(ids):,} tokens"
    group = []
    for e in encoders:
        labels = {"encoding": SHORT[encoding], "text": f"{corpus.name}, {len(ids):,} tokens"}
        row = Row(what, e.tool, len(want), is_peer=e.is_peer, labels=labels)
        if e.status != OK:
            if not is_numpy(e):  # the numpy rows are encode-only
                row.status, row.note = e.status, e.note
                group.append(row)
            continue
        if e.decode is None:
            continue  # no decode-to-bytes call (HF returns str, bpe-openai str)
        group.append(row)
        row.fn = functools.partial(e.decode, ids)
        row.labels["call"] = e.decode_call
        out = try_call(row)
        row.checked = out is not None
        if out is not None and bytes(out) != want:
            row.status = DIFFER
            row.note = "output is not the input text"
            line = f"{e.tool} {e.decode_call} of the {what} ids is not the input text"
            (results.peer_diffs if e.is_peer else results.problems).append(line)
    race(group, args.rounds, f"decode {what}")
    return group


def render_decode(groups: list[list[Row]], rounds: int) -> str:
    table = []
    for group in groups:
        tk = next((r for r in group if r.tool == "tiktoken"), None)
        for row in group:
            table.append(
                [
                    row.labels["encoding"],
                    row.labels["text"],
                    row.tool,
                    row.labels.get("call", "—"),
                    fmt_seconds(row.median),
                    fmt_throughput(row),
                    fmt_spread(row),
                    fmt_ratio(ratio(tk, row)),
                    status_note(row),
                ]
            )
    out = md_table(
        [
            "encoding",
            "ids of",
            "tool",
            "call",
            "median s",
            "MB/s out",
            "spread",
            "× tiktoken",
            "notes",
        ],
        table,
        right={4, 5, 6, 7},
    )
    return out + (
        f'\n\nMedian of {rounds} rounds ("× tiktoken": of the rounds\' ratios, as in the encode '
        "table); tiktoken's ids of the whole slice, decoded to bytes "
        "(checked equal to the slice); throughput in MB of output. HF tokenizers and bpe-openai "
        "only decode to str, so they are not in this table."
    )


def decode_targets(groups: list[list[Row]]) -> list[Target]:
    name = "decode_bytes ≥ tiktoken's throughput"
    values, failed, unmeasured, rounds = [], [], [], []
    for group in groups:
        ours = next((r for r in group if r.tool == "bytepair"), None)
        tk = next((r for r in group if r.tool == "tiktoken"), None)
        where = f"{group[0].labels['encoding']} {group[0].labels['text'].split(',')[0]}"
        if ours is None or not ours.timed_ok:
            failed.append(f"{where} ({ours.status if ours else 'no row'})")
        elif ratio(tk, ours) is None:
            why = "tiktoken: " + (tk.status if tk is not None and tk.status != OK else "not timed")
            unmeasured.append(f"{where} ({why})")
        else:
            values.append((ratio(tk, ours), where))
            rounds += [len(ours.times), len(tk.times)]
    if not values and not failed:
        return [
            Target(name, None, "not measured" + (": " + listed(unmeasured) if unmeasured else ""))
        ]
    passing = [v for v in values if v[0] >= 1.0]
    detail = f"{len(passing)}/{len(groups)} groups: " + ", ".join(
        f"{w} {r:.2f}×" for r, w in values
    )
    detail += missing_and_rounds(failed, unmeasured, rounds)
    return [Target(name, judge(values, failed, unmeasured, 1.0), detail)]
