"""Measuring tokenizers on text: how many tokens, how evenly used, what a
word-level vocabulary would miss, and what a vocabulary size costs.

Every function takes a tokenizer with ``encode_ordinary`` and ``n_vocab``
(bytepair's :class:`Tokenizer` and :class:`SentencePieceTokenizer`) and plain
text. Words are the runs of non-whitespace characters.

- bytes per token: UTF-8 bytes of the text / tokens (higher: shorter sequences);
- fertility: tokens per word;
- vocabulary use: the share of ids that occur at least once;
- Rényi efficiency (Zouhar et al., 2023): the Rényi entropy of order alpha of
  the token distribution over log |V| — 1 when every id is used equally often;
- OOV: the share of held-out words a word-level vocabulary built on training
  text lacks, against the share of subword tokens that are unknown (byte-level
  BPE has none);
- embedding cost: |V| x d parameters, twice when input and output embeddings
  are separate.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Optional

_WORD = re.compile(r"\S+")


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def _check_heldout(text: str) -> list[str]:
    """The words of the held-out text; a ValueError when there is nothing to
    measure (every ratio would be 0 / 0)."""
    if not text:
        raise ValueError("the held-out text is empty (no bytes): nothing to measure")
    found = words(text)
    if not found:
        raise ValueError("the held-out text has no words (only whitespace): nothing to measure")
    return found


def _check_training(text: str) -> list[str]:
    """The words of the training text; a ValueError when it has none."""
    found = words(text)
    if not found:
        what = "is empty (no bytes)" if not text else "has no words (only whitespace)"
        raise ValueError(f"the training text {what}: nothing to learn a vocabulary from")
    return found


@dataclass(frozen=True)
class Metrics:
    """What :func:`measure` finds for one tokenizer on one text."""

    name: str
    vocab_size: int
    bytes: int
    words: int
    tokens: int
    bytes_per_token: float
    tokens_per_word: float
    vocab_used: float
    renyi_efficiency: float
    unknown_tokens: float  # share of tokens that are an unknown id

    def as_dict(self) -> dict:
        return asdict(self)


def renyi_efficiency(counts: Iterable[int], vocab_size: int, alpha: float = 2.5) -> float:
    """H_alpha(p) / log(vocab_size) of the token distribution ``counts``."""
    counts = [c for c in counts if c > 0]
    total = sum(counts)
    if total == 0 or vocab_size < 2:
        return 0.0
    if alpha == 1.0:
        entropy = -sum(c / total * math.log(c / total) for c in counts)
    else:
        entropy = math.log(sum((c / total) ** alpha for c in counts)) / (1.0 - alpha)
    return entropy / math.log(vocab_size)


def _unknown_ids(tokenizer) -> set[int]:
    model = getattr(tokenizer, "model", None)
    kinds = getattr(model, "kinds", None)
    return {i for i, kind in enumerate(kinds or ()) if kind == "unknown"}


def measure(tokenizer, text: str, name: str = "", alpha: float = 2.5) -> Metrics:
    """The metrics of ``tokenizer`` on ``text`` (special-token text is plain
    text); a ValueError when ``text`` is empty or has no words."""
    n_words = len(_check_heldout(text))
    ids = tokenizer.encode_ordinary(text)
    counts = Counter(ids)
    n_bytes, n_tokens = len(text.encode("utf-8")), len(ids)
    unknown = _unknown_ids(tokenizer)
    return Metrics(
        name=name,
        vocab_size=tokenizer.n_vocab,
        bytes=n_bytes,
        words=n_words,
        tokens=n_tokens,
        bytes_per_token=n_bytes / n_tokens if n_tokens else 0.0,
        tokens_per_word=n_tokens / n_words if n_words else 0.0,
        vocab_used=len(counts) / tokenizer.n_vocab,
        renyi_efficiency=renyi_efficiency(counts.values(), tokenizer.n_vocab, alpha),
        unknown_tokens=sum(counts[i] for i in unknown) / n_tokens if n_tokens else 0.0,
    )


@dataclass(frozen=True)
class OOV:
    """A word-level vocabulary of ``size`` words (the most frequent of the
    training text) against held-out text."""

    size: int
    word_oov_rate: float  # held-out words (running) not in the word vocabulary
    word_type_oov_rate: float  # distinct held-out words not in it


def word_oov(train_text: str, heldout_text: str, size: Optional[int] = None) -> OOV:
    """OOV rate of a word-level vocabulary of the ``size`` most frequent
    training words (all of them when None) on the held-out text; a
    ValueError when either text has no words."""
    ranked = Counter(_check_training(train_text)).most_common(size)
    vocab = {w for w, _ in ranked}
    held = _check_heldout(heldout_text)
    distinct = set(held)
    return OOV(
        size=len(vocab),
        word_oov_rate=sum(w not in vocab for w in held) / len(held),
        word_type_oov_rate=len(distinct - vocab) / len(distinct),
    )


def embedding_parameters(vocab_size: int, dim: int, tied: bool = True) -> int:
    """|V| x d, twice when input and output embeddings are separate."""
    return vocab_size * dim * (1 if tied else 2)


@dataclass(frozen=True)
class SweepRow:
    vocab_size: int
    bytes_per_token: float
    tokens_per_word: float
    seconds: float


def sweep(
    train_text: str, heldout_text: str, vocab_sizes: Sequence[int], **train_options
) -> list[SweepRow]:
    """Train at each vocabulary size on ``train_text`` and measure on
    ``heldout_text``; a ValueError, before any training, when either has no words."""
    _check_training(train_text)
    _check_heldout(heldout_text)
    import time
    import warnings

    from ..api import train

    rows = []
    for size in vocab_sizes:
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # stopping early is shown by the measured size
            tok = train(train_text, size, progress=False, **train_options)
        seconds = time.perf_counter() - started
        m = measure(tok, heldout_text)
        rows.append(SweepRow(tok.n_vocab, m.bytes_per_token, m.tokens_per_word, seconds))
    return rows


def sentence_report(tokenizer, sentences: Sequence[str]) -> list[str]:
    """Each sentence with its token count and boundaries (``|``), then the
    average number of tokens per sentence."""
    lines = []
    total = 0
    for sentence in sentences:
        ids = tokenizer.encode_ordinary(sentence)
        total += len(ids)
        pieces = [_piece_text(tokenizer, i) for i in ids]
        lines.append(f"{len(ids):>4}  {'|'.join(pieces)}")
    if sentences:
        lines.append(f"average: {total / len(sentences):.1f} tokens per sentence")
    return lines


def script_of(line: str) -> str:
    """The writing system most of a line's letters belong to: the first word
    of their Unicode names (LATIN, CYRILLIC, CJK, HIRAGANA, ARABIC, ...), with
    the Japanese kana counted as JAPANESE and CJK/HANGUL kept apart; "OTHER"
    when the line has no letter. Text in one script is usually one language
    family, so it stands in for the language of multilingual text."""
    import unicodedata

    counts: Counter = Counter()
    for char in line:
        if unicodedata.category(char)[0] != "L":
            continue
        first = unicodedata.name(char, "OTHER").split(" ")[0]
        counts["JAPANESE" if first in ("HIRAGANA", "KATAKANA") else first] += 1
    if not counts:
        return "OTHER"
    if counts.get("JAPANESE") and counts.get("CJK"):
        counts["JAPANESE"] += counts.pop("CJK")  # kanji inside Japanese text
    return counts.most_common(1)[0][0]


def by_script(text: str) -> dict[str, str]:
    """The lines of ``text`` grouped by :func:`script_of`, most text first."""
    groups: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.strip():
            groups.setdefault(script_of(line), []).append(line)
    ordered = sorted(groups.items(), key=lambda kv: -sum(len(line) for line in kv[1]))
    return {script: "\n".join(lines) for script, lines in ordered}


def _piece_text(tokenizer, token: int) -> str:
    if hasattr(tokenizer, "id_to_piece"):
        return tokenizer.id_to_piece(token)
    return tokenizer.decode_single_token_bytes(token).decode("utf-8", errors="backslashreplace")
