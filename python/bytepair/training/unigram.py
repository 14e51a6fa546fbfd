"""Training a unigram language model (Kudo 2018, as SentencePiece does it):
words counted in the core, then seeds, EM and pruning in the core
(docs/unigram.md; equal bit for bit to ``bytepair.reference.unigram``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Optional, Union

from .. import _native
from ..errors import warn
from ..model import SentencePieceModel, SentencePieceNormalizer
from ..pretokenizers import PretokenizerSpec, resolve
from ..tokenizers.unigram import SentencePieceTokenizer, UnigramTrainingReport
from .corpus import Corpus, add_texts, progress_bar


def _number(name: str, value: object, low: float, high: float, *, low_open: bool, high_open: bool):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    # Written so that NaN fails every bound.
    above_low = value > low if low_open else value >= low
    below_high = value < high if high_open else value <= high
    if not (above_low and below_high):
        interval = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return float(value)


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return value


def _check_specials(special_tokens: Sequence[str], metaspace: bool, byte_fallback: bool) -> None:
    """Refuses, before the corpus is counted, the special tokens that would
    always repeat a piece's text (the core checks again)."""
    byte_pieces = {f"<0x{b:02X}>" for b in range(256)} if byte_fallback else set()
    for token in special_tokens:
        if token in byte_pieces:
            raise ValueError(
                f"special token {token!r} is the name of a byte piece of byte_fallback; "
                "choose another text"
            )
        if metaspace and token == "\u2581":
            raise ValueError(
                f"special token {token!r} is the metaspace character every word starts "
                "with, a piece of its own; choose another text"
            )


def train_unigram(
    corpus: Corpus,
    vocab_size: int,
    *,
    special_tokens: Sequence[str],
    pretokenizer: Union[str, PretokenizerSpec],
    character_coverage: float,
    max_piece_length: int,
    seed_size: int,
    shrinking_factor: float,
    num_sub_iterations: int,
    byte_fallback: bool,
    progress: Optional[bool],
    normalize: tuple[str, ...] = (),
) -> SentencePieceTokenizer:
    """See :func:`bytepair.train` (``model="unigram"``); ``normalize`` is a
    checked tuple (:func:`bytepair.normalization.resolve_normalize`)."""
    _positive_int("vocab_size", vocab_size)
    if not isinstance(byte_fallback, bool):
        raise TypeError(f"byte_fallback must be True or False, not {byte_fallback!r}")
    reserved = 1 + len(special_tokens) + (256 if byte_fallback else 0)
    if vocab_size <= reserved:
        raise ValueError(
            f"vocab_size {vocab_size} leaves no room for pieces after <unk>, "
            f"{len(special_tokens)} special tokens"
            + (" and the 256 byte pieces of byte_fallback" if byte_fallback else "")
            + f" ({reserved} ids)"
        )
    settings: _native.UnigramTrainSettings = {
        "vocab_size": vocab_size,
        "special_tokens": list(special_tokens),
        "character_coverage": _number(
            "character_coverage", character_coverage, 0, 1, low_open=True, high_open=False
        ),
        "max_piece_length": _positive_int("max_piece_length", max_piece_length),
        "seed_size": _positive_int("seed_size", seed_size),
        "shrinking_factor": _number(
            "shrinking_factor", shrinking_factor, 0, 1, low_open=True, high_open=True
        ),
        "num_sub_iterations": _positive_int("num_sub_iterations", num_sub_iterations),
        "byte_fallback": byte_fallback,
    }
    pre = None if pretokenizer == "metaspace" else resolve(pretokenizer)
    _check_specials(special_tokens, pre is None, byte_fallback)
    started = time.perf_counter()

    counter = _native.PretokenCounter(
        list(special_tokens),
        "metaspace" if pre is None else pre.kind,
        pre.pattern if pre is not None and pre.kind == "regex" else None,
        list(normalize),
    )
    add_texts(counter, corpus, progress)

    bar = progress_bar(progress, desc="unigram EM", unit=" steps")
    if bar is not None:  # until the first report: seeding can take a while on a big corpus
        bar.set_postfix(stage="seeding")

    def report(stage: str, table_size: int) -> None:
        bar.set_postfix(stage=stage, pieces=table_size, refresh=False)
        bar.update(1)

    try:
        trained = _native.train_unigram(counter, settings, report if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    pieces, scores, kinds = trained.pieces, trained.scores, trained.kinds
    if len(pieces) < vocab_size:
        warn(
            f"training stopped at {len(pieces)} pieces of the {vocab_size} requested: "
            "EM left no more pieces with an expected count of at least 0.5",
        )
    model = SentencePieceModel(
        pieces=tuple(pieces),
        scores=tuple(scores),
        kinds=tuple(kinds),
        unk_id=0,
        algorithm="unigram",
        byte_fallback=byte_fallback,
        normalizer=SentencePieceNormalizer(
            remove_extra_whitespaces=False, split_on_whitespace=True
        ),
        pretokenizer=pre,
        normalize=normalize,
    )
    report_ = UnigramTrainingReport(
        rounds=tuple(
            (r.size_at_start, tuple(r.objectives), r.size_after_em, r.size_after_prune)
            for r in trained.rounds
        ),
        vocab_size_requested=vocab_size,
        distinct_words=len(counter),
        seconds=time.perf_counter() - started,
    )
    return SentencePieceTokenizer(model, training=report_)
