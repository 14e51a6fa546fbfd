"""Classic character-level BPE (Sennrich, Haddow and Birch 2016; subword-nmt).

Words are the space-separated runs of a line (as subword-nmt reads a file:
lines end where ``str.splitlines()`` ends them, and each line, its ending
kept, is stripped of ``\\r``, ``\\n`` and spaces, then split at ``" "``). A
word is a sequence of characters whose last character carries the
end-of-word marker (``"low"`` -> ``l``, ``o``, ``w</w>``). Encoding replays
the merges by rank, lowest first, leftmost first, in the core (as for bytes);
:meth:`CharBPE.segment` writes a line as subword-nmt's ``apply-bpe`` does.
Training is ``bytepair.train(..., model="char-bpe")``. Files are subword-nmt's
codes files (:mod:`bytepair.formats.subword_nmt`); a codes file of version 0.1
keeps the marker a symbol of its own (``"low"`` -> ``l``, ``o``, ``w``,
``</w>``), as subword-nmt applies it.

Ids: subword-nmt has none, so the vocabulary is made from the merges alone,
the same for a trained model and for its codes file read back: first the 256
bytes (``<0x00>`` .. ``<0xFF>``), then the marker alone, then each character
of the merges and that character with the marker (in the order of their UTF-8
bytes), then each merge's result in rank order. A character in no merge is
encoded as its UTF-8 bytes (followed by the marker when it ends a word), so
every text has ids and decodes back.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Optional, Union

from .. import _native
from ..errors import check_utf8
from ..formats import subword_nmt
from ..formats.subword_nmt import CODES_BREAKS, CODES_VERSIONS
from ._contract import BatchDecoding, checked_batch, checked_ids

END_OF_WORD = "</w>"
N_BYTES = 256  # ids 0..255 are the bytes of characters in no merge


def symbols_of(word: str, end_of_word: str = END_OF_WORD, version: str = "0.2") -> list[str]:
    """``"low"`` -> ``["l", "o", "w</w>"]`` (codes version 0.2) or
    ``["l", "o", "w", "</w>"]`` (0.1)."""
    if version == "0.1":
        return [*word, end_of_word]
    return [*word[:-1], word[-1] + end_of_word]


def words_of(text: str) -> list[str]:
    """The words of ``text``, lines as subword-nmt's ``learn-bpe`` reads them
    from a file: its CLI reads with codecs.open, whose lines end where
    str.splitlines() ends them (also \\r, \\v, \\f, \\x1c-\\x1e, \\x85,
    \\u2028, \\u2029); a line keeps its ending, of which strip('\\r\\n ')
    drops only \\r and \\n: "a\\x0cb" has the words "a\\x0c" and "b"."""
    return [
        word
        for line in text.splitlines(keepends=True)
        for word in line.strip("\r\n ").split(" ")
        if word
    ]


def check_end_of_word(end_of_word: object) -> str:
    """``end_of_word`` if it can mark the end of a word in a codes file."""
    if not isinstance(end_of_word, str) or not end_of_word:
        raise ValueError("end_of_word must be a non-empty string")
    check_utf8(end_of_word, f"end_of_word {end_of_word!r}")
    for char, name in CODES_BREAKS.items():
        if char in end_of_word:
            raise ValueError(
                f"end_of_word {end_of_word!r} contains {name}: words are cut at spaces, and a "
                "codes file holds one 'left right' merge a line, so it could not be saved "
                "and read back"
            )
    return end_of_word


class CharBPE(BatchDecoding):
    """Merges learned over characters: encodes text to ids and back, and
    words and lines as subword-nmt does."""

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
        self.end_of_word = check_end_of_word(end_of_word)
        self.version = version
        self.counts = tuple(counts) if counts is not None else None
        # Symbols by id (base characters as met, merge results); the core
        # merges id sequences by rank, as it does bytes.
        self._symbols: list[str] = []
        self._ids: dict[str, int] = {}
        rules = [(self._id(a), self._id(b), self._id(a + b)) for a, b in self.merges]
        self._core = _native.CoreSymbolBPE(rules)
        self._cache: dict[str, tuple[str, ...]] = {}
        self._vocabulary = self._make_vocabulary()
        self._vocabulary_index = {s: N_BYTES + i for i, s in enumerate(self._vocabulary)}

    def _id(self, symbol: str) -> int:
        found = self._ids.get(symbol)
        if found is None:
            found = self._ids[symbol] = len(self._symbols)
            self._symbols.append(symbol)
        return found

    def _make_vocabulary(self) -> list[str]:
        """The symbols after the 256 bytes, by id (see the module docstring)."""
        marker = self.end_of_word
        characters: set[str] = set()
        for merge in self.merges:
            for symbol in merge:
                characters.update(symbol[: -len(marker)] if symbol.endswith(marker) else symbol)
        base = characters | {marker}
        if self.version == "0.2":
            base |= {c + marker for c in characters}
        vocabulary = sorted(base, key=lambda s: s.encode("utf-8", "surrogatepass"))
        known = set(vocabulary)
        for left, right in self.merges:
            if left + right not in known:
                known.add(left + right)
                vocabulary.append(left + right)
        return vocabulary

    # ---- Encoding ----

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

    def _ids_of(self, words: list[str]) -> list[list[int]]:
        """The ids of each word's symbols after the merges."""
        index = self._vocabulary_index
        marker = self.end_of_word
        out = []
        for symbols in self.encode_words(words):
            ids = []
            for symbol in symbols:
                found = index.get(symbol)
                if found is not None:
                    ids.append(found)
                    continue
                # A character in no merge (merges make only known symbols): its bytes.
                ends = symbol.endswith(marker) and symbol != marker
                ids.extend((symbol[: -len(marker)] if ends else symbol).encode("utf-8"))
                if ends:
                    ids.append(index[marker])
            out.append(ids)
        return out

    def encode(self, text: str) -> list[int]:
        """The ids of the words of ``text`` (cut as subword-nmt cuts lines
        into words), each word's symbols after the merges."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        check_utf8(text, "text")
        return [i for ids in self._ids_of(words_of(text)) for i in ids]

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        """:meth:`encode` of each text; the words new to the tokenizer are
        merged in the core, in parallel."""
        texts = checked_batch(texts)
        for i, text in enumerate(texts):
            check_utf8(text, f"text {i} of the batch")
        words = [words_of(text) for text in texts]
        ids = iter(self._ids_of([w for text_words in words for w in text_words]))
        return [[i for _ in text_words for i in next(ids)] for text_words in words]

    # ---- Decoding ----

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The UTF-8 bytes of the words of ``ids``, one space between two (the
        marker ends a word; a text's line breaks and runs of spaces are not in
        the ids)."""
        marker = self.end_of_word
        vocabulary = self._vocabulary
        out = bytearray()
        for i in checked_ids(ids, self.n_vocab):
            if i < N_BYTES:
                out.append(i)
                continue
            symbol = vocabulary[i - N_BYTES]
            if symbol.endswith(marker):
                out += symbol[: -len(marker)].encode("utf-8") + b" "
            else:
                out += symbol.encode("utf-8")
        return bytes(out[:-1] if out.endswith(b" ") else out)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """:meth:`decode_bytes` as text; bytes that are no UTF-8 (ids of
        bytes cut apart) are replaced unless ``errors="strict"``."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    # ---- The vocabulary ----

    @property
    def n_vocab(self) -> int:
        return N_BYTES + len(self._vocabulary)

    @property
    def vocab(self) -> dict[int, str]:
        """Id -> symbol (``<0xC3>`` for a byte; a word's last symbol carries the marker)."""
        return {
            **{b: f"<0x{b:02X}>" for b in range(N_BYTES)},
            **{N_BYTES + i: s for i, s in enumerate(self._vocabulary)},
        }

    def token_to_id(self, symbol: str) -> Optional[int]:
        """The id of the symbol ``symbol`` (not of a byte), or None."""
        return self._vocabulary_index.get(symbol)

    # ---- Files ----

    def save(self, path: Union[str, os.PathLike[str]], *, overwrite: bool = False) -> None:
        """Writes subword-nmt's codes file (what ``subword-nmt apply-bpe -c``
        reads); an existing file is only replaced with ``overwrite=True``."""
        if os.path.exists(path) and not overwrite:
            raise FileExistsError(f"{path} already exists; pass overwrite=True to replace it")
        subword_nmt.save(self.merges, self.version, path)  # refuses merges it cannot hold

    @classmethod
    def load(cls, path: Union[str, os.PathLike[str]], end_of_word: str = END_OF_WORD) -> CharBPE:
        """Reads subword-nmt's codes file (with or without the version line,
        which subword-nmt reads as version 0.1)."""
        merges, version = subword_nmt.load(path)
        return cls(merges, end_of_word, version=version)

    # subword-nmt's names for the two.
    save_codes = save
    load_codes = load

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.merges, self.end_of_word, self.counts, self.version))

    def __repr__(self) -> str:
        return (
            f"<CharBPE merges={len(self.merges)} n_vocab={self.n_vocab} "
            f"end_of_word={self.end_of_word!r} version={self.version!r}>"
        )
