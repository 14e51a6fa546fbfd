"""The ``tokenizer.json`` bytepair writes for a unigram model it trained, and
the test that a file is one.

tokenizers' Unigram rules differ from bytepair's, so such a file is written
in the shape under which both give the same ids (:func:`for_tokenizers`); a
file read back in that shape (:func:`not_written_by_bytepair` is None) is a
model trained here again, with n-best and sampling.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Optional

from ..model import SentencePieceModel
from ..normalization import NORMALIZATIONS, resolve_normalize
from .hf_unigram import (
    SPACE_SYMBOL,
    AddedToken,
    HFPipeline,
    Prepend,
    serde_json_f64,
    serde_json_text,
)

METASPACE = SPACE_SYMBOL


def for_tokenizers(model: SentencePieceModel) -> tuple[SentencePieceModel, HFPipeline]:
    """A bytepair-trained model as tokenizers must see it to give our ids.

    tokenizers puts every vocabulary entry in the lattice, whatever its kind,
    so ``<unk>``, the specials and the byte pieces get a score far below any
    piece (text such as ``"<0x41>"`` must not match the byte piece); the
    score of an unknown character moves with them, which changes no
    segmentation unless the text spells such a piece out with characters the
    vocabulary left out. The model's ``normalize`` steps become tokenizers'
    ``NFC``/``NFKC``/``Lowercase`` normalizers (the ones bytepair's match), then
    a ``Prepend("▁")`` normalizer gives each piece of text between added
    tokens its dummy ``▁`` (Metaspace adds none); specials are added tokens,
    cut out of the text as given first (as ``encode(..., allowed_special="all")``).
    """
    if model.pretokenizer is not None:
        raise ValueError(
            f"saving a unigram model cut by the {model.pretokenizer.name!r} pre-tokenizer as "
            "tokenizer.json is not supported; train it with pretokenizer='metaspace'"
        )
    lowered = _lowered_score(model)
    scores = tuple(s if k == "normal" else lowered for s, k in zip(model.scores, model.kinds))
    added = tuple(
        AddedToken(i, p, special=True, normalized=False)
        for i, (p, k) in enumerate(zip(model.pieces, model.kinds))
        if k == "control"
    )
    pipeline = HFPipeline(
        normalizers=(*model.normalize, Prepend(METASPACE)),
        added_tokens=added,
        decoder=json.dumps(_bytepair_decoder()),
        isolate_unknown=True,
    )
    normalizer = dataclasses.replace(model.normalizer, add_dummy_prefix=False)
    written = dataclasses.replace(model, scores=scores, normalizer=normalizer, normalize=())
    return written, pipeline


def _bytepair_decoder() -> dict[str, object]:
    """The decoder :func:`for_tokenizers` writes: tokenizers then decodes as
    the bytepair flavor does (but for ``<unk>``, which it writes as its piece)."""
    return {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"String": METASPACE}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ],
    }


def _lowered_score(model: SentencePieceModel) -> float:
    """The score :func:`for_tokenizers` gives every piece that is not normal."""
    return min(s for s, k in zip(model.scores, model.kinds) if k == "normal") - 1000.0


def split_refusal(differs: Optional[str]) -> str:
    """The error for a file holding bytepair's Split of unknown characters
    that is not otherwise what bytepair writes (``differs``: where)."""
    return (
        "pre_tokenizer.pretokenizers[0]: the Split of unknown characters is read only beside "
        "the rest of what bytepair writes with it for a model it trained (the normalizers: NFC "
        "or NFKC, Lowercase, in that order, then Prepend('▁'); every character of a normal "
        "piece a piece of its own; the scores of <unk>, byte and special pieces; the special "
        "tokens as added tokens; bytepair's decoder), and "
        + (
            "this is such a file: read it with bytepair.load (the bytepair flavor)"
            if differs is None
            else f"this file differs: {differs}"
        )
    )


def not_written_by_bytepair(model: SentencePieceModel, pipeline: HFPipeline) -> Optional[str]:
    """None for a file that :func:`for_tokenizers` could have written (the
    bytepair flavor then gives tokenizers' ids and decodes as its decoder
    does); otherwise the first place where it differs, with its key."""
    if model.algorithm != "unigram":
        return f"model: a {model.algorithm} model"
    if not pipeline.isolate_unknown:
        return "pre_tokenizer: no Split of unknown characters"
    *forms, last = pipeline.normalizers or (None,)
    if last != Prepend(METASPACE) or not _is_normalize(tuple(forms)):
        return "normalizer: not NFC or NFKC, Lowercase, in that order, then Prepend('▁')"
    if pipeline.whitespace_split:
        return "pre_tokenizer: a WhitespaceSplit"
    if model.normalizer.precompiled_charsmap:
        return "normalizer: a Precompiled charsmap"
    if model.normalizer.add_dummy_prefix:
        return 'pre_tokenizer.pretokenizers[1].prepend_scheme: not "never"'
    if not model.normalizer.split_on_whitespace:
        return "pre_tokenizer.pretokenizers[1].split: false"
    if not set(model.kinds) <= {"normal", "unknown", "control", "byte"}:
        return "added_tokens: a token that is not special"
    if model.kinds.count("unknown") != 1:
        return "model.unk_id: null"
    controls = {i for i, k in enumerate(model.kinds) if k == "control"}
    if not all(t.special and not t.normalized for t in pipeline.added_tokens):
        return "added_tokens: a normalized token"
    if {t.id for t in pipeline.added_tokens} != controls:
        return "added_tokens: not the special tokens"
    if "normal" not in model.kinds:
        return "model.vocab: no normal piece"
    # The other pieces must score as for_tokenizers writes them, or
    # tokenizers' lattice would choose them where bytepair's does not.
    lowered = serde_json_f64(serde_json_text(_lowered_score(model)))  # as written
    for index, (piece, score, kind) in enumerate(zip(model.pieces, model.scores, model.kinds)):
        if kind != "normal" and score != lowered:
            return (
                f"model.vocab[{index}]: the {kind} piece {piece!r} scores {score!r}, not "
                f"{lowered!r} (the lowest normal score minus 1000)"
            )
    # The Split leaves the characters of the normal pieces to the lattice.
    # Where one of them is no piece of its own and no longer piece covers
    # it, bytepair's lattice fuses it with its unknown neighbours into one
    # <unk> (or bytes), while tokenizers' Split has cut those neighbours off.
    normal = [piece for piece, kind in zip(model.pieces, model.kinds) if kind == "normal"]
    singles = {piece for piece in normal if len(piece) == 1}
    for piece in normal:
        for char in piece:
            if char not in singles:
                return (
                    f"model.vocab: the character {char!r} of the piece {piece!r} is no "
                    "normal piece of its own"
                )
    expected = _bytepair_decoder()
    found = None if pipeline.decoder is None else json.loads(pipeline.decoder)
    # Compared as JSON texts: 1, 1.0 and true are different values there.
    if json.dumps(found, sort_keys=True) != json.dumps(expected, sort_keys=True):
        shown = json.dumps(found, ensure_ascii=False)
        return (
            f"decoder: {shown if len(shown) <= 200 else shown[:197] + '...'} is not the "
            f"decoder bytepair writes ({json.dumps(expected, ensure_ascii=False)})"
        )
    return None


def _is_normalize(steps: tuple[object, ...]) -> bool:
    """Whether normalizer steps are a ``normalize`` tuple in its canonical order."""
    names = [step for step in steps if isinstance(step, str) and step in NORMALIZATIONS]
    if len(names) != len(steps):
        return False
    try:
        return resolve_normalize(names) == steps
    except ValueError:  # nfc and nfkc together
        return False


__all__ = ["for_tokenizers", "not_written_by_bytepair", "split_refusal"]
