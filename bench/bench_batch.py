"""Batch encoding on all cores: encode_ordinary_batch and the numpy batch
against one thread, Python threads sharing a tokenizer (the GIL check),
the one-thread rows that do the parallel rows' work (their ceiling), and
the small-input rows (no per-call thread-pool start-up)."""

from __future__ import annotations

import functools
from typing import Callable, Optional

from bench_checks import SHORT, Truth, check, ratio, try_call
from bench_harness import (
    OK,
    Corpus,
    Results,
    Row,
    Target,
    fmt_ratio,
    fmt_seconds,
    fmt_size,
    fmt_spread,
    fmt_throughput,
    md_table,
    nproc,
    own_cpu,
    plural,
    race,
    rounds_caveat,
    status_note,
)
from bench_peers import Encoder

CHUNK_CHARS = 32_000  # batch texts: documents cut at blank lines into pieces of about this size
# The call whose speed-up shows that the GIL is released: each thread encodes every
# n-th text, so Python's per-task machinery (futures, queue, wake-ups) is not what is timed.
SHARE_CALL = "every n-th text each"
# ... with each thread pinned to a CPU of its own: the GIL target's row. Unpinned, this VM's
# kernel at times queues both threads on one CPU (each waits in the run queue, not for the
# GIL), which is scheduling, not the library; both rows are shown.
PINNED_SHARE_CALL = f"{SHARE_CALL}, each on a CPU of its own"
# One thread doing the work of the parallel rows: each thread's piece cache is its own, so
# a word in two threads' texts is merged twice. The texts in contiguous stretches (as
# encode_ordinary_batch splits them) or every n-th text (as the Python-thread rows), each
# share with a fresh cache; threads × (1-thread time / this row's) is what the parallel
# rows would reach with no other cost (a little more is possible: each core has caches of
# its own).
STRETCHES_CALL = "encode_ordinary per text, 1 thread, a fresh cache for each thread's stretch"
SHARES_CALL = "encode_ordinary per text, 1 thread, a fresh cache for each thread's n-th texts"
ORDINALS = {2: "second", 3: "third"}
TINY_BYTES = 50
TINY_COUNT = 1000


def chunks(docs: list[str], limit: int = CHUNK_CHARS) -> list[str]:
    """Documents longer than ``limit`` characters cut after a blank line into
    pieces of at least ``limit`` characters; the pieces of a document join
    back to it exactly."""
    out = []
    for doc in docs:
        start = 0
        while len(doc) - start > 2 * limit:
            cut = doc.find("\n\n", start + limit)
            if cut < 0:
                break
            out.append(doc[start : cut + 2])
            start = cut + 2
        out.append(doc[start:])
    return out


