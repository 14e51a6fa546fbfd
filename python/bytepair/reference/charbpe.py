"""Character-level BPE training, written to be read: the oracle of
:func:`bytepair.char_bpe.train_char_bpe`. Every pair is recounted before each
merge (SPEC §1, over characters instead of bytes)."""

from __future__ import annotations

from collections import Counter

from bytepair.char_bpe import END_OF_WORD, symbols_of, word_counts
from bytepair.reference.bpe import merge_pair


def train(
    texts: list[str],
    num_merges: int,
    *,
    end_of_word: str = END_OF_WORD,
    min_frequency: int = 1,
    largest_ties: bool = False,
) -> list[tuple[tuple[str, str], int]]:
    """The merges with their counts. The winner is the most frequent pair;
    ties go to the smallest (left, right) text, or the largest."""
    words = [(symbols_of(w, end_of_word), c) for w, c in word_counts(texts).items()]
    merges = []
    for _ in range(num_merges):
        pairs: Counter = Counter()
        for symbols, count in words:
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += count
        if not pairs:
            break
        if largest_ties:
            pair = max(pairs, key=lambda p: (pairs[p], p))
        else:
            pair = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[pair] < min_frequency:
            break
        merges.append((pair, pairs[pair]))
        words = [(merge_pair(symbols, pair), count) for symbols, count in words]
    return merges
