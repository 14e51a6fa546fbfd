"""HuggingFace tokenizers' encoding of a Unigram ``tokenizer.json``, in readable Python.

``encode(model, pipeline, text)`` gives
``tokenizers.Tokenizer.encode(text, add_special_tokens=False).ids`` for a file read by
:mod:`bytepair.formats.hf_unigram`. tokenizers does not do what sentencepiece does
(:mod:`bytepair.reference.sentencepiece`); the differences that change ids:

1. Added tokens are cut out of the raw text first (leftmost, then longest); tokens with
   ``normalized: true`` are cut out of each normalized part afterwards.
2. The charsmap is read per extended grapheme cluster with the *shortest* matching rule
   (:func:`bytepair.reference.normalize.apply_charsmap_tokenizers`), not per position
   with the longest; no whitespace rules besides the file's Replace steps. NFC, NFKC
   and Lowercase steps are bytepair's normalization (:func:`bytepair.reference.bpe.normalize`).
3. Pre-tokenization: optional WhitespaceSplit (cut at Unicode White_Space, dropping it)
   or the Split that isolates characters of no normal piece (bytepair's own export),
   then Metaspace on each piece: spaces become ``▁``, a ``▁`` is put in front unless
   the piece already starts with one (prepend_scheme always; "first": only the piece at
   the start of the text), and with ``split`` the piece is cut before every ``▁``.
4. One lattice per piece, scored in f64 (no float32 rounding, no shifting); candidates
   are ALL vocabulary entries (no kinds); the unknown segment scores ``min(all scores)
   - 10``. Ties go to the segment that starts first.
5. Consecutive segments whose id is unk_id are fused into one string; each segment's
   text is looked up in the vocabulary; a text that is not there becomes its byte
   pieces (byte_fallback, when all of them exist) or unk_id.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Optional

import regex  # grapheme clusters (\X); a dependency of bytepair

from ..formats.hf_decoder import apply_replace, decode_tokens
from ..formats.hf_unigram import (
    PRECOMPILED,
    UNICODE_STEPS,
    HFPipeline,
    Prepend,
    Replace,
    Strip,
    decoder_json,
    decoder_steps,
    known_characters,
)
from ..model import SentencePieceModel
from .bpe import normalize as normalize_as_spec
from .bpe import split_special
from .normalize import SPACE_SYMBOL, apply_charsmap_tokenizers
from .sentencepiece import UNK_PENALTY, best_path, byte_piece

# Rust's char::is_whitespace (the Unicode White_Space property); Python's str.isspace
# also counts U+001C..U+001F, which Rust does not.
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


@dataclass
class _Tables:
    ids: dict[str, int]
    max_piece_length: int
    unk_score: float


_tables: dict[int, tuple[SentencePieceModel, _Tables]] = {}


def _tables_of(model: SentencePieceModel) -> _Tables:
    cached = _tables.get(id(model))
    if cached is not None and cached[0] is model:
        return cached[1]
    ids: dict[str, int] = {}
    for index, piece in enumerate(model.pieces):
        ids[piece] = index  # tokenizers keeps the last id of a repeated piece
    tables = _Tables(
        ids=ids,
        max_piece_length=max(len(piece) for piece in model.pieces),
        unk_score=min(model.scores) - UNK_PENALTY,
    )
    if len(_tables) > 8:
        _tables.clear()
    _tables[id(model)] = (model, tables)
    return tables


# ---------------------------------------------------------------------------
# Normalizer and pre-tokenizer


def normalize(model: SentencePieceModel, pipeline: HFPipeline, text: str) -> str:
    """The file's normalizer steps, in order."""
    for step in pipeline.normalizers:
        if step == PRECOMPILED:
            text = apply_charsmap_tokenizers(text, model.normalizer.precompiled_charsmap)
        elif isinstance(step, Replace):
            text = apply_replace(step, text)
        elif isinstance(step, Prepend):
            text = step.prepend + text if text else text
        elif step in UNICODE_STEPS:
            text = normalize_as_spec(text, (step,))
        elif isinstance(step, Strip):
            start, end = 0, len(text)
            while step.left and start < end and text[start] in WHITE_SPACE:
                start += 1
            while step.right and end > start and text[end - 1] in WHITE_SPACE:
                end -= 1
            text = text[start:end]
        else:
            raise ValueError(f"unknown normalizer step {step!r}")
    return text


