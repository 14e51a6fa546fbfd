"""Classic character-level BPE (Sennrich, Haddow and Birch 2016; subword-nmt).

Words are the space-separated runs of a line (as subword-nmt's
``learn-bpe``: lines end where ``str.splitlines()`` ends them, as ``codecs.open``
reads them, and each line, its ending kept, is stripped of ``\\r``, ``\\n`` and
spaces, then split on ``" "``), counted. A word is a sequence of characters whose last character
carries the end-of-word marker (``"low"`` -> ``l``, ``o``, ``w</w>``). Training
is the core's exact trainer over that alphabet (SPEC §1: the highest count
wins; ties to the smallest ``(left, right)`` text by default, or to the largest
with ``tie_rule="subword-nmt"``, which is subword-nmt's own rule), stopping
after ``num_merges`` merges, at ``vocab_size`` symbols, or when the best count
is below ``min_frequency`` (subword-nmt stops below 2). Encoding replays the
merges by rank, lowest first, leftmost first, in the core (as for bytes). Codes files are subword-nmt's: ``#version: 0.2``,
then one ``left right`` merge a line. A file of version 0.1 (or without the
version line, which subword-nmt reads as 0.1) keeps the marker a symbol of its
own (``"low"`` -> ``l``, ``o``, ``w``, ``</w>``), as subword-nmt applies it.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Optional, Union

from . import _native
from .errors import FormatError, NotUtf8Error, decode_utf8, warn
from .tokenizer import _reject_surrogates
from .training import (
    MAX_COUNT,
    MAX_VOCAB_SIZE,
    CorpusItem,
    _texts,
    check_size,
    progress_bar,
)

END_OF_WORD = "</w>"
CODES_VERSIONS = ("0.1", "0.2")
TIE_RULES = ("smallest", "subword-nmt")
# A codes file holds one "left right" merge a line (subword-nmt strips spaces
# and \r\n from a line's ends): a symbol with one of these is read back as
# other merges, or not at all.
CODES_BREAKS = {" ": "a space", "\r": "a line break ('\\r')", "\n": "a line break ('\\n')"}


def word_counts(texts: Iterable[str]) -> Counter:
    """subword-nmt's vocabulary: the non-empty space-separated words of every
    line, lines as ``subword-nmt learn-bpe`` reads them from a file."""
    counts: Counter = Counter()
    for text in texts:
        # subword-nmt's CLI reads with codecs.open, whose lines end where
        # str.splitlines() ends them (also \r, \v, \f, \x1c-\x1e, \x85,
        # \u2028, \u2029); a line keeps its ending, of which strip('\r\n ')
        # drops only \r and \n: "a\x0cb" has the words "a\x0c" and "b".
        for line in text.splitlines(keepends=True):
            for word in line.strip("\r\n ").split(" "):
                if word:
                    counts[word] += 1
    return counts


def symbols_of(word: str, end_of_word: str = END_OF_WORD, version: str = "0.2") -> list[str]:
    """``"low"`` -> ``["l", "o", "w</w>"]`` (codes version 0.2) or
    ``["l", "o", "w", "</w>"]`` (0.1)."""
    if version == "0.1":
        return [*word, end_of_word]
    return [*word[:-1], word[-1] + end_of_word]


def _codes_version(line: str, path: Path) -> str:
    """The version a codes file's first line gives, as subword-nmt reads it
    (trailing ``.0`` parts dropped); none is 0.1."""
    if not line.startswith("#version:"):
        return "0.1"
    given = line.split()[-1] if line.split() else ""
    version = given
    while version.endswith(".0") and version.count(".") > 1:
        version = version[:-2]
    if version not in CODES_VERSIONS:
        raise FormatError(
            path,
            f"codes version {given!r}: subword-nmt and bytepair read versions "
            f"{' and '.join(CODES_VERSIONS)}",
            "line 1",
        )
    return version


def _check_end_of_word(end_of_word: object) -> str:
    """``end_of_word`` if it can mark the end of a word in a codes file."""
    if not isinstance(end_of_word, str) or not end_of_word:
        raise ValueError("end_of_word must be a non-empty string")
    _check_utf8(end_of_word, f"end_of_word {end_of_word!r}")
    for char, name in CODES_BREAKS.items():
        if char in end_of_word:
            raise ValueError(
                f"end_of_word {end_of_word!r} contains {name}: words are cut at spaces, and a "
                "codes file holds one 'left right' merge a line, so it could not be saved "
                "and read back"
            )
    return end_of_word


class CharBPE:
    """Merges learned over characters; encodes words and lines."""

    def __init__(
        self,
        merges: Sequence[tuple[str, str]],
        end_of_word: str = END_OF_WORD,
        counts: Optional[Sequence[int]] = None,
        version: str = "0.2",
    ) -> None:
        if version not in CODES_VERSIONS:
            raise ValueError(f"version must be one of {', '.join(CODES_VERSIONS)}, not {version!r}")
        self.merges = [(str(a), str(b)) for a, b in merges]
        self.end_of_word = _check_end_of_word(end_of_word)
        self.version = version
        self.counts = tuple(counts) if counts is not None else None
        # Symbols by id (base characters as met, merge results); the core
        # merges id sequences by rank, as it does bytes.
        self._symbols: list[str] = []
        self._ids: dict[str, int] = {}
        rules = [(self._id(a), self._id(b), self._id(a + b)) for a, b in self.merges]
        self._core = _native.CoreSymbolBPE(rules)
        self._cache: dict[str, tuple[str, ...]] = {}

    def _id(self, symbol: str) -> int:
        found = self._ids.get(symbol)
        if found is None:
            found = self._ids[symbol] = len(self._symbols)
            self._symbols.append(symbol)
        return found

    def encode_word(self, word: str) -> tuple[str, ...]:
        """The symbols of one word after the merges (the last one keeps the marker)."""
        return self.encode_words([word])[0]

    def encode_words(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        """:meth:`encode_word` of many words; the new ones are merged in the core, in parallel."""
        if isinstance(words, str):
            raise TypeError(
                "encode_words takes a sequence of words, not one str (which would be read "
                "as one word per character); use encode_word, or segment for a line"
            )
        if len(self._cache) + len(words) > 1 << 16:
            self._cache.clear()  # bounded memory; every word below is encoded again
        todo = list(dict.fromkeys(w for w in words if w and w not in self._cache))
        if todo:
            ids = [
                [self._id(s) for s in symbols_of(w, self.end_of_word, self.version)] for w in todo
            ]
            for word, merged in zip(todo, self._core.encode_words(ids)):
                self._cache[word] = tuple(self._symbols[i] for i in merged)
        return [self._cache[w] if w else () for w in words]

    def segment(self, line: str) -> str:
        """subword-nmt's output for a line (``apply-bpe``, ``BPE.process_line``):
        subwords separated by spaces, each but the last of a word followed by
        ``@@``, the marker dropped; the line's leading and trailing spaces and
        line breaks are kept, runs of spaces between words become one."""
        words_part = line.strip("\r\n ")
        lead = line[: len(line) - len(line.lstrip("\r\n "))]
        trail = line[len(line.rstrip("\r\n ")) :] if words_part else ""
        return lead + self._segment_words(words_part) + trail

    def _segment_words(self, text: str) -> str:
        out = []
        words = [w for w in text.split(" ") if w]
        for symbols in map(list, self.encode_words(words)):
            last = symbols[-1]
            symbols[-1] = (
                last[: -len(self.end_of_word)] if last.endswith(self.end_of_word) else last
            )
            if not symbols[-1]:
                symbols.pop()
            out += [s + "@@" for s in symbols[:-1]] + [symbols[-1]]
        return " ".join(out)

    def save_codes(self, path: Union[str, os.PathLike], *, overwrite: bool = False) -> None:
        """Write subword-nmt's codes file."""
        path = Path(path)
        if path.exists() and not overwrite:
            raise FileExistsError(f"{path} already exists; pass overwrite=True to replace it")
        for index, merge in enumerate(self.merges):  # a hand-built CharBPE may have any
            for symbol in merge:
                _check_utf8(symbol, f"merges[{index}] {merge!r}")
                problem = "an empty symbol" if not symbol else None
                for char, name in CODES_BREAKS.items():
                    if problem is None and char in symbol:
                        problem = f"{name} in {symbol!r}"
                if problem:
                    raise ValueError(
                        f"merges[{index}] {merge!r} has {problem}: a codes file holds one "
                        "'left right' merge a line, so it could not be read back"
                    )
        lines = [f"#version: {self.version}"] + [f"{a} {b}" for a, b in self.merges]
        path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))

    @classmethod
    def load_codes(cls, path: Union[str, os.PathLike], end_of_word: str = END_OF_WORD) -> CharBPE:
        """Read subword-nmt's codes file (with or without the version line,
        which subword-nmt reads as version 0.1)."""
        merges = []
        text = _read_codes(Path(path))
        if not text.strip():  # subword-nmt refuses it too; no writer makes one
            raise FormatError(path, "empty: a codes file holds a #version line or merges")
        version = _codes_version(text.split("\n", 1)[0], Path(path))
        for number, line in enumerate(text.split("\n"), start=1):
            if not line or (number == 1 and line.startswith("#version:")):
                continue
            parts = line.split(" ")
            if len(parts) != 2 or not all(parts):
                raise FormatError(path, f"expected 'left right', got {line!r}", f"line {number}")
            merges.append((parts[0], parts[1]))
        return cls(merges, end_of_word, version=version)


