"""Loading a vocabulary file: bytepair vs tiktoken and HF tokenizers (and the
other peers that read the same file), in this process, after one warm-up load.
The loaded tokenizers must encode a sample identically before any timing."""

from __future__ import annotations

import warnings

from bench_harness import (
    DIFFER,
    OK,
    Results,
    Row,
    Section,
    Target,
    fmt_ratio,
    fmt_seconds,
    fmt_spread,
    load_corpus,
    log,
    md_table,
    nproc,
    optional_import,
    paired_ratio,
    race,
    rounds_caveat,
    status_note,
)


def run(args, ctx, results: Results) -> None:
    from bench_peers import tiktoken_spec

    import bytepair

    data = ctx.data
    sample = load_corpus(data, "multilingual", 20_000).text + load_corpus(data, "code", 20_000).text
    tiktoken = optional_import("tiktoken")
    tokenizers = optional_import("tokenizers")
    tokie = optional_import("tokie")
    kitoken = optional_import("kitoken")
    groups: list[list[Row]] = []

    for encoding in ("cl100k_base", "o200k_base"):
        path = data / "models" / "tiktoken" / f"{encoding}.tiktoken"
        what = f"{path.name} ({path.stat().st_size / 1e6:.1f} MB)"
        candidates = [
            (
                "bytepair",
                "load_tiktoken(path)",
                lambda p=path: bytepair.load_tiktoken(p),
                lambda t: t.encode_ordinary,
                False,
            ),
            (
                "bytepair",
                "load(path)",
                lambda p=path: bytepair.load(p),
                lambda t: t.encode_ordinary,
                False,
            ),
        ]
        if tiktoken is not None:
            from tiktoken.load import load_tiktoken_bpe

            spec = tiktoken_spec(data, encoding)

            def load_tk(p=path, spec=spec):
                return tiktoken.Encoding(
                    name=spec["name"],
                    pat_str=spec["pat_str"],
                    mergeable_ranks=load_tiktoken_bpe(str(p)),
                    special_tokens=spec["special_tokens"],
                )

            candidates.append(
                (
                    "tiktoken",
                    "Encoding(mergeable_ranks=load_tiktoken_bpe(path), ...)",
                    load_tk,
                    lambda t: t.encode_ordinary,
                    True,
                )
            )
        if kitoken is not None:
            candidates.append(
                (
                    "kitoken",
                    "Kitoken.from_tiktoken_file(path)",
                    lambda p=path: kitoken.Kitoken.from_tiktoken_file(str(p)),
                    lambda t: t.encode,
                    True,
                )
            )
        groups.append(make_group(what, candidates, sample, results, tiktoken is not None))

    roberta = data / "models" / "hf" / "roberta-base.tokenizer.json"
    what = f"{roberta.name} ({roberta.stat().st_size / 1e6:.1f} MB)"
    candidates = [
        (
            "bytepair",
            "load(path)",
            lambda: bytepair.load(roberta),
            lambda t: t.encode_ordinary,
            False,
        )
    ]
    if tokenizers is not None:
        candidates.append(
            (
                "HF tokenizers",
                "Tokenizer.from_file(path)",
                lambda: tokenizers.Tokenizer.from_file(str(roberta)),
                lambda t: lambda s: t.encode(s, add_special_tokens=False).ids,
                True,
            )
        )
    if tokie is not None:
        candidates.append(
            (
                "tokie",
                "Tokenizer.from_json(path)",
                lambda: tokie.Tokenizer.from_json(str(roberta)),
                lambda t: lambda s: t.encode(s, add_special_tokens=False).ids,
                True,
            )
        )
    if kitoken is not None:
        candidates.append(
            (
                "kitoken",
                "Kitoken.from_tokenizers_file(path)",
                lambda: kitoken.Kitoken.from_tokenizers_file(str(roberta)),
                lambda t: t.encode,
                True,
            )
        )
    groups.append(make_group(what, candidates, sample, results, tokenizers is not None))

    for group in groups:
        race(group, args.rounds, f"load {group[0].group}")

    table = []
    targets = []  # (ratio, what, against) for each of bytepair's loads
    failed, unmeasured = [], []  # bytepair's loads that failed; those without a reference
    rounds = []
    for group in groups:
        ours = [r for r in group if not r.is_peer]
        reference_tool = "HF tokenizers" if "json" in group[0].group else "tiktoken"
        ref = next((r for r in group if r.tool == reference_tool), None)
        for row in group:
            x = (
                paired_ratio(ref.times, row.times)
                if ref and ref.timed_ok and row.timed_ok
                else None
            )
            table.append(
                [
                    row.group,
                    row.tool,
                    row.labels["call"],
                    fmt_seconds(row.median),
                    fmt_spread(row),
                    fmt_ratio(x),
                    "—" if row.cores is None else f"{row.cores:.1f}",
                    status_note(row),
                ]
            )
        for row in ours:
            where = f"{row.labels['call']} of {row.group.split(' ')[0]}"
            if not row.timed_ok:
                failed.append(f"{where} ({row.status if row.status != OK else 'not timed'})")
            elif ref is None or not ref.timed_ok:
                why = (
                    "not installed"
                    if ref is None
                    else ref.status
                    if ref.status != OK
                    else "not timed"
                )
                unmeasured.append(f"{where} ({reference_tool}: {why})")
            else:
                targets.append(
                    (
                        paired_ratio(ref.times, row.times),
                        where,
                        f"{reference_tool}"
                        + (
                            f" ({row.cores:.1f} cores busy vs {ref.cores:.1f})"
                            if row.cores is not None and ref.cores is not None
                            else ""
                        ),
                    )
                )
                rounds.append(min(len(row.times), len(ref.times)))
    body = md_table(
        ["file", "tool", "call", "median s", "spread", "× tiktoken / HF", "cores busy", "notes"],
        table,
        right={3, 4, 5, 6},
    )
    body += (
        f"\n\nMedian of {args.rounds} rounds in this process, after one warm-up load (the file is in "
        'the page cache). "× tiktoken / HF" = the median over the rounds of the time of tiktoken '
        "(for .tiktoken files) or HF tokenizers (for tokenizer.json) / this row's in the same "
        "round: above 1 is faster. Before timing, every "
        "loaded tokenizer encodes a 40 KB sample (multilingual + code) and must give the same ids "
        "as tiktoken / HF tokenizers. tiktoken reads the local file directly "
        "(TIKTOKEN_CACHE_DIR is empty: no cache copy). "
        '"cores busy" = the process\'s CPU time / wall time over the rounds. A row near 1.0 '
        f"loaded on one core; bytepair builds its tables on up to {nproc()} threads, so where its "
        "figure is higher, part of its ratio comes from the extra core rather than from less "
        "work. Below 1, the process waited (I/O, or other processes on the machine)."
    )
    results.sections.append(Section("Loading", body))
    ours = [r for g in groups for r in g if not r.is_peer]
    bad = [r for r in ours if r.status != OK]
    unchecked = [r for r in ours if not r.checked and r.status == OK]
    results.checks.append(
        "load: each loaded tokenizer encoded a 40 KB sample before timing; bytepair: "
        + (
            "**" + ", ".join(f"{r.labels['call']} of {r.group}: {r.status}" for r in bad) + "**"
            if bad
            else f"same ids as tiktoken / HF in {len(ours) - len(unchecked)} of {len(ours)} "
            f"loads, **{len(unchecked)} not checked** (tiktoken / HF tokenizers absent or failed)"
            if unchecked
            else f"same ids as tiktoken / HF in all {len(ours)} loads"
        )
    )
    slow = [x for x, _, _ in targets if x < 1.0]
    detail = f"{len(targets) - len(slow)}/{len(ours)} loads"
    if targets:
        detail += ": " + ", ".join(f"{w} {x:.2f}× {t}" for x, w, t in targets)
    if failed:
        detail += "; bytepair failed: " + ", ".join(failed)
    if unmeasured:
        detail += "; not measured: " + ", ".join(unmeasured)
    detail += rounds_caveat(rounds)
    # NOT met on a measured shortfall or a failed load; not measured while a load lacks
    # its reference; else met.
    met = False if slow or failed else None if unmeasured or not targets else True
    results.targets.append(Target("loading no slower than tiktoken / HF tokenizers", met, detail))


