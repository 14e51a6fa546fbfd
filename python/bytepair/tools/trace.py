"""Byte-level BPE training, one merge at a time, for people to watch.

:func:`trace` yields a :class:`MergeStep` per merge: the pair-count table
(top pairs), the pairs tied with the winner and why the winner won (the
training rule: the highest count wins, ties go to the smallest
``(left_bytes, right_bytes)``), the new token, and the corpus after the merge.
It recounts every pair at every step, literally as the rule is stated, so it
is meant for corpora of up to a few MB and tens to hundreds of merges; its
merges are the trainer's (tested against :func:`bytepair.train`). Distinct
pre-tokens are counted by the core, as in training.

This is one of the two places in the product that import the readable
reference (:mod:`bytepair.reference`): showing the algorithm step by step is
its job, so it applies a merge with the reference's ``merge_pair``. The
``bytepair steps`` command prints these steps; the ``bytepair viz`` page
shows them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Optional, Union

from .. import _native
from ..pretokenizers import PretokenizerSpec, resolve
from ..reference.bpe import merge_pair
from ..training.corpus import (
    MAX_COUNT,
    MAX_VOCAB_SIZE,
    CorpusItem,
    add_texts,
    check_size,
    check_special_tokens,
)
from .display import format_merge, readable

Pair = tuple[bytes, bytes]


@dataclass(frozen=True)
class MergeStep:
    """One merge of training.

    rank: 0 for the first merge.
    pair: the winning pair of tokens (as bytes); ``token`` = left + right,
        with id ``token_id``; ``count`` = its weighted count when it won.
    top_pairs: the pair-count table before the merge, best first (by count,
        then the tie rule), at most ``top`` rows.
    tied: every pair whose count equals the winner's, the winner first.
    why: one sentence on why the winner won.
    corpus: the distinct pre-tokens after the merge as (symbols, count),
        most frequent first, at most ``show`` of them.
    changed_words: how many distinct pre-tokens held the pair.
    """

    rank: int
    pair: Pair
    token: bytes
    token_id: int
    count: int
    top_pairs: tuple[tuple[Pair, int], ...]
    tied: tuple[Pair, ...]
    why: str
    corpus: tuple[tuple[tuple[bytes, ...], int], ...]
    changed_words: int


def _byte(value: int) -> str:
    return f"0x{value:02X}"


def why_it_won(winner: Pair, count: int, tied: Sequence[Pair]) -> str:
    """The tie rule in words: where the winner's bytes first sort lower."""
    if len(tied) == 1:
        return f"the highest count ({count})"
    runner_up = tied[1]
    side, mine, theirs = next(
        (name, a, b) for name, a, b in zip(("left", "right"), winner, runner_up) if a != b
    )
    at = next((i for i, (x, y) in enumerate(zip(mine, theirs)) if x != y), None)
    if at is None:  # one is a prefix of the other: the shorter sorts first
        detail = f"{mine!r} is a prefix of {theirs!r}"
    else:
        detail = f"{_byte(mine[at])} < {_byte(theirs[at])}"
    others = len(tied) - 1
    return (
        f"tied at {count} with {others} other pair{'s' * (others != 1)}; the smallest "
        f"(left, right) bytes win: {side} {mine!r} before {theirs!r} ({detail})"
    )


def trace(
    corpus: Union[CorpusItem, Iterable[CorpusItem]],
    merges: Optional[int] = None,
    *,
    vocab_size: Optional[int] = None,
    special_tokens: Sequence[str] = (),
    pretokenizer: PretokenizerSpec = "gpt2",
    min_frequency: int = 1,
    top: int = 10,
    show: int = 10,
) -> Iterator[MergeStep]:
    """Train byte-level BPE step by step: one :class:`MergeStep` per merge.

    Stops after ``merges`` merges, or at ``vocab_size`` (specials and the 256
    bytes included), or when no pair is left or the best count is below
    ``min_frequency`` — whichever comes first.
    """
    specials = check_special_tokens(special_tokens)
    # The limits train() takes, checked as it checks them (a negative top
    # would silently drop rows from the end).
    if merges is not None:
        check_size("merges", merges, 0, MAX_VOCAB_SIZE)
    if vocab_size is not None:
        check_size("vocab_size", vocab_size, 256 + len(specials), MAX_VOCAB_SIZE)
    check_size("min_frequency", min_frequency, 1, MAX_COUNT)
    check_size("top", top, 0, MAX_COUNT)
    check_size("show", show, 0, MAX_COUNT)
    limits = [] if merges is None else [merges]
    if vocab_size is not None:
        limits.append(vocab_size - 256 - len(specials))
    if not limits:
        raise ValueError("say when to stop: merges=N or vocab_size=V")
    limit = min(limits)
    pre = resolve(pretokenizer)
    counter = _native.PretokenCounter(
        specials, pre.kind, pre.pattern if pre.kind == "regex" else None
    )
    add_texts(counter, corpus, progress=False)
    # Sorted by count, then bytes: the corpus view is the same on every run.
    items = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    words = [[bytes([b]) for b in word] for word, _ in items]
    weights = [count for _, count in items]
    ids = {bytes([b]): len(specials) + b for b in range(256)}

    for rank in range(max(limit, 0)):
        pair_counts: Counter = Counter()
        for symbols, weight in zip(words, weights):
            for pair in zip(symbols, symbols[1:]):
                pair_counts[pair] += weight
        if not pair_counts:
            return
        ranked = sorted(pair_counts.items(), key=lambda item: (-item[1], item[0]))
        winner, count = ranked[0]
        if count < min_frequency:
            return
        tied = tuple(pair for pair, c in ranked if c == count)
        token = winner[0] + winner[1]
        token_id = ids.setdefault(token, len(specials) + len(ids))
        changed = 0
        for i, symbols in enumerate(words):
            merged = merge_pair(symbols, winner)
            if len(merged) != len(symbols):
                words[i] = merged
                changed += 1
        yield MergeStep(
            rank=rank,
            pair=winner,
            token=token,
            token_id=token_id,
            count=count,
            top_pairs=tuple(ranked[:top]),
            tied=tied,
            why=why_it_won(winner, count, tied),
            corpus=tuple((tuple(w), c) for w, c in zip(words[:show], weights[:show])),
            changed_words=changed,
        )


# ---- The classroom view (``bytepair steps``) ----

_BOLD_GREEN, _YELLOW, _DIM, _RESET = "\033[1;32m", "\033[33m", "\033[2m", "\033[0m"


def render(step: MergeStep, *, color: bool = False) -> str:
    """A merge as lines of text: the winner and its count, why it won, the
    pair-count table (the winner and the pairs tied with it marked), and the
    corpus after the merge (symbols separated by spaces, × its count)."""

    def paint(text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    head = f"{format_merge(step.rank + 1, *step.pair)} (id {step.token_id}), count {step.count}"
    lines = [paint(head, _BOLD_GREEN), f"  why: {step.why}"]
    cells = []
    for pair, count in step.top_pairs:
        cell = f"{readable(pair[0])}+{readable(pair[1])} {count}"
        if pair == step.pair:
            cell = paint(cell, _BOLD_GREEN)
        elif pair in step.tied:
            cell = paint(cell, _YELLOW)
        cells.append(cell)
    lines.append("  pair counts: " + " | ".join(cells))
    words = []
    for symbols, count in step.corpus:
        shown = " ".join(
            paint(readable(s), _BOLD_GREEN) if s == step.token else readable(s) for s in symbols
        )
        words.append(f"{shown} ×{count}")
    lines.append("  corpus: " + paint(" | ", _DIM).join(words))
    return "\n".join(lines)
