"""Character-level BPE training, written to be read: the oracle of
bytepair's character-level trainer. Every pair is recounted before each
merge (the byte-level rule of :mod:`bytepair.reference.bpe`, over characters
instead of bytes).

Words are read as subword-nmt's ``learn-bpe`` reads a file: lines end where
``str.splitlines()`` ends them, each line (its ending kept) is stripped of
``\\r``, ``\\n`` and spaces and split at ``" "``. A word is its characters,
the last one carrying the end-of-word marker.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from bytepair.reference.bpe import merge_pair

END_OF_WORD = "</w>"


def word_counts(texts: Iterable[str]) -> Counter:
    """How often each word occurs in ``texts``."""
    counts: Counter = Counter()
    for text in texts:
        for line in text.splitlines(keepends=True):
            for word in line.strip("\r\n ").split(" "):
                if word:
                    counts[word] += 1
    return counts


def symbols_of(word: str, end_of_word: str = END_OF_WORD) -> list[str]:
    """``"low"`` -> ``["l", "o", "w</w>"]``."""
    return [*word[:-1], word[-1] + end_of_word]


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