def make_group(what, candidates, sample, results: Results, have_reference: bool) -> list[Row]:
    """Rows for one file; the first load of each is the warm-up and the ids check."""
    group = []
    want = None
    reference = "HF tokenizers" if "json" in what else "tiktoken"
    loaded = {}
    log(f"load {what}: warm-up and ids check")
    for tool, call, load, encoder, is_peer in candidates:
        row = Row(what, tool, fn=load, is_peer=is_peer, labels={"call": call})
        group.append(row)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tok = load()
            loaded[(tool, call)] = encoder(tok)(sample)
        except Exception as e:
            row.status = f"error: {type(e).__name__}: {e}"[:200]
            row.fn = None
            continue
        if tool == reference:
            want = loaded[(tool, call)]
    for row in group:
        got = loaded.get((row.tool, row.labels["call"]))
        if got is None or row.status != OK:
            continue
        if want is None:
            row.add_note(f"ids not checked ({reference} not installed or failed to load)")
            continue
        row.checked = True
        if list(got) != list(want):
            row.status = DIFFER
            line = f"{row.tool} {row.labels['call']} of {what}: ids of the sample differ from {reference}'s"
            (results.peer_diffs if row.is_peer else results.problems).append(f"ids DIFFER — {line}")
    for row in group:
        if row.fn is not None and row.tool == "bytepair" and "roberta" in what:
            load = row.fn

            def quiet(load=load):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return load()

            row.fn = quiet
            row.add_note("its warnings about features bytepair does not apply are silenced")
    return group
