"""Training classic character-level BPE (Sennrich, Haddow and Birch 2016;
subword-nmt's ``learn-bpe``); :class:`bytepair.tokenizers.char_bpe.CharBPE`
holds the result and describes the words and codes files.

Words are the space-separated runs of a line, counted over the corpus. A word
is a sequence of characters whose last character carries the end-of-word
marker. Training is the core's exact trainer over that alphabet: the highest
count wins; ties go to the smallest ``(left, right)`` text by default, or to
the largest with ``tie_rule="subword-nmt"``, which is subword-nmt's own rule.
It stops after ``num_merges`` merges, at ``vocab_size`` symbols, or when the
best count is below ``min_frequency`` (subword-nmt stops below 2).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Optional

from .. import _native
from ..errors import check_utf8, warn
from ..tokenizers.char_bpe import END_OF_WORD, CharBPE, check_end_of_word, symbols_of, words_of
from .corpus import MAX_COUNT, MAX_VOCAB_SIZE, Corpus, check_size, corpus_texts, progress_bar

TIE_RULES = ("smallest", "subword-nmt")


def word_counts(texts: Iterable[str]) -> Counter:
    """subword-nmt's vocabulary: the non-empty space-separated words of every
    line, lines as ``subword-nmt learn-bpe`` reads them from a file
    (:func:`~bytepair.tokenizers.char_bpe.words_of`)."""
    return Counter(word for text in texts for word in words_of(text))


def train_char_bpe(
    corpus: Corpus,
    *,
    num_merges: Optional[int] = None,
    vocab_size: Optional[int] = None,
    end_of_word: str = END_OF_WORD,
    min_frequency: int = 1,
    tie_rule: str = "smallest",
    progress: Optional[bool] = None,
) -> CharBPE:
    """Learn character-level BPE merges; see the module docstring. ``corpus``
    is read as :func:`bytepair.train` reads it. ``progress``: a bar of the
    texts counted, in bytes (default: when stderr is a terminal)."""
    if num_merges is None and vocab_size is None:
        raise ValueError("say when to stop: num_merges=N or vocab_size=V")
    if num_merges is not None:
        check_size("num_merges", num_merges, 0, MAX_VOCAB_SIZE)
    if vocab_size is not None:
        check_size("vocab_size", vocab_size, 1, MAX_VOCAB_SIZE)
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {', '.join(TIE_RULES)}, not {tie_rule!r}")
    check_end_of_word(end_of_word)
    check_size("min_frequency", min_frequency, 1, MAX_COUNT)
    bar = progress_bar(progress, desc="counting", unit="B", unit_scale=True)

    def texts() -> Iterator[str]:
        for i, text in enumerate(corpus_texts(corpus, None if bar is None else bar.update)):
            check_utf8(text, f"corpus text {i}")
            yield text

    try:
        counts = word_counts(texts())
    finally:
        if bar is not None:
            bar.close()
    words = [(symbols_of(w, end_of_word), c) for w, c in counts.items()]
    # The alphabet in text order: ties compare the symbols' UTF-8 bytes.
    alphabet = sorted({s for symbols, _ in words for s in symbols}, key=lambda s: s.encode())
    if vocab_size is not None and vocab_size < len(alphabet):
        # As byte-level BPE refuses a vocab_size below its 256 bytes.
        raise ValueError(
            f"vocab_size {vocab_size} is below the corpus's {len(alphabet)} symbols "
            "(characters, and characters that end a word), which are all in the vocabulary"
        )
    index = {s: i for i, s in enumerate(alphabet)}
    # The first limit reached: vocab_size symbols, or the alphabet and num_merges merges.
    by_merges = None if num_merges is None else len(alphabet) + num_merges
    limit = min(n for n in (vocab_size, by_merges) if n is not None)
    trained = _native.train_bpe_symbols(
        [([index[s] for s in symbols], c) for symbols, c in words],
        [s.encode("utf-8") for s in alphabet],
        {
            "vocab_size": limit,
            "min_frequency": min_frequency,
            "max_merges": num_merges,
            "largest_ties": tie_rule == "subword-nmt",
        },
    )
    tokens, merges, merge_counts = trained.tokens, trained.merges, trained.merge_counts
    stop = trained.stop_reason
    text_of = [t.decode("utf-8") for t in tokens]
    if stop != "vocab_size":
        warn(f"training stopped after {len(merges)} merges: {stop}")
    return CharBPE([(text_of[a], text_of[b]) for a, b in merges], end_of_word, merge_counts)