def _universal_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_codes(path: Path) -> str:
    """A codes file's text, its lines ended by \\n (\\r\\n and \\r too, as in
    text mode); FormatError naming the line and byte where it is not UTF-8."""
    data = path.read_bytes()  # FileNotFoundError names the path
    try:
        return _universal_newlines(decode_utf8(data))
    except NotUtf8Error as e:
        line = _universal_newlines(data[: e.offset].decode("utf-8")).count("\n") + 1
        raise FormatError(
            path, f"not UTF-8 text (byte 0x{e.byte:02X} at offset {e.offset})", f"line {line}"
        ) from None


def _check_utf8(text: str, what: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise _reject_surrogates(e, what) from None
    return text


def train_char_bpe(
    corpus: Union[CorpusItem, Iterable[CorpusItem]],
    *,
    num_merges: Optional[int] = None,
    vocab_size: Optional[int] = None,
    end_of_word: str = END_OF_WORD,
    min_frequency: int = 1,
    tie_rule: str = "smallest",
    progress: Optional[bool] = None,
) -> CharBPE:
    """Learn character-level BPE merges; see the module docstring. ``progress``:
    a bar of the texts counted, in bytes (default: when stderr is a terminal)."""
    if num_merges is None and vocab_size is None:
        raise ValueError("say when to stop: num_merges=N or vocab_size=V")
    if num_merges is not None:
        check_size("num_merges", num_merges, 0, MAX_VOCAB_SIZE)
    if vocab_size is not None:
        check_size("vocab_size", vocab_size, 1, MAX_VOCAB_SIZE)
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {', '.join(TIE_RULES)}, not {tie_rule!r}")
    _check_end_of_word(end_of_word)
    check_size("min_frequency", min_frequency, 1, MAX_COUNT)
    bar = progress_bar(progress, desc="counting", unit="B", unit_scale=True)

    def texts() -> Iterator[str]:
        for i, (text, size) in enumerate(_texts(corpus)):
            _check_utf8(text, f"corpus text {i}")
            if bar is not None:
                bar.update(len(text.encode("utf-8")) if size is None else size)
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
    limit = vocab_size if vocab_size is not None else len(alphabet) + num_merges
    if num_merges is not None and vocab_size is not None:
        limit = min(vocab_size, len(alphabet) + num_merges)
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