def _whitespace_split(text: str) -> list[tuple[int, str]]:
    """(start, word) for the runs of non-White_Space characters of ``text``."""
    words = []
    start = None
    for index, char in enumerate(text):
        if char in WHITE_SPACE:
            if start is not None:
                words.append((start, text[start:index]))
                start = None
        elif start is None:
            start = index
    if start is not None:
        words.append((start, text[start:]))
    return words


def _isolate_unknown(model: SentencePieceModel, text: str) -> list[tuple[int, str]]:
    """The Split (behavior Isolated) of :func:`unknown_characters_pattern`:
    (start, part) for the runs of known characters and, between them, each
    unknown character (with byte fallback) or run of them (without)."""
    known = known_characters(model)
    parts: list[tuple[int, str, bool]] = []
    for index, char in enumerate(text):
        is_known = char in known
        joins = parts and (parts[-1][2] == is_known) and (is_known or not model.byte_fallback)
        if joins:
            start, part, _ = parts[-1]
            parts[-1] = (start, part + char, is_known)
        else:
            parts.append((index, char, is_known))
    return [(start, part) for start, part, _ in parts]


def _cut_before_spaces(word: str) -> list[str]:
    """Metaspace's split: a new piece starts at every ``▁``."""
    pieces = []
    start = 0
    for index in range(1, len(word)):
        if word[index] == SPACE_SYMBOL:
            pieces.append(word[start:index])
            start = index
    pieces.append(word[start:])
    return [piece for piece in pieces if piece]


def pre_tokenize(
    model: SentencePieceModel,
    pipeline: HFPipeline,
    text: str,
    at_text_start: bool,
    lead: int = 0,
) -> list[str]:
    """The pieces tokenizers' pre-tokenizer cuts normalized ``text`` into.

    ``at_text_start``: ``text`` begins the whole input (for prepend_scheme
    "first"); ``lead``: how many leading characters of ``text`` the input's
    first character became (:func:`_first_character_lead`): a word starting
    among them starts the input too.
    """
    if not text:
        return []
    if pipeline.isolate_unknown:
        return [
            piece
            for start, part in _isolate_unknown(model, text)
            for piece in pre_tokenize(
                model, replace(pipeline, isolate_unknown=False), part, at_text_start and start == 0
            )
        ]
    words = _whitespace_split(text) if pipeline.whitespace_split else [(0, text)]
    prepend = model.normalizer.add_dummy_prefix
    pieces: list[str] = []
    for start, word in words:
        word = word.replace(" ", SPACE_SYMBOL)
        if prepend and not word.startswith(SPACE_SYMBOL):
            if not pipeline.prepend_first_only or (at_text_start and (start == 0 or start < lead)):
                word = SPACE_SYMBOL + word
        if model.normalizer.split_on_whitespace:
            pieces.extend(_cut_before_spaces(word))
        else:
            pieces.append(word)
    return pieces


# ---------------------------------------------------------------------------
# The model


