"""The unigram language model: bytepair vs SentencePiece's own trainer on the
same lines, same vocabulary size and settings: training time,
held-out quality (log-likelihood per byte, bytes per token) and Viterbi
encoding throughput, one thread each for encoding."""

from __future__ import annotations

import re
import statistics
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from bench_harness import (
    MB,
    Results,
    Section,
    Target,
    fmt_seconds,
    fmt_size,
    load_corpus,
    log,
    md_table,
    optional_import,
    paired_ratio,
    taking_turns,
    timed,
)

UNK_PENALTY = 10.0  # an unknown piece scores min_score - 10 in both libraries


def lines_of(text: str) -> list[str]:
    """Non-empty lines: sentencepiece trains on lines, so both tools get these."""
    return [line for line in text.split("\n") if line.strip()]


def corpora(args, data: Path) -> list[tuple[str, list[str], list[str]]]:
    """(name, training lines, held-out lines) for English and Japanese."""
    size = int(args.unigram_mb * MB)
    en = lines_of(load_corpus(data, "en", size + size // 10).text)
    cut = int(len(en) * 10 / 11)
    out = [(f"large_en {fmt_size(size)}", en[:cut], en[cut:])]
    novel = data / "corpus" / "small" / "wagahaiwa_nekodearu.txt"
    if novel.is_file():
        ja = lines_of(novel.read_text(encoding="utf-8-sig").replace("\r\n", "\n"))
        cut = int(len(ja) * 0.9)
        out.append(("Japanese novel (wagahaiwa_nekodearu)", ja[:cut], ja[cut:]))
    return out


def quality(ids_of, score_of, lines: list[str]) -> tuple[float, float]:
    """(log-likelihood per byte of the Viterbi segmentation, bytes per token)."""
    total_bytes = total_tokens = 0
    log_likelihood = 0.0
    for line in lines:
        ids = ids_of(line)
        total_bytes += len(line.encode("utf-8"))
        total_tokens += len(ids)
        log_likelihood += sum(score_of(i) for i in ids)
    return log_likelihood / total_bytes, total_bytes / max(total_tokens, 1)


def train_sentencepiece(spm, lines: list[str], vocab: int):
    """(seconds, processor) of sentencepiece's unigram trainer on ``lines``."""
    with tempfile.TemporaryDirectory() as tmp:
        corpus_file = Path(tmp) / "train.txt"
        corpus_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        prefix = str(Path(tmp) / "sp")
        options = dict(
            input=str(corpus_file),
            model_prefix=prefix,
            vocab_size=vocab,
            model_type="unigram",
            character_coverage=0.9995,
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            input_sentence_size=0,
            max_sentence_length=1 << 20,
            num_threads=2,
            minloglevel=2,
        )
        seconds, _, _ = timed(lambda: spm.SentencePieceTrainer.train(**options))
        return seconds, spm.SentencePieceProcessor(model_file=prefix + ".model")


@dataclass(frozen=True)
class LeftOut:
    """A corpus and vocabulary sentencepiece refuses as such (more pieces than
    the corpus allows it): there is no pair to compare, so no target rests on it."""

    why: str


def compare(args, spm, label: str, train_lines: list[str], heldout: list[str], vocab: int):
    """The two rows of one corpus and vocabulary size, and the target outcomes (a str,
    why they are not measured, when sentencepiece is absent or fails; a
    :class:`LeftOut` when it refuses that many pieces of the corpus)."""
    import bytepair

    heldout_text = "\n".join(heldout)
    mb = len(heldout_text.encode("utf-8")) / MB
    log(f"unigram {label}: bytepair")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours_s, ours, _ = timed(
            lambda: bytepair.train(train_lines, vocab, model="unigram", progress=False)
        )
    scores, kinds = ours.model.scores, ours.model.kinds
    unk = min(s for s, k in zip(scores, kinds) if k == "normal") - UNK_PENALTY
    ours_ll, ours_bpt = quality(
        ours.encode_ordinary, lambda i: unk if i == 0 else scores[i], heldout
    )

    def ours_row(seconds: float) -> list[str]:
        return [
            label,
            "bytepair",
            fmt_seconds(ours_s),
            f"{ours_ll:.4f}",
            f"{ours_bpt:.3f}",
            f"{mb / seconds:.1f}",
        ]

    def alone() -> list[list[str]]:
        [times] = taking_turns([ours.encode_ordinary], heldout_text, args.rounds)
        return [ours_row(statistics.median(times))]

    if spm is None:
        return alone() + [[label, "sentencepiece", "not installed", "", "", ""]], (
            "sentencepiece not installed"
        )
    log(f"unigram {label}: sentencepiece")
    try:
        sp_s, sp = train_sentencepiece(spm, train_lines, vocab)
    except RuntimeError as e:
        rows = alone() + [[label, "sentencepiece", f"error: {e}", "", "", ""]]
        too_many = re.search(r"Vocabulary size too high \((\d+)\)\. .*<= (\d+)", str(e))
        if too_many:  # the corpus is too small for this many pieces: no pair to compare
            return rows, LeftOut(
                f"sentencepiece makes at most {int(too_many[2]):,} pieces of this corpus"
            )
        return rows, f"sentencepiece error: {str(e)[:120]}"
    sp_scores = [sp.get_score(i) for i in range(sp.get_piece_size())]
    sp_unk = (
        min(s for i, s in enumerate(sp_scores) if not (sp.is_unknown(i) or sp.is_control(i)))
        - UNK_PENALTY
    )
    sp_ll, sp_bpt = quality(
        sp.encode, lambda i: sp_unk if sp.is_unknown(i) else sp_scores[i], heldout
    )
    ours_times, sp_times = taking_turns(
        [ours.encode_ordinary, sp.encode], heldout_text, args.rounds
    )
    rows = [ours_row(statistics.median(ours_times))]
    rows.append(
        [
            label,
            "sentencepiece",
            fmt_seconds(sp_s),
            f"{sp_ll:.4f}",
            f"{sp_bpt:.3f}",
            f"{mb / statistics.median(sp_times):.1f}",
        ]
    )
    speed = paired_ratio(sp_times, ours_times)
    ll_ok = ours_ll >= sp_ll - 0.01 * abs(sp_ll)
    outcomes = {
        "quality": (
            ll_ok and ours_bpt >= 0.99 * sp_bpt,
            f"{label}: log-likelihood/byte {ours_ll:.4f} vs {sp_ll:.4f}, "
            f"bytes/token {ours_bpt:.3f} vs {sp_bpt:.3f}",
        ),
        "train": (ours_s <= sp_s, f"{label}: {sp_s / ours_s:.2f}× sentencepiece"),
        "encode": (speed >= 1.0, f"{label}: {speed:.2f}× sentencepiece"),
    }
    return rows, outcomes


def run(args, ctx, results: Results) -> None:
    spm = optional_import("sentencepiece")
    rows = []
    targets: dict[str, list[tuple[bool, str]]] = {"quality": [], "train": [], "encode": []}
    unmeasured: list[str] = []  # "label (why)": no sentencepiece figure to compare with
    left_out: list[str] = []  # "label (why)": a pair that cannot exist (no verdict rests on it)
    for name, train_lines, heldout in corpora(args, ctx.data):
        for vocab in args.unigram_vocab_sizes:
            label = f"{name}, vocab {vocab:,}"
            more, outcomes = compare(args, spm, label, train_lines, heldout, vocab)
            rows += more
            if isinstance(outcomes, LeftOut):
                left_out.append(f"{label} ({outcomes.why})")
                continue
            if isinstance(outcomes, str):
                unmeasured.append(f"{label} ({outcomes})")
                continue
            for key, outcome in outcomes.items():
                targets[key].append(outcome)
    body = md_table(
        [
            "corpus, vocabulary",
            "tool",
            "training",
            "held-out log-likelihood / byte",
            "held-out bytes / token",
            "Viterbi encode MB/s (1 thread)",
        ],
        rows,
        right={2, 3, 4, 5},
    )
    body += (
        "\n\nBoth trained on the same lines (90% / 10% held out, by line order), same vocabulary "
        "size, character_coverage 0.9995, no normalization (sentencepiece: "
        "normalization_rule_name=identity, remove_extra_whitespaces=false; its other defaults, "
        "e.g. split_by_unicode_script, stay), training once each (bytepair on this process's "
        "threads, sentencepiece with num_threads=2). Quality: the Viterbi segmentation of each "
        "held-out line, its summed piece log-probabilities (an unknown piece: the lowest score "
        f"- {UNK_PENALTY:g}) per byte (higher is better), and UTF-8 bytes per token (higher: "
        "fewer tokens). Encoding: the held-out lines joined into one text, one call, median of "
        f"{args.rounds} rounds, the two tools taking turns; the goal reads the median of the "
        "rounds' ratios (see the encode table)."
    )
    results.sections.append(Section("Unigram LM", body))
    names = {
        "quality": "unigram: held-out log-likelihood per byte and bytes per token within 1% of SentencePiece's unigram trainer",
        "train": "unigram: training no slower than SentencePiece's",
        "encode": "unigram: Viterbi encoding throughput at least SentencePiece's",
    }
    for key, outcomes in targets.items():
        # NOT met when a measured pair falls short; not measured while a pair lacks its
        # sentencepiece figure; else met.
        met = (
            False
            if not all(ok for ok, _ in outcomes)
            else None
            if unmeasured or not outcomes
            else True
        )
        detail = "; ".join(
            [d for _, d in outcomes]
            + [f"not measured: {u}" for u in unmeasured]
            + [f"left out: {u}" for u in left_out]
        )
        results.targets.append(Target(names[key], met, detail or "not measured"))
