"""The plain data of a BPE tokenizer, as every format reads and writes it."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Optional

from .normalization import check_normalize_field
from .pretokenizers import Pretokenizer, kind_and_pattern_problem


@dataclass(frozen=True)
class BPEModel:
    """Everything that defines a byte-level BPE tokenizer.

    tokens: ``tokens[i]`` is the bytes of id ``i``, or None when no token has
        that id (tiktoken vocabularies leave gaps below their special tokens).
        A special token's entry is its UTF-8 text.
    merges: pairs of token ids in rank order (rank 0 merges first); the result
        of a merge is the token whose bytes are the concatenation. None means
        tiktoken's rule: any adjacent pair whose concatenated bytes are a token
        merges, lowest token id first, and a piece that is itself a token
        encodes to it directly.
    special_tokens: special text -> id (ids point into ``tokens``).
    pretokenizer: how text is cut before merging.
    special_token_strip: special text -> (lstrip, rstrip): whether the special
        token, when cut out of text, swallows the whitespace on its left /
        right (HuggingFace's added-token options; RoBERTa's ``<mask>``).
        Specials not named here swallow nothing.
    normalize: what is done to the text between special tokens before it is
        cut: ``()``, or ``"nfc"``/``"nfkc"`` and/or ``"lowercase"``, in that
        order (:mod:`bytepair.normalization`).
    added_tokens: the entries of ``special_tokens`` that are not special but
        HuggingFace's non-special added tokens (``"special": false`` in a
        ``tokenizer.json``: GPT-NeoX's runs of spaces, Qwen2's
        ``<tool_call>``): ordinary tokens that are always cut out of the
        text, by every encode, and never refused. Each must be a key of
        ``special_tokens``; kept in the order of ``special_tokens``.

    The model is immutable: ``special_tokens`` and ``special_token_strip`` are
    read-only copies (:class:`types.MappingProxyType`) of the mappings given,
    in their order; ``dict(...)`` gives a plain dict; ``added_tokens`` is a
    tuple.
    """

    tokens: tuple[Optional[bytes], ...]
    merges: Optional[tuple[tuple[int, int], ...]]
    special_tokens: Mapping[str, int]
    pretokenizer: Pretokenizer
    special_token_strip: Mapping[str, tuple[bool, bool]] = field(default_factory=dict)
    normalize: tuple[str, ...] = ()
    added_tokens: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Each field's shape is checked here, so that a model built by hand gets
        # an error naming the field (as SentencePieceModel's do); the entries of
        # tokens and merges, a whole vocabulary, are left to the core, which
        # names the id or the rank.
        _check_sequence(self.tokens, "tokens", "a sequence of bytes (or None), one per id")
        if self.merges is not None:
            _check_sequence(self.merges, "merges", "a sequence of (id, id) pairs, or None")
        _check_pretokenizer(self.pretokenizer)
        # A frozen dataclass: fields are set past its __setattr__. The copies keep
        # a caller's dict (or a Tokenizer's model) from being changed afterwards.
        specials = _mapping(self.special_tokens, "special_tokens", "text -> id")
        object.__setattr__(self, "special_tokens", MappingProxyType(specials))
        strip = _mapping(
            self.special_token_strip, "special_token_strip", "text -> (lstrip, rstrip)"
        )
        for text, pair in strip.items():
            if text not in specials:
                raise ValueError(
                    f"{_NAME}.special_token_strip names {text!r}, which is not a key of "
                    "special_tokens"
                )
            if not (
                isinstance(pair, tuple)
                and len(pair) == 2
                and all(isinstance(b, bool) for b in pair)
            ):
                raise TypeError(
                    f"{_NAME}.special_token_strip[{text!r}] is {pair!r}, not a pair "
                    "(lstrip, rstrip) of bools"
                )
        object.__setattr__(self, "special_token_strip", MappingProxyType(strip))
        check_normalize_field(self.normalize, f"{_NAME}.normalize")
        added = self.added_tokens
        if isinstance(added, str):
            raise TypeError(
                f"{_NAME}.added_tokens must be a collection of str, not the string {added!r} "
                f"(for one token write ({added!r},))"
            )
        _check_sequence(added, "added_tokens", "a collection of str", Collection)
        chosen = set()
        for text in added:
            if not isinstance(text, str):
                raise TypeError(f"{_NAME}.added_tokens holds {text!r}, which is not a str")
            if text not in self.special_tokens:
                raise ValueError(
                    f"{_NAME}.added_tokens: {text!r} is not a key of special_tokens (an added "
                    "token is one of them, with its id there)"
                )
            chosen.add(text)
        # In the order of special_tokens, so that equal models compare equal.
        ordered = tuple(text for text in self.special_tokens if text in chosen)
        object.__setattr__(self, "added_tokens", ordered)

    def __reduce__(self):
        # A mappingproxy cannot be pickled (or deep-copied): rebuild from plain dicts.
        return (
            type(self),
            (
                self.tokens,
                self.merges,
                dict(self.special_tokens),
                self.pretokenizer,
                dict(self.special_token_strip),
                self.normalize,
                self.added_tokens,
            ),
        )


_NAME = "BPEModel"


def _check_sequence(value: object, field: str, expected: str, kind: type = Sequence) -> None:
    # A str or bytes is a sequence too, of characters or ints: never what is meant.
    if isinstance(value, (str, bytes, bytearray)) or not isinstance(value, kind):
        raise TypeError(f"{_NAME}.{field} must be {expected}, not {type(value).__name__}")


def _mapping(value: object, field: str, expected: str) -> dict:
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{_NAME}.{field} must be a mapping ({expected}), not {type(value).__name__}"
        )
    return dict(value)


def _check_pretokenizer(pretokenizer: object) -> None:
    name = f"{_NAME}.pretokenizer"
    if not isinstance(pretokenizer, Pretokenizer):
        raise TypeError(
            f"{name} must be a Pretokenizer (bytepair.pretokenizers.resolve('gpt2') gives "
            f"one), not {type(pretokenizer).__name__}"
        )
    problem = kind_and_pattern_problem(pretokenizer.kind, pretokenizer.pattern)
    if problem is not None:
        raise ValueError(f"{name}: {problem[1]}")


@dataclass(frozen=True)
class SentencePieceNormalizer:
    """SentencePiece's text preparation, applied before the lattice.

    precompiled_charsmap: SentencePiece's compiled normalization rules (a
        darts-clone trie plus replacement strings, as stored in ``.model``
        files and HF ``Precompiled`` normalizers); ``b""`` means identity.
    add_dummy_prefix: put one ``▁`` in front of the text (so the first word
        looks like every other word).
    remove_extra_whitespaces: strip leading/trailing spaces and collapse runs.
    escape_whitespaces: write each space as ``▁`` (U+2581).
    treat_whitespace_as_suffix: ``▁`` goes at the end of words, not the front.
    split_on_whitespace: cut the text into words before each ``▁`` and run
        one lattice per word (HF's Metaspace pre-tokenizer); SentencePiece
        itself runs one lattice over the whole text.
    """

    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    treat_whitespace_as_suffix: bool = False
    split_on_whitespace: bool = False


PIECE_KINDS = ("normal", "unknown", "control", "user_defined", "unused", "byte")


@dataclass(frozen=True)
class SentencePieceModel:
    """A unigram language model, or SentencePiece's score-ordered BPE.

    pieces: the text of each id (``▁`` stands for a space); byte pieces are
        ``<0x00>``..``<0xFF>``.
    scores: per id; for ``algorithm == "unigram"`` the log-probability of the
        piece, for ``"bpe"`` the merge priority (higher merges first).
    kinds: per id, one of :data:`PIECE_KINDS` (SentencePiece's piece types).
    unk_id: the id unknown characters map to (None when there is none).
    byte_fallback: characters without a piece become their UTF-8 byte pieces
        instead of ``unk_id``.
    normalizer: how text is prepared before segmentation.
    pretokenizer: None for SentencePiece-style whitespace (``normalizer``
        decides), or a BPE-side pre-tokenizer whose pieces are segmented
        one by one.
    normalize: for a unigram model trained here (the ``"bytepair"`` flavor),
        what is done to the text between special tokens before it is cut
        into words, as :attr:`BPEModel.normalize`: ``()``, or ``"nfc"``/
        ``"nfkc"`` and/or ``"lowercase"``, in that order. Models read from a
        file normalize as ``normalizer`` and their pipeline say.
    """

    pieces: tuple[str, ...]
    scores: tuple[float, ...]
    kinds: tuple[str, ...]
    unk_id: Optional[int]
    algorithm: str = "unigram"
    byte_fallback: bool = False
    normalizer: SentencePieceNormalizer = field(default_factory=SentencePieceNormalizer)
    pretokenizer: Optional[Pretokenizer] = None
    normalize: tuple[str, ...] = ()