def tiny_texts(text: str, size: int = TINY_BYTES, count: int = TINY_COUNT) -> list[str]:
    """``count`` consecutive pieces of about ``size`` UTF-8 bytes."""
    data = text.encode("utf-8")
    out, pos = [], 0
    while len(out) < count and pos < len(data):
        end = min(pos + size, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:
            end += 1
        out.append(data[pos:end].decode("utf-8"))
        pos = end
    while len(out) < count:  # a very short corpus: repeat
        out.append(out[len(out) % max(1, len(out))])
    return out


def batch_group(
    args,
    encoding: str,
    corpus: Corpus,
    encoders: list[Encoder],
    truth: Truth,
    results: Results,
    pool,
) -> list[Row]:
    texts = chunks(corpus.docs)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    threads = nproc()
    what = f"{SHORT[encoding]} {corpus.name} {fmt_size(n_bytes)}, {plural(len(texts), 'text')}"
    want = truth.get(f"{corpus.name}:chunks", texts)
    by_tool = {e.tool: e for e in encoders}
    ours = by_tool["bytepair"]
    tok = ours.tokenizer  # type: ignore[attr-defined]
    labels = {
        "encoding": SHORT[encoding],
        "text": f"{corpus.name} {fmt_size(n_bytes)}, {plural(len(texts), 'text')}",
    }
    group: list[Row] = []

    def add(tool, call, fn, is_peer, to_lists=None, status=OK, note="", baseline=False):
        row = Row(what, tool, n_bytes, fn=fn, is_peer=is_peer, labels=dict(labels, call=call))
        row.baseline = baseline  # type: ignore[attr-defined]
        if not is_peer:
            row.before_round = ours.before_round
        group.append(row)
        if status != OK:
            row.status, row.note, row.fn = status, note, None
            return
        result = try_call(row)
        if result is not None:
            check(
                row,
                to_lists(result) if to_lists else result,
                want,
                results,
                f"batch {what}",
                texts,
                truth.tk.decode if truth.tk else None,
            )

    add(
        "bytepair",
        "encode_ordinary per text, 1 thread",
        lambda: [tok.encode_ordinary(t) for t in texts],
        False,
        baseline=True,
    )
    size = -(-len(texts) // threads)
    stretches = [texts[k * size : (k + 1) * size] for k in range(threads)]
    shares = [texts[k::threads] for k in range(threads)]

    def with_fresh_caches(parts: list[list[str]]) -> list[list[list[int]]]:
        ids = []
        for k, part in enumerate(parts):
            if k:
                tok.clear_cache()
            ids.append([tok.encode_ordinary(t) for t in part])
        return ids

    def in_text_order(ids_of_shares: list[list[list[int]]]) -> list[list[int]]:
        ids: list[list[int]] = [[] for _ in texts]
        for k, ids_of_share in enumerate(ids_of_shares):
            ids[k::threads] = ids_of_share
        return ids

    add(
        "bytepair",
        STRETCHES_CALL,
        lambda: [one for part in with_fresh_caches(stretches) for one in part],
        False,
    )
    add(
        "bytepair",
        SHARES_CALL,
        lambda: in_text_order(with_fresh_caches(shares)),
        False,
    )
    add("bytepair", "encode_ordinary_batch(texts)", lambda: tok.encode_ordinary_batch(texts), False)
    add("bytepair", "encode_batch(texts)", lambda: tok.encode_batch(texts), False)
    add(
        "bytepair",
        f"encode_ordinary from {threads} Python threads, one call a task",
        lambda: list(pool.map(tok.encode_ordinary, texts)),
        False,
    )

    def share_of_texts(k: int) -> list[list[int]]:
        return [tok.encode_ordinary(t) for t in texts[k::threads]]

    def pinned_share_of_texts(k: int) -> list[list[int]]:
        with own_cpu(k):
            return share_of_texts(k)

    def shared_out(share: Callable[[int], list[list[int]]]) -> list[list[int]]:
        return in_text_order(list(pool.map(share, range(threads))))

    for call, share in ((SHARE_CALL, share_of_texts), (PINNED_SHARE_CALL, pinned_share_of_texts)):
        add(
            "bytepair",
            f"encode_ordinary from {threads} Python threads, {call}",
            functools.partial(shared_out, share),
            False,
        )
    numpy_path = by_tool["bytepair (numpy)"]
    if numpy_path.batch is not None:
        add(
            "bytepair (numpy)",
            numpy_path.batch_call,
            functools.partial(numpy_path.batch, texts),
            False,
            to_lists=numpy_path.batch_to_lists,
        )
    else:
        add(
            "bytepair (numpy)",
            "encode_batch_to_numpy(texts)",
            None,
            False,
            status="not available",
            note=numpy_path.note,
        )
    tk = by_tool["tiktoken"]
    if tk.status == OK:
        add(
            "tiktoken",
            "encode_ordinary per text, 1 thread",
            lambda: [tk.encode(t) for t in texts],
            True,
        )
    for e in encoders:
        if not e.is_peer:
            continue
        if e.status != OK:
            add(e.tool, "—", None, True, status=e.status, note=e.note)
        elif e.batch is None:
            add(e.tool, "—", None, True, status="not available", note="no batch call")
        else:
            add(
                e.tool,
                e.batch_call,
                functools.partial(e.batch, texts),
                True,
                to_lists=e.batch_to_lists,
            )
    race(group, args.batch_rounds, f"batch {what}")
    return group


def render_batch(groups: list[list[Row]], rounds: int) -> str:
    table = []
    for group in groups:
        base = next(r for r in group if getattr(r, "baseline", False))
        tk_batch = next(
            (r for r in group if r.tool == "tiktoken" and "batch" in r.labels["call"]), None
        )
        for row in group:
            table.append(
                [
                    row.labels["encoding"],
                    row.labels["text"],
                    row.tool,
                    row.labels["call"],
                    fmt_seconds(row.median),
                    fmt_throughput(row),
                    fmt_spread(row),
                    fmt_ratio(ratio(base, row)),
                    fmt_ratio(ratio(tk_batch, row)),
                    "—" if row.cores is None else f"{row.cores:.1f}",
                    status_note(row),
                ]
            )
    threads = nproc()
    out = md_table(
        [
            "encoding",
            "texts",
            "tool",
            "call",
            "median s",
            "MB/s",
            "spread",
            "× bytepair 1 thread",
            "× tiktoken batch",
            "cores busy",
            "notes",
        ],
        table,
        right={4, 5, 6, 7, 8, 9},
    )
    return out + (
        f"\n\n{threads} cores, median of {rounds} rounds. Texts: the slice's documents, those "
        f"longer than {2 * CHUNK_CHARS:,} characters cut after a blank line into pieces of "
        f"about {CHUNK_CHARS:,} (so that {threads} threads can share the work); every tool "
        'encodes the same texts. "× bytepair 1 thread" = the median over the rounds of the '
        "time of bytepair's encode_ordinary called once per text on one thread / this row's in "
        "the same round. "
        f'"encode_ordinary from {threads} Python threads": a ThreadPoolExecutor (created '
        "before timing) either maps encode_ordinary over the texts (one call a task: with "
        "texts this small, Python's per-task machinery under the GIL weighs in) or gives "
        f"each of {threads} tasks every {ORDINALS.get(threads, f'{threads}th')} text "
        f"({SHARE_CALL!r}: the check that the "
        "GIL is released during encoding, else it would be no faster than one thread). "
        f"{PINNED_SHARE_CALL!r} pins each of those threads to a CPU of its own, which is the "
        "row the goal reads: unpinned, the kernel of this VM at times runs both threads on "
        "one CPU for milliseconds after other threads ran (measured: each thread's wall time "
        "inside encode_ordinary exceeded its CPU time by up to 21 ms a round, with nothing "
        "holding the GIL that long), so the unpinned rows vary from run to run. "
        '"cores busy" = the process\'s CPU time / wall time during the rounds. '
        f"{STRETCHES_CALL!r} and {SHARES_CALL!r} do on one thread the work of "
        f"{threads} threads that split the texts as encode_ordinary_batch does (in contiguous "
        "stretches) or as the Python-thread rows do: each thread's piece cache is its own, so "
        "a word that occurs in two threads' texts is merged by both. "
        f'{threads} × their "× bytepair 1 thread" is what those parallel rows would reach '
        "with no other cost (the goals list it; a little more is possible, each core "
        "having caches of its own)."
    )


def tiny_rounds(args) -> int:
    """Rounds of the 1000-text rows. A call there takes about a millisecond: each round is
    one call, timed alone, so that every bytepair call starts with its cache cleared, as in
    the other encode rows; --tiny-reps rounds for each of --rounds."""
    return args.rounds * max(1, min(20, args.tiny_reps))


def tiny_groups(args, encoders: list[Encoder], text: str, results: Results) -> list[list[Row]]:
    """Per-call costs: 1000 texts of 50 bytes in one batch, and a batch of one text."""
    texts = tiny_texts(text)
    by_tool = {e.tool: e for e in encoders}
    tok = by_tool["bytepair"].tokenizer  # type: ignore[attr-defined]
    tk = by_tool["tiktoken"]
    want = [tk.encode(t) for t in texts] if tk.status == OK else None
    groups = []

    what = f"{len(texts)} texts of ~{TINY_BYTES} B"
    group: list[Row] = []

    def add(
        group,
        what,
        tool,
        call,
        fn,
        calls,
        want,
        is_peer,
        to_lists=None,
        status=OK,
        note="",
        baseline=False,
    ):
        row = Row(what, tool, 0, is_peer=is_peer, labels={"text": what, "call": call}, calls=calls)
        row.baseline = baseline  # type: ignore[attr-defined]
        if not is_peer:
            row.before_round = by_tool["bytepair"].before_round
        group.append(row)
        if status != OK:
            row.status, row.note = status, note
            return
        row.fn = (lambda: [fn() for _ in range(calls)]) if calls > 1 else fn
        result = try_call(row)
        if result is not None:
            got = result[0] if calls > 1 else result
            check(row, to_lists(got) if to_lists else got, want, results, f"tiny batch {what}")

    add(
        group,
        what,
        "bytepair",
        "encode_ordinary per text",
        lambda: [tok.encode_ordinary(t) for t in texts],
        1,
        want,
        False,
        baseline=True,
    )
    add(
        group,
        what,
        "bytepair",
        "encode_ordinary_batch(texts)",
        lambda: tok.encode_ordinary_batch(texts),
        1,
        want,
        False,
    )
    np_path = by_tool["bytepair (numpy)"]
    if np_path.batch is not None:
        add(
            group,
            what,
            "bytepair (numpy)",
            np_path.batch_call,
            lambda: np_path.batch(texts),
            1,
            want,
            False,
            to_lists=np_path.batch_to_lists,
        )
    else:
        add(
            group,
            what,
            "bytepair (numpy)",
            "encode_batch_to_numpy(texts)",
            None,
            1,
            want,
            False,
            status="not available",
            note=np_path.note,
        )
    if tk.status == OK:
        add(
            group,
            what,
            "tiktoken",
            "encode_ordinary per text",
            lambda: [tk.encode(t) for t in texts],
            1,
            want,
            True,
        )
    for e in encoders:
        if e.is_peer and e.status == OK and e.batch is not None:
            batch = e.batch
            add(
                group,
                what,
                e.tool,
                e.batch_call,
                lambda batch=batch: batch(texts),
                1,
                want,
                True,
                to_lists=e.batch_to_lists,
            )
    race(group, tiny_rounds(args), f"tiny batch {what}")
    groups.append(group)

    # One tiny text: what a batch call costs beyond encoding it. About a microsecond is too
    # short to time alone, so a round repeats the call; only its first call is cold.
    one = texts[0]
    what1 = f"1 text of {len(one.encode('utf-8'))} B"
    want1 = [tk.encode(one)] if tk.status == OK else None
    calls = max(10, args.tiny_reps * 50)
    group = []
    add(
        group,
        what1,
        "bytepair",
        "encode_ordinary(text)",
        lambda: [tok.encode_ordinary(one)],
        calls,
        want1,
        False,
        baseline=True,
    )
    add(
        group,
        what1,
        "bytepair",
        "encode_ordinary_batch([text])",
        lambda: tok.encode_ordinary_batch([one]),
        calls,
        want1,
        False,
    )
    if tk.status == OK:
        tk_batch = by_tool["tiktoken"].batch
        add(
            group,
            what1,
            "tiktoken",
            "encode_ordinary(text)",
            lambda: [tk.encode(one)],
            calls,
            want1,
            True,
        )
        add(
            group,
            what1,
            "tiktoken",
            by_tool["tiktoken"].batch_call.replace("texts", "[text]"),
            lambda: tk_batch([one]),
            calls,
            want1,
            True,
        )
    race(group, args.rounds, f"tiny batch {what1}")
    groups.append(group)
    return groups


def render_tiny(groups: list[list[Row]], rounds: int, many_rounds: int) -> str:
    table = []
    for group in groups:
        base = next(r for r in group if getattr(r, "baseline", False))
        for row in group:
            median = row.median
            table.append(
                [
                    row.labels["text"],
                    row.tool,
                    row.labels["call"],
                    "—" if median is None else f"{median * 1e6:,.1f}",
                    fmt_spread(row),
                    fmt_ratio(ratio(base, row)),
                    status_note(row),
                ]
            )
    out = md_table(
        ["input", "tool", "call", "µs per call", "spread", "× bytepair loop", "notes"],
        table,
        right={3, 4, 5},
    )
    calls = groups[-1][0].calls if groups and groups[-1] else 0
    return out + (
        f"\n\ncl100k_base; texts cut from large_en. {TINY_COUNT} texts: median of "
        f"{plural(many_rounds, 'round')} of one call each, timed alone, bytepair's piece cache "
        "cleared (untimed) before each, so every bytepair call starts cold as in the other "
        "encode rows. 1 text: a call of a microsecond or so is too short to time alone, so a "
        f"round repeats it {calls:,} times and gives the time per call (median of "
        f"{plural(rounds, 'round')}); "
        "bytepair's cache is cleared only before a round's first call, and the other "
        f"{calls - 1:,} find the text's pieces in it (warm). Those rows measure what a call "
        "costs beyond the encoding (the batch call against encode_ordinary, both warm), not "
        "cold encoding; their ratio to tiktoken's rows is not a cold comparison. A thread pool "
        "started per call would show as a batch call much slower than the loop."
    )


def ceiling(group: list[Row], model_call: str) -> Optional[float]:
    """What a parallel row of ``group`` would reach with no other cost: threads × the speed,
    relative to one thread, of the row ``model_call`` that does its work on one thread."""
    base = next(r for r in group if getattr(r, "baseline", False))
    model = next((r for r in group if r.labels.get("call") == model_call), None)
    work = ratio(base, model) if model else None
    return None if work is None else nproc() * work


def batch_targets(groups: list[list[Row]], tiny: list[list[Row]]) -> list[Target]:
    targets = []
    # (ratio, where, ceiling, rounds behind the ratio) per group
    speedups, gil = [], []
    for group in groups:
        base = next(r for r in group if getattr(r, "baseline", False))
        where = f"{base.labels['encoding']} {base.labels['text'].split(',')[0]}"
        for row in group:
            if row.tool != "bytepair" or row is base:
                continue
            rounds = min(len(base.times), len(row.times))
            if row.labels["call"] == "encode_ordinary_batch(texts)":
                speedups.append((ratio(base, row), where, ceiling(group, STRETCHES_CALL), rounds))
            elif row.labels["call"].endswith(PINNED_SHARE_CALL):
                gil.append((ratio(base, row), where, ceiling(group, SHARES_CALL), rounds))
    for name, values, threshold in (
        ("batch (encode_ordinary_batch, 2 threads) ≥ 1.8x one thread", speedups, 1.8),
        (
            "GIL released: encode_ordinary from 2 Python threads (every n-th text each, "
            "each on a CPU of its own) ≥ 1.5x one thread",
            gil,
            1.5,
        ),
    ):
        known = [v for v in values if v[0] is not None]
        if not known:
            targets.append(Target(name, None, "not measured"))
            continue
        failing = [v for v in known if v[0] < threshold]
        detail = ", ".join(
            f"{w} {r:.2f}×"
            + ("" if c is None else f" ({nproc()} × the split's speed on one thread: {c:.2f}×)")
            for r, w, c, _ in known
        )
        detail += rounds_caveat(v[3] for v in known)
        targets.append(Target(name, not failing and len(known) == len(values), detail))
    if tiny:
        many, one = tiny[0], tiny[1] if len(tiny) > 1 else []
        base = next(r for r in many if getattr(r, "baseline", False))
        batch = next((r for r in many if r.tool == "bytepair" and r is not base), None)
        r = ratio(base, batch) if batch else None
        base1 = next((x for x in one if getattr(x, "baseline", False)), None)
        batch1 = next((x for x in one if x.tool == "bytepair" and x is not base1), None)
        extra = (
            (batch1.median - base1.median) * 1e6
            if base1 and batch1 and base1.timed_ok and batch1.timed_ok
            else None
        )
        met = None if r is None or extra is None else (r >= 1.0 and extra < 20)
        detail = (
            f"1000 texts of 50 B: batch {fmt_ratio(r)} the speed of the loop (want ≥ 1.00×); "
            f"a batch of one 50 B text costs "
            + ("—" if extra is None else f"{extra:+.1f} µs")
            + " more than encode_ordinary (want < 20 µs; both calls repeated with the text's "
            "pieces in bytepair's cache, see the table's notes)"
        )
        timed_rows = [x for x in (base, batch, base1, batch1) if x is not None and x.times]
        detail += rounds_caveat(len(x.times) for x in timed_rows)
        targets.append(Target("no per-call thread-pool start-up cost on small inputs", met, detail))
    return targets