def _segment_ids(model: SentencePieceModel, piece: str) -> list[int]:
    """tokenizers' Unigram on one pre-tokenized piece."""
    tables = _tables_of(model)
    scores = model.scores

    def lookup(candidate: str) -> Optional[tuple[int, float]]:
        piece_id = tables.ids.get(candidate)
        return None if piece_id is None else (piece_id, scores[piece_id])

    segments = best_path(piece, lookup, tables.max_piece_length, tables.unk_score, "float64")
    # Fuse runs of unknown segments (and of unk_id's own piece) into one text.
    texts: list[str] = []
    previous_unknown = False
    for text, piece_id in segments:
        unknown = piece_id is None or piece_id == model.unk_id
        if unknown and previous_unknown:
            texts[-1] += text
        else:
            texts.append(text)
        previous_unknown = unknown
    ids: list[int] = []
    for text in texts:
        if text in tables.ids:
            ids.append(tables.ids[text])
            continue
        if model.byte_fallback:
            byte_ids = [tables.ids.get(byte_piece(byte)) for byte in text.encode("utf-8")]
            if all(byte_id is not None for byte_id in byte_ids):
                ids.extend(byte_id for byte_id in byte_ids if byte_id is not None)
                continue
        if model.unk_id is None:
            raise ValueError(f"{text!r} has no piece and the model has no unk_id")
        ids.append(model.unk_id)
    return ids


def _first_character_lead(
    model: SentencePieceModel, pipeline: HFPipeline, part: str, normalized: str
) -> int:
    """With WhitespaceSplit and prepend_scheme "first": how many leading
    characters of ``normalized`` the first character of ``part`` became.
    tokenizers decides "first" by a word's offset in the input, so a word
    made of what the input's first character became starts it (NFKC makes
    ``" \u0308"`` of ``"¨"``, and the word ``"\u0308"`` then starts the input).
    A character that shares its grapheme cluster becomes one character:
    tokenizers aligns a cluster's replacement character by character (T5's
    charsmap makes ``" \u0308"`` of ``"¨\u0316"``, the ``"\u0308"`` standing
    for the ``"\u0316"``)."""
    if not (pipeline.whitespace_split and pipeline.prepend_first_only) or not part:
        return 0
    cluster = regex.match(r"\X", part).group()
    if len(cluster) > 1:
        return min(1, len(normalized))
    made = normalize(model, pipeline, cluster)
    return len(made) if normalized.startswith(made) else 0


def encode(model: SentencePieceModel, pipeline: HFPipeline, text: str) -> list[int]:
    """``Tokenizer.encode(text, add_special_tokens=False).ids`` of the file.
    Added tokens with ``normalized: true`` are looked for as the normalizers
    make their text, as tokenizers does."""
    raw_tokens = {t.content: t.id for t in pipeline.added_tokens if not t.normalized}
    normalized_tokens: dict[str, int] = {}
    for token in pipeline.added_tokens:
        if token.normalized:
            normalized_tokens.setdefault(normalize(model, pipeline, token.content), token.id)
    ids: list[int] = []
    position = 0
    for part, is_added in split_special(text, raw_tokens):
        at_start = position == 0
        position += len(part)
        if is_added:
            ids.append(raw_tokens[part])
            continue
        normalized = normalize(model, pipeline, part)
        lead = _first_character_lead(model, pipeline, part, normalized) if at_start else 0
        for inner, inner_added in split_special(normalized, normalized_tokens):
            if inner_added:
                ids.append(normalized_tokens[inner])
                at_start = False
                continue
            for piece in pre_tokenize(model, pipeline, inner, at_start, lead):
                ids.extend(_segment_ids(model, piece))
            at_start = False
    return ids


# ---------------------------------------------------------------------------
# Decoding (the decoder steps run as formats.hf_decoder runs them)


def decode(
    model: SentencePieceModel,
    pipeline: HFPipeline,
    ids: Iterable[int],
    errors: Optional[str] = None,
) -> str:
    """``Tokenizer.decode(ids, skip_special_tokens=False)`` of the file: the
    pieces of ``ids`` through the file's decoder, joined; with no decoder,
    the pieces joined by spaces. ``errors`` (e.g. ``"surrogateescape"``):
    how ByteFallback writes a byte of invalid UTF-8, instead of U+FFFD.
    A decoder on which tokenizers panics is a ValueError."""
    tokens = [model.pieces[i] for i in ids]
    return decode_tokens(decoder_steps(decoder_json(model, pipeline)), tokens, errors)


__all__ = [
    "WHITE_SPACE",
    "decode",
    "encode",
    "normalize",
    "pre_tokenize",
]
