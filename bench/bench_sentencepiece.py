"""Loaded SentencePiece models: bytepair vs sentencepiece on the shared
``.model`` files (Llama 2's and BPEmb's BPE, two unigram test models), same
text, one thread each: encoding (ids checked identical first) and decoding
(the text checked identical first)."""

from __future__ import annotations

import statistics
import warnings

from bench_checks import first_difference
from bench_harness import (
    MB,
    Results,
    Section,
    fmt_seconds,
    fmt_size,
    log,
    md_table,
    optional_import,
    paired_ratio,
    taking_turns,
)

MODELS = (
    "llama2_tokenizer",
    "bpemb_en.wiki.bpe.vs100000",
    "sp_test_model",
    "sp_test_ja_model",
)
CORPORA = ("en", "multilingual")


def run(args, ctx, results: Results) -> None:
    import bytepair

    spm = optional_import("sentencepiece")
    folder = ctx.data / "models" / "sentencepiece"
    paths = [folder / f"{name}.model" for name in MODELS]
    present = [p for p in paths if p.is_file()]
    if spm is None or not present:
        why = "sentencepiece not installed" if spm is None else f"no .model files in {folder}"
        log(f"sentencepiece: skipped ({why})")
        results.sections.append(Section("SentencePiece model files", f"Not measured: {why}."))
        return
    rows = []
    for path in present:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = bytepair.load(path)
        theirs = spm.SentencePieceProcessor(model_file=str(path))
        for corpus_name in CORPORA:
            text = ctx.corpus(corpus_name).text
            what = f"{path.stem}, {corpus_name} {fmt_size(len(text.encode('utf-8')))}"
            log(f"sentencepiece {what}: correctness check (also the warm-up)")
            rows += compare(args, results, what, ours, theirs, text)
    body = md_table(
        [
            "model, text",
            "call",
            "bytepair s",
            "sentencepiece s",
            "bytepair MB/s",
            "× sentencepiece",
        ],
        rows,
        right={2, 3, 4, 5},
    )
    body += (
        "\n\nbytepair: `bytepair.load(path)`, then `encode_ordinary(text)` and "
        "`decode(ids)`; sentencepiece: `SentencePieceProcessor(model_file=path)`, then "
        "`encode(text)` and `decode(ids)`. One call on the whole slice, median of "
        f'{args.rounds} rounds, the two tools taking turns; "× sentencepiece" is the median '
        "of the rounds' ratios (above 1: bytepair is faster). MB/s counts the text's UTF-8 "
        "bytes for both calls. Before timing, bytepair's ids must equal sentencepiece's and "
        "its decoded text sentencepiece's decoded text. Llama 2's and BPEmb's models are "
        "SentencePiece BPE, the two test models unigram."
    )
    results.sections.append(Section("SentencePiece model files", body))


def compare(args, results: Results, what: str, ours, theirs, text: str) -> list[list[str]]:
    mb = len(text.encode("utf-8")) / MB
    want = theirs.encode(text)
    got = ours.encode_ordinary(text)
    if got != want:
        results.problems.append(
            f"ids DIFFER — sentencepiece {what}: {first_difference([got], [want])}"
        )
        return [[what, "encode", "ids differ", "", "", ""]]
    results.checks.append(f"sentencepiece {what}: bytepair's ids are sentencepiece's")
    decoded = theirs.decode(want)
    if ours.decode(want) != decoded:
        results.problems.append(f"text DIFFERS — sentencepiece {what}: decode")
        return [[what, "decode", "text differs", "", "", ""]]
    rows = []
    for call, mine, peer, argument in (
        ("encode", ours.encode_ordinary, theirs.encode, text),
        ("decode", ours.decode, theirs.decode, want),
    ):
        log(f"sentencepiece {what}: {call}")
        mine_times, peer_times = taking_turns([mine, peer], argument, args.rounds)
        median = statistics.median(mine_times)
        rows.append(
            [
                what,
                call,
                fmt_seconds(median),
                fmt_seconds(statistics.median(peer_times)),
                f"{mb / median:.1f}",
                f"{paired_ratio(peer_times, mine_times):.2f}×",
            ]
        )
    return rows
