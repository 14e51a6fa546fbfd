"""Loaded SentencePiece models: bytepair vs sentencepiece on the shared
``.model`` files (Llama 2's and BPEmb's BPE, two unigram test models), and
vs HF tokenizers on a Unigram ``tokenizer.json`` (T5's), same text, one
thread each: encoding (ids checked identical first) and decoding (the text
checked identical first)."""

from __future__ import annotations

import functools
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
TOKENIZER_JSON = "t5-small.tokenizer.json"  # in models/hf
CORPORA = ("en", "multilingual")


class _Peer:
    """A peer's name and its encode (text -> ids) and decode (ids -> text)."""

    def __init__(self, name: str, encode, decode) -> None:
        self.name, self.encode, self.decode = name, encode, decode


def _sentencepiece_peer(spm, path) -> _Peer:
    processor = spm.SentencePieceProcessor(model_file=str(path))
    return _Peer("sentencepiece", processor.encode, processor.decode)


def _tokenizers_peer(hf, path) -> _Peer:
    tokenizer = hf.Tokenizer.from_file(str(path))
    return _Peer(
        "HF tokenizers",
        lambda text: tokenizer.encode(text, add_special_tokens=False).ids,
        lambda ids: tokenizer.decode(ids, skip_special_tokens=False),
    )


def run(args, ctx, results: Results) -> None:
    import bytepair

    spm, hf = optional_import("sentencepiece"), optional_import("tokenizers")
    folder = ctx.data / "models" / "sentencepiece"
    models = []
    if spm is not None:
        paths = [folder / f"{name}.model" for name in MODELS]
        models += [(p, functools.partial(_sentencepiece_peer, spm)) for p in paths if p.is_file()]
    json_path = ctx.data / "models" / "hf" / TOKENIZER_JSON
    if hf is not None and json_path.is_file():
        models.append((json_path, functools.partial(_tokenizers_peer, hf)))
    if not models:
        why = "neither sentencepiece nor tokenizers installed, or no model files"
        log(f"sentencepiece: skipped ({why})")
        results.sections.append(Section("SentencePiece model files", f"Not measured: {why}."))
        return
    rows = []
    for path, make_peer in models:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = bytepair.load(path)
        peer = make_peer(path)
        for corpus_name in CORPORA:
            text = ctx.corpus(corpus_name).text
            name = path.name if path.suffix == ".json" else path.stem
            what = f"{name}, {corpus_name} {fmt_size(len(text.encode('utf-8')))}"
            log(f"sentencepiece {what}: correctness check (also the warm-up)")
            rows += compare(args, results, what, ours, peer, text)
    body = md_table(
        [
            "model, text",
            "call",
            "peer",
            "bytepair s",
            "peer s",
            "bytepair MB/s",
            "× peer",
        ],
        rows,
        right={3, 4, 5, 6},
    )
    body += (
        "\n\nbytepair: `bytepair.load(path)`, then `encode_ordinary(text)` and "
        "`decode(ids)`; sentencepiece: `SentencePieceProcessor(model_file=path)`, then "
        "`encode(text)` and `decode(ids)`; HF tokenizers: `Tokenizer.from_file(path)`, then "
        "`encode(text, add_special_tokens=False).ids` and "
        "`decode(ids, skip_special_tokens=False)`. One call on the whole slice, median of "
        f'{args.rounds} rounds, the two tools taking turns; "× peer" is the median '
        "of the rounds' ratios (above 1: bytepair is faster). MB/s counts the text's UTF-8 "
        "bytes for both calls. Before timing, bytepair's ids must equal the peer's and "
        "its decoded text the peer's decoded text. Llama 2's and BPEmb's models are "
        "SentencePiece BPE, the two test models and T5's tokenizer.json unigram."
    )
    results.sections.append(Section("SentencePiece model files", body))


def compare(args, results: Results, what: str, ours, peer: _Peer, text: str) -> list[list[str]]:
    mb = len(text.encode("utf-8")) / MB
    want = peer.encode(text)
    got = ours.encode_ordinary(text)
    if got != want:
        results.problems.append(
            f"ids DIFFER — {peer.name} {what}: {first_difference([got], [want])}"
        )
        return [[what, "encode", peer.name, "ids differ", "", "", ""]]
    results.checks.append(f"{peer.name} {what}: bytepair's ids are {peer.name}'s")
    if ours.decode(want) != peer.decode(want):
        results.problems.append(f"text DIFFERS — {peer.name} {what}: decode")
        return [[what, "decode", peer.name, "text differs", "", "", ""]]
    rows = []
    for call, mine, theirs, argument in (
        ("encode", ours.encode_ordinary, peer.encode, text),
        ("decode", ours.decode, peer.decode, want),
    ):
        log(f"sentencepiece {what}: {call}")
        mine_times, peer_times = taking_turns([mine, theirs], argument, args.rounds)
        median = statistics.median(mine_times)
        rows.append(
            [
                what,
                call,
                peer.name,
                fmt_seconds(median),
                fmt_seconds(statistics.median(peer_times)),
                f"{mb / median:.1f}",
                f"{paired_ratio(peer_times, mine_times):.2f}×",
            ]
        )
    return rows
