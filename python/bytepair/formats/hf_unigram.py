"""HuggingFace ``tokenizer.json`` files whose model is ``Unigram`` (T5, ALBERT, XLNet, mBART...).

What such a file holds, and where it goes:

* ``model``: ``{"type": "Unigram", "unk_id": int|null, "vocab": [[piece, score], ...],
  "byte_fallback": bool}`` -> :class:`~bytepair.model.SentencePieceModel` pieces and
  scores (``algorithm="unigram"``). Kinds: ``unk_id`` is "unknown", a special added
  token "control", another added token "user_defined", ``<0x00>``..``<0xFF>`` "byte"
  when ``byte_fallback``, the rest "normal". (tokenizers itself has no kinds: every
  vocabulary entry, whatever its kind, is a candidate of the lattice.)
* ``normalizer``: ``Precompiled`` (the sentencepiece charsmap, base64), ``Replace``
  (a string or regex pattern), ``Prepend``, ``Strip`` (transformers' converter writes
  Precompiled, Strip of the right end, Replace of " {2,}" by ``▁``), and ``NFC``,
  ``NFKC``, ``Lowercase`` (a model trained with ``normalize``), alone or in a
  ``Sequence``, or null. The charsmap goes to
  ``model.normalizer.precompiled_charsmap``; their order and the Replace rules to
  :class:`HFPipeline` ``normalizers``.
* ``pre_tokenizer``: ``Metaspace`` (replacement ``▁``; ``prepend_scheme`` always / first /
  never, or the older ``add_prefix_space``; ``split``), optionally preceded by
  ``WhitespaceSplit``, or by the ``Split`` bytepair writes for a model it trained
  (:func:`unknown_characters_pattern`, checked against the vocabulary), in a
  ``Sequence``. ``split`` -> ``model.normalizer.split_on_whitespace``,
  a prepend scheme other than never -> ``add_dummy_prefix``; ``prepend_scheme: "first"``
  and ``WhitespaceSplit`` -> :class:`HFPipeline`.
* ``added_tokens`` -> :class:`HFPipeline` ``added_tokens`` (tokenizers cuts them out of
  the text before normalizing, leftmost then longest, even with add_special_tokens=False);
  each must be the vocabulary entry of its id.
* ``post_processor`` and ``decoder`` are kept as they are (JSON text, ``"null"`` for a
  null one) and written back; they do not change ``encode(text, add_special_tokens=False)``.
  The decoder is read into :data:`DecoderStep` s (:func:`decoder_steps`), which
  :func:`bytepair.reference.hf_unigram.decode` runs as tokenizers does: ``Metaspace``,
  ``Replace``, ``ByteFallback``, ``Fuse``, ``Strip``, nested in ``Sequence`` s; another
  decoder of tokenizers (``ByteLevel``, ``WordPiece``, ``BPEDecoder``, ``CTC``) is a
  FormatError. A pipeline without a decoder (``None``, as :func:`default_pipeline` makes)
  gets Metaspace's, after ``ByteFallback`` when the model has byte pieces.

Scores are read as tokenizers reads them (serde_json's float parser, which is not
correctly rounded: see :func:`serde_json_f64`), since ties between segmentations
depend on the last bit, and written as texts that parser reads back exactly
(:func:`serde_json_text`).

Anything else that changes ids (truncation, padding, other normalizers or pre-tokenizers,
``lstrip``/``rstrip``/``single_word`` on an added token, a replacement other than ``▁``)
is a :class:`~bytepair.errors.FormatError` naming it: a file is read exactly or not at all.

The encoding of such a file is :mod:`bytepair.reference.hf_unigram` (tokenizers' rules,
which differ from sentencepiece's: f64 scores, per-word lattices, grapheme-based
charsmap). ``dumps`` writes a model and pipeline back; with no pipeline it writes the
conventional one for a sentencepiece model (:func:`default_pipeline`).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Union

from ..errors import FormatError
from ..model import SentencePieceModel, SentencePieceNormalizer
from .files import PathLike, parse_json, read_text, write_text_atomic
from .hf_regex import UnsupportedPattern, from_tokenizers
from .sentencepiece import BYTE_PIECES, check_charsmap

FORMAT_NAME = "HuggingFace tokenizer.json (Unigram)"
SPACE_SYMBOL = "\u2581"
PRECOMPILED = "precompiled"  # the Precompiled step in HFPipeline.normalizers
# The NFC, NFKC and Lowercase steps in HFPipeline.normalizers: their names in a
# model's ``normalize`` (bytepair.normalization), and their tokenizers types.
UNICODE_STEPS = {"nfc": "NFC", "nfkc": "NFKC", "lowercase": "Lowercase"}


@dataclass(frozen=True)
class Replace:
    """A ``Replace`` normalizer: every match of ``pattern`` becomes ``content``.

    ``regex``: the pattern is a regex (tokenizers' Oniguruma dialect, as in the
    file), else a literal string.
    """

    pattern: str
    content: str
    regex: bool = False


@dataclass(frozen=True)
class AddedToken:
    """An entry of ``added_tokens`` (only the options bytepair supports)."""

    id: int
    content: str
    special: bool = True
    normalized: bool = False


@dataclass(frozen=True)
class Prepend:
    """A ``Prepend`` normalizer: ``prepend`` goes in front of every non-empty
    piece of text (each piece between added tokens)."""

    prepend: str


@dataclass(frozen=True)
class Strip:
    """A ``Strip`` normalizer: White_Space (Rust's ``char::is_whitespace``)
    removed from the left and/or right end of each piece of text."""

    left: bool
    right: bool


# PRECOMPILED, a key of UNICODE_STEPS, or a step
NormalizerStep = Union[str, Replace, Prepend, Strip]

_UNICODE_STEP_OF_TYPE = {kind: name for name, kind in UNICODE_STEPS.items()}

BYTE_FALLBACK = "ByteFallback"  # the ByteFallback decoder in a decoder_steps list
FUSE = "Fuse"  # the Fuse decoder


@dataclass(frozen=True)
class MetaspaceDecoder:
    """A ``Metaspace`` decoder: ``replacement`` becomes a space, except in
    the first token, which loses every one when ``prepend`` (the
    prepend_scheme is not "never")."""

    replacement: str
    prepend: bool


@dataclass(frozen=True)
class StripDecoder:
    """A ``Strip`` decoder: up to ``start`` leading and ``stop`` trailing
    ``content`` characters are cut from each token."""

    content: str
    start: int
    stop: int


# BYTE_FALLBACK, FUSE, or a step with its options (a Replace decoder is a Replace).
DecoderStep = Union[str, MetaspaceDecoder, Replace, StripDecoder]


@dataclass(frozen=True)
class HFPipeline:
    """What a Unigram ``tokenizer.json`` says beyond :class:`SentencePieceModel`.

    normalizers: the normalizer steps in order: :data:`PRECOMPILED` (the
        model's ``normalizer.precompiled_charsmap``, read tokenizers' way),
        ``"nfc"``, ``"nfkc"`` or ``"lowercase"`` (:data:`UNICODE_STEPS`), a
        :class:`Replace`, :class:`Prepend` or :class:`Strip`.
    whitespace_split: a ``WhitespaceSplit`` pre-tokenizer runs before Metaspace
        (cuts at Unicode White_Space and drops it).
    prepend_first_only: Metaspace ``prepend_scheme`` is "first" (only the
        piece at the start of the text gets a ``▁``); otherwise "always" when
        the model's ``add_dummy_prefix``, else "never".
    added_tokens: cut out of the text first.
    post_processor, decoder: the file's JSON (text, ``"null"`` for a null
        one), written back unchanged; ``None``: none given (a decoder is
        then written as :func:`decoder_json` makes it).
    isolate_unknown: a ``Split`` pre-tokenizer (behavior ``Isolated``) runs
        before Metaspace and cuts out the characters of no normal piece
        (:func:`unknown_characters_pattern`), so that no vocabulary entry
        spanning one of them (``<unk>``, ``<0x41>`` spelled out in the text)
        can be a candidate: what bytepair writes for a model it trained.
    """

    normalizers: tuple[NormalizerStep, ...] = (PRECOMPILED,)
    whitespace_split: bool = False
    prepend_first_only: bool = False
    added_tokens: tuple[AddedToken, ...] = ()
    post_processor: Optional[str] = None
    decoder: Optional[str] = None
    isolate_unknown: bool = False


def known_characters(model: SentencePieceModel) -> frozenset[str]:
    """The characters of the normal pieces, and the space when ``▁`` is one
    of them (the Split runs before Metaspace writes spaces as ``▁``)."""
    known = {
        char for piece, kind in zip(model.pieces, model.kinds) if kind == "normal" for char in piece
    }
    if SPACE_SYMBOL in known:
        known.add(" ")
    return frozenset(known)


def unknown_characters_pattern(model: SentencePieceModel) -> str:
    """The regex (Oniguruma) of the ``Split`` that :attr:`HFPipeline.isolate_unknown`
    writes: one character of no normal piece with byte fallback (each
    becomes its bytes), else a run of them (one ``unk_id``, as bytepair fuses
    a run of unknown characters)."""
    chars = "".join(f"\\x{{{ord(char):X}}}" for char in sorted(known_characters(model)))
    return f"[^{chars}]" + ("" if model.byte_fallback else "+")


def prepend_scheme(model: SentencePieceModel, pipeline: HFPipeline) -> str:
    """Metaspace's prepend_scheme: "always", "first" or "never"."""
    if not model.normalizer.add_dummy_prefix:
        return "never"
    return "first" if pipeline.prepend_first_only else "always"


def default_pipeline(model: SentencePieceModel) -> HFPipeline:
    """The usual tokenizers pipeline for a sentencepiece unigram model (as transformers' converter).

    Precompiled (when the model has a charsmap), then, when the model removes
    extra whitespace, transformers' ``Strip`` of the right end and ``Replace``
    of runs of two or more spaces by ``▁`` (a model that keeps its
    whitespace gets neither: sentencepiece keeps it too); Metaspace
    as the model says; control pieces as special added tokens, user-defined
    pieces as other added tokens (never normalized, like sentencepiece's).
    tokenizers then encodes close to sentencepiece, not equal to it (see
    :mod:`bytepair.reference.hf_unigram` for the differences).
    """
    steps: list[NormalizerStep] = []
    if model.normalizer.precompiled_charsmap:
        steps.append(PRECOMPILED)
    if model.normalizer.remove_extra_whitespaces:
        steps += [Strip(left=False, right=True), Replace(" {2,}", SPACE_SYMBOL, regex=True)]
    added = tuple(
        AddedToken(index, piece, special=(kind == "control"), normalized=False)
        for index, (piece, kind) in enumerate(zip(model.pieces, model.kinds))
        if kind in ("control", "user_defined")
    )
    return HFPipeline(normalizers=tuple(steps), added_tokens=added)


# ---------------------------------------------------------------------------
# Numbers as tokenizers reads them
#
# tokenizers parses tokenizer.json with serde_json's default (not correctly
# rounded) float parser: the decimal digits are gathered into a u64 (digits
# beyond 19 are dropped), converted to f64, then multiplied or divided ONCE by
# the f64 power of ten. That is two roundings, so the score tokenizers holds is
# often one ulp away from the nearest double to the text (a quarter of
# t5-small's scores are), and ties between segmentations are decided by those
# values. We read scores the same way, and write each score as a text that this
# parser maps back to exactly the score.

_POW10 = tuple(float(f"1e{k}") for k in range(309))
_U64_MAX = (1 << 64) - 1
_NUMBER = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?")


def _digit_overflows(significand: int, digit: int) -> bool:
    """serde_json's check that significand * 10 + digit would not fit a u64."""
    return significand >= _U64_MAX // 10 and (significand > _U64_MAX // 10 or digit > _U64_MAX % 10)


def serde_json_f64(text: str) -> float:
    """The f64 that serde_json (default features) reads from the JSON number ``text``."""
    match = _NUMBER.fullmatch(text)
    if match is None:
        raise ValueError(f"not a JSON number: {text!r}")
    sign, integer, fraction, exponent_text = match.groups()
    significand = 0
    exponent = 0
    dropping = False  # the u64 is full: later digits only move the decimal point
    for char in integer:
        digit = ord(char) - 48
        if dropping or _digit_overflows(significand, digit):
            dropping = True
            exponent += 1
        else:
            significand = significand * 10 + digit
    for char in fraction or "":
        digit = ord(char) - 48
        if dropping or _digit_overflows(significand, digit):
            dropping = True
        else:
            significand = significand * 10 + digit
            exponent -= 1
    if exponent_text is not None:
        exponent += int(exponent_text)
    value = float(significand)
    while True:
        if abs(exponent) < len(_POW10):
            if exponent >= 0:
                value *= _POW10[exponent]
            else:
                value /= _POW10[-exponent]
            break
        if value == 0.0:
            break
        if exponent >= 0:
            raise ValueError(f"number out of range: {text!r}")
        value /= 1e308
        exponent += 308
    return -value if sign else value


def serde_json_text(value: float) -> str:
    """A JSON number text that :func:`serde_json_f64` reads as ``value``, or as close as can be.

    Python's shortest repr is tried first. Otherwise the text is an integer
    of up to 20 digits (it must fit a u64) times a power of ten, chosen so
    that the integer converts to a double near ``value`` times that power;
    the doubles next to it are tried in turn. A few doubles cannot be reached
    at all by serde_json's two roundings; for those the nearest reachable
    value is written (an ulp away).
    """
    if not math.isfinite(value):
        raise ValueError(f"{value!r} cannot be written in JSON")
    text = repr(value)
    read = serde_json_f64(text)
    if read == value or value == 0.0:
        return text
    best_error, best_text = abs(read - value), text
    sign = "-" if value < 0 else ""
    magnitude = Fraction(abs(value))
    top = 18 - math.floor(math.log10(abs(value)))
    for power in (top + 1, top, top - 1):
        if power < 0 or power >= len(_POW10):
            continue
        target = int(magnitude * 10**power)
        if not 0 < target <= _U64_MAX:
            continue
        # Walk the doubles around float(target); each is an integer here.
        for direction in (-math.inf, math.inf):
            candidate = float(target)
            for _ in range(8):
                integer = int(candidate)
                if 0 < integer <= _U64_MAX:
                    text = f"{sign}{integer}e-{power}"
                    error = abs(serde_json_f64(text) - value)
                    if error == 0.0:
                        return text
                    if error < best_error:
                        best_error, best_text = error, text
                candidate = math.nextafter(candidate, direction)
    return best_text


class _Number(float):
    """A JSON number that keeps its text (to read it as tokenizers does)."""

    text: str

    def __new__(cls, text: str) -> _Number:
        number = super().__new__(cls, text)
        number.text = text
        return number


def _parse(text: str, source: str) -> object:
    return parse_json(text, source, parse_float=_Number)


# ---------------------------------------------------------------------------
# Writing


def _normalizer_json(model: SentencePieceModel, pipeline: HFPipeline) -> Optional[dict]:
    steps: list[dict[str, object]] = []
    for step in pipeline.normalizers:
        if step == PRECOMPILED:
            if not model.normalizer.precompiled_charsmap:
                continue  # no charsmap is the identity; tokenizers refuses an empty one
            charsmap = base64.b64encode(model.normalizer.precompiled_charsmap).decode("ascii")
            steps.append({"type": "Precompiled", "precompiled_charsmap": charsmap})
        elif isinstance(step, Replace):
            key = "Regex" if step.regex else "String"
            steps.append(
                {"type": "Replace", "pattern": {key: step.pattern}, "content": step.content}
            )
        elif isinstance(step, Prepend):
            steps.append({"type": "Prepend", "prepend": step.prepend})
        elif isinstance(step, Strip):
            steps.append({"type": "Strip", "strip_left": step.left, "strip_right": step.right})
        elif step in UNICODE_STEPS:
            steps.append({"type": UNICODE_STEPS[step]})
        else:
            raise ValueError(f"unknown normalizer step {step!r}")
    if not steps:
        return None
    if len(steps) == 1:
        return steps[0]
    return {"type": "Sequence", "normalizers": steps}


def _metaspace_json(model: SentencePieceModel, pipeline: HFPipeline) -> dict:
    return {
        "type": "Metaspace",
        "replacement": SPACE_SYMBOL,
        "prepend_scheme": prepend_scheme(model, pipeline),
        "split": model.normalizer.split_on_whitespace,
    }


def decoder_json(model: SentencePieceModel, pipeline: HFPipeline) -> Optional[dict]:
    """The decoder :func:`dumps` writes: the pipeline's (None for a file's
    null decoder), or, when it has none, Metaspace's, after ``ByteFallback``
    when the model has byte pieces."""
    if pipeline.decoder is not None:
        return json.loads(pipeline.decoder)
    decoder = _metaspace_json(model, pipeline)
    if model.byte_fallback:
        # Byte pieces (<0xC3>) to bytes first, or tokenizers writes them as text.
        decoder = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, decoder]}
    return decoder


def decoder_steps(decoder: Optional[dict], source: str = "decoder") -> Optional[list[DecoderStep]]:
    """The steps of a decoder (the JSON of :func:`decoder_json`), a Sequence
    flattened; None for no decoder (tokenizers then joins the tokens with
    spaces). A decoder bytepair does not run is a FormatError."""
    if decoder is None:
        return None
    return _Reader(source).decoder(decoder, "decoder")


_VOCAB_PLACEHOLDER = "\u0000vocab\u0000"
# The decoders and post-processors of tokenizers (0.2x); a file naming another is refused there.
_DECODERS = frozenset(
    "BPEDecoder ByteLevel WordPiece Metaspace CTC Sequence Replace Fuse Strip ByteFallback".split()
)
_POST_PROCESSORS = frozenset(
    "RobertaProcessing BertProcessing ByteLevel TemplateProcessing Sequence".split()
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(model: SentencePieceModel, pipeline: Optional[HFPipeline] = None) -> str:
    """The ``tokenizer.json`` text of a unigram ``model`` (and ``pipeline``).

    ValueError for what the format cannot hold: another algorithm, a
    pre-tokenizer, treat_whitespace_as_suffix, unescaped whitespace, an
    added token that is not its id's piece.
    """
    if model.algorithm != "unigram":
        raise ValueError(f"cannot write a {model.algorithm!r} model as a Unigram tokenizer.json")
    if model.pretokenizer is not None:
        raise ValueError("a Unigram tokenizer.json cannot hold a BPE-side pre-tokenizer")
    if model.normalizer.treat_whitespace_as_suffix:
        raise ValueError("tokenizers' Metaspace cannot put the space at the end of words")
    if not model.normalizer.escape_whitespaces:
        raise ValueError("tokenizers' Metaspace always writes spaces as ▁")
    if pipeline is None:
        pipeline = default_pipeline(model)
    if pipeline.prepend_first_only and any(
        isinstance(step, Strip) and step.left for step in pipeline.normalizers
    ):
        raise ValueError('bytepair does not write a left Strip with prepend_scheme "first"')
    for token in pipeline.added_tokens:
        if not (0 <= token.id < len(model.pieces)) or model.pieces[token.id] != token.content:
            raise ValueError(f"added token {token.content!r} is not the piece of id {token.id}")
    metaspace = _metaspace_json(model, pipeline)
    pre_tokenizer: dict = metaspace
    if pipeline.whitespace_split and pipeline.isolate_unknown:
        raise ValueError("bytepair writes WhitespaceSplit or the Split of unknown characters")
    if pipeline.whitespace_split:
        pre_tokenizer = {
            "type": "Sequence",
            "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace],
        }
    elif pipeline.isolate_unknown:
        split = {
            "type": "Split",
            "pattern": {"Regex": unknown_characters_pattern(model)},
            "behavior": "Isolated",
            "invert": False,
        }
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [split, metaspace]}
    decoder = decoder_json(model, pipeline)
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": token.id,
                "content": token.content,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": token.normalized,
                "special": token.special,
            }
            for token in sorted(pipeline.added_tokens, key=lambda token: token.id)
        ],
        "normalizer": _normalizer_json(model, pipeline),
        "pre_tokenizer": pre_tokenizer,
        "post_processor": (
            json.loads(pipeline.post_processor) if pipeline.post_processor is not None else None
        ),
        "decoder": decoder,
        "model": {
            "type": "Unigram",
            "unk_id": model.unk_id,
            "vocab": _VOCAB_PLACEHOLDER,
            "byte_fallback": model.byte_fallback,
        },
    }
    text = json.dumps(document, ensure_ascii=False, indent=2)
    # The vocabulary is written by hand: each score as a text tokenizers reads back exactly.
    entries = ",\n".join(
        f"      [{json.dumps(piece, ensure_ascii=False)}, {serde_json_text(score)}]"
        for piece, score in zip(model.pieces, model.scores)
    )
    vocab = "[\n" + entries + "\n    ]"
    return text.replace(json.dumps(_VOCAB_PLACEHOLDER), vocab, 1) + "\n"


def save(model: SentencePieceModel, path: PathLike, pipeline: Optional[HFPipeline] = None) -> None:
    """Write ``model`` (and ``pipeline``) to the file ``path``, atomically."""
    write_text_atomic(path, dumps(model, pipeline))


# ---------------------------------------------------------------------------
# Reading


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


class _Reader:
    """Checks one document; every error names ``source`` and the JSON place."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, problem: str, where: Optional[str]) -> FormatError:
        return FormatError(self.source, problem, where)

    def unsupported(self, where: str, value: object, why: str) -> FormatError:
        return self.error(f"{_show(value)} is not supported: {why}", where)

    def kind(self, step: dict, where: str) -> Optional[str]:
        """The ``type`` of a step: text (or absent, which the callers refuse by name)."""
        kind = step.get("type")
        if kind is not None and not isinstance(kind, str):
            raise self.error(f"expected text, got {_show(kind)}", f"{where}.type")
        return kind

    def component(self, value: object, key: str) -> None:
        """A decoder or post-processor tokenizers knows (it refuses the file otherwise)."""
        step = self.obj(value, key)
        kind = self.kind(step, key)
        known = _DECODERS if key.startswith("decoder") else _POST_PROCESSORS
        if kind not in known:
            raise self.unsupported(
                f"{key}.type", kind, f"tokenizers has no such {key.split('.')[0]}"
            )
        if kind == "Sequence":
            inner_key = "decoders" if key.startswith("decoder") else "processors"
            inner = step.get(inner_key)
            if not isinstance(inner, list):
                raise self.error(f"expected a list, got {_show(inner)}", f"{key}.{inner_key}")
            for index, item in enumerate(inner):
                self.component(item, f"{key}.{inner_key}[{index}]")

    def no_surrogate(self, text: str, where: str) -> None:
        """A lone surrogate (a ``\\ud800`` escape) is no text tokenizers reads."""
        found = _SURROGATE.search(text)
        if found is not None:
            raise self.error(
                f"{text!r} holds the lone surrogate U+{ord(found.group()):04X} at character "
                f"{found.start()}, which is not Unicode text (tokenizers refuses it too)",
                where,
            )

    def obj(self, value: object, where: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(f"expected a JSON object, got {_show(value)}", where)
        return value

    def boolean(
        self, step: Mapping[str, object], key: str, where: str, default: Optional[bool]
    ) -> bool:
        """``step[key]``, a bool; ``default`` where it is absent (None: required)."""
        if default is None and key not in step:
            raise self.error(f"missing key {key!r}", where)
        value = step.get(key, default)
        if not isinstance(value, bool):
            raise self.error(f"expected true or false, got {_show(value)}", f"{where}.{key}")
        return value

    # -- top level ------------------------------------------------------------

    def document(self, text: str) -> tuple[SentencePieceModel, HFPipeline]:
        document = self.obj(_parse(text, self.source), "the document")
        version = document.get("version", "1.0")
        if version != "1.0":
            raise self.unsupported("version", version, 'only version "1.0" is known')
        for key in ("truncation", "padding"):
            if document.get(key) is not None:
                raise self.unsupported(key, document[key], "it changes the ids encode returns")
        model_json = self.obj(document.get("model"), "model")
        if model_json.get("type", "Unigram") != "Unigram":
            raise self.unsupported(
                "model.type", model_json.get("type"), "this reader reads Unigram models"
            )
        pieces, scores, unk_id, byte_fallback = self.vocabulary(model_json)
        added = self.added_tokens(document.get("added_tokens", []), pieces)
        steps, charsmap = self.normalizer(document.get("normalizer"))
        whitespace_split, scheme, split, isolation = self.pre_tokenizer(
            document.get("pre_tokenizer")
        )
        post_processor = document.get("post_processor")
        decoder = document.get("decoder")
        for key, value in (("post_processor", post_processor), ("decoder", decoder)):
            if value is not None:
                self.component(value, key)
        if decoder is not None:
            self.decoder(decoder, "decoder")

        kinds = []
        special_ids = {token.id: token.special for token in added}
        for index, piece in enumerate(pieces):
            if index == unk_id:
                kinds.append("unknown")
            elif index in special_ids:
                kinds.append("control" if special_ids[index] else "user_defined")
            elif byte_fallback and piece in BYTE_PIECES:
                kinds.append("byte")
            else:
                kinds.append("normal")
        model = SentencePieceModel(
            pieces=tuple(pieces),
            scores=tuple(scores),
            kinds=tuple(kinds),
            unk_id=unk_id,
            algorithm="unigram",
            byte_fallback=byte_fallback,
            normalizer=SentencePieceNormalizer(
                precompiled_charsmap=charsmap,
                add_dummy_prefix=scheme != "never",
                remove_extra_whitespaces=whitespace_split,
                escape_whitespaces=True,
                treat_whitespace_as_suffix=False,
                split_on_whitespace=split,
            ),
            pretokenizer=None,
        )
        if scheme == "first":
            for index, step in enumerate(steps):
                if isinstance(step, Strip) and step.left:
                    raise self.unsupported(
                        f"normalizer{'' if len(steps) == 1 else f'.normalizers[{index}]'}",
                        {"type": "Strip", "strip_left": True, "strip_right": step.right},
                        'with prepend_scheme "first", tokenizers prepends ▁ only where the '
                        "original text starts, which a stripped text no longer does; bytepair "
                        "does not follow that",
                    )
        if isolation is not None:
            pattern, isolation_where = isolation
            if pattern != unknown_characters_pattern(model):
                raise self.unsupported(
                    isolation_where,
                    pattern,
                    "bytepair reads a Split pre-tokenizer only as the one it writes (isolating "
                    "the characters of no normal piece of this vocabulary)",
                )
        pipeline = HFPipeline(
            normalizers=steps,
            whitespace_split=whitespace_split,
            prepend_first_only=scheme == "first",
            added_tokens=added,
            post_processor=None if post_processor is None else json.dumps(post_processor),
            decoder=json.dumps(decoder),  # "null" for a null decoder
            isolate_unknown=isolation is not None,
        )
        return model, pipeline

    # -- model ------------------------------------------------------------------

    def vocabulary(
        self, model_json: Mapping[str, object]
    ) -> tuple[list[str], list[float], Optional[int], bool]:
        vocab = model_json.get("vocab")
        if not isinstance(vocab, list):
            raise self.error(
                f"expected a list of [piece, score], got {_show(vocab)}", "model.vocab"
            )
        if not vocab:
            raise self.error("the vocabulary is empty", "model.vocab")
        pieces: list[str] = []
        scores: list[float] = []
        first_id: dict[str, int] = {}
        for index, entry in enumerate(vocab):
            where = f"model.vocab[{index}]"
            if not (
                isinstance(entry, list)
                and len(entry) == 2
                and isinstance(entry[0], str)
                and isinstance(entry[1], (int, float))
                and not isinstance(entry[1], bool)
            ):
                raise self.error(f"expected [piece, score], got {_show(entry)}", where)
            piece = entry[0]
            number = entry[1]
            try:
                score = (
                    serde_json_f64(number.text) if isinstance(number, _Number) else float(number)
                )
            except (ValueError, OverflowError):  # beyond a double, which tokenizers refuses too
                shown = number.text if isinstance(number, _Number) else _show(number)
                raise self.error(
                    f"the score {shown} of {piece!r} is out of the range of a double", where
                ) from None
            if not piece:
                raise self.error("an empty piece", where)
            self.no_surrogate(piece, where)
            if math.isnan(score) or math.isinf(score):
                raise self.error(f"the score of {piece!r} is not a finite number", where)
            if piece in first_id:
                raise self.error(
                    f"the piece {piece!r} appears twice (ids {first_id[piece]} and {index})", where
                )
            first_id[piece] = index
            pieces.append(piece)
            scores.append(score)
        unk_id = model_json.get("unk_id")
        if unk_id is not None and (
            not isinstance(unk_id, int) or isinstance(unk_id, bool) or not 0 <= unk_id < len(pieces)
        ):
            raise self.error(
                f"unk_id {_show(unk_id)} is not an id of the {len(pieces)} pieces", "model.unk_id"
            )
        byte_fallback = self.boolean(model_json, "byte_fallback", "model", False)
        for key in model_json:
            if key not in ("type", "unk_id", "vocab", "byte_fallback"):
                raise self.unsupported(
                    f"model.{key}",
                    model_json[key],
                    "an option of the Unigram model bytepair does not know",
                )
        return pieces, scores, unk_id, byte_fallback

    def added_tokens(self, value: object, pieces: Sequence[str]) -> tuple[AddedToken, ...]:
        if not isinstance(value, list):
            raise self.error(f"expected a list, got {_show(value)}", "added_tokens")
        tokens = []
        seen: set[str] = set()
        for index, entry in enumerate(value):
            where = f"added_tokens[{index}]"
            entry = self.obj(entry, where)
            token_id, content = entry.get("id"), entry.get("content")
            if not isinstance(token_id, int) or isinstance(token_id, bool):
                raise self.error(f"expected an integer id, got {_show(token_id)}", f"{where}.id")
            if not isinstance(content, str) or not content:
                raise self.error(
                    f"expected non-empty text, got {_show(content)}", f"{where}.content"
                )
            self.no_surrogate(content, f"{where}.content")
            if not 0 <= token_id < len(pieces) or pieces[token_id] != content:
                raise self.error(
                    f"added token {content!r} is not the vocabulary entry of id {token_id}",
                    where,
                )
            if content in seen:
                raise self.error(f"added token {content!r} appears twice", where)
            seen.add(content)
            # tokenizers refuses an entry without any of these; read as false,
            # a special token would silently become an ordinary one.
            for option in ("single_word", "lstrip", "rstrip"):
                if self.boolean(entry, option, where, None):
                    raise self.unsupported(
                        f"{where}.{option}",
                        True,
                        f"bytepair does not apply {option} to added tokens of Unigram files",
                    )
            special = self.boolean(entry, "special", where, None)
            normalized = self.boolean(entry, "normalized", where, None)
            tokens.append(AddedToken(token_id, content, special, normalized))
        return tuple(tokens)

    # -- normalizer and pre-tokenizer ----------------------------------------------------

    def normalizer(self, value: object) -> tuple[tuple[NormalizerStep, ...], bytes]:
        if value is None:
            return (), b""
        where = "normalizer"
        step = self.obj(value, where)
        if step.get("type") == "Sequence":
            inner = step.get("normalizers")
            if not isinstance(inner, list):
                raise self.error(f"expected a list, got {_show(inner)}", f"{where}.normalizers")
            items = [(item, f"{where}.normalizers[{i}]") for i, item in enumerate(inner)]
        else:
            items = [(step, where)]
        steps: list[NormalizerStep] = []
        charsmap = b""
        for item, item_where in items:
            item = self.obj(item, item_where)
            kind = self.kind(item, item_where)
            if kind == "Precompiled":
                if PRECOMPILED in steps:
                    raise self.unsupported(item_where, kind, "a second Precompiled normalizer")
                charsmap = self.charsmap(item.get("precompiled_charsmap"), item_where)
                steps.append(PRECOMPILED)
            elif kind == "Replace":
                steps.append(self.replace(item, item_where))
            elif kind == "Prepend":
                prepend = item.get("prepend")
                if not isinstance(prepend, str):
                    raise self.error(
                        f"expected text, got {_show(prepend)}", f"{item_where}.prepend"
                    )
                steps.append(Prepend(prepend))
            elif kind == "Strip":
                for key in ("strip_left", "strip_right"):
                    if not isinstance(item.get(key), bool):
                        raise self.error(
                            f"expected true or false, got {_show(item.get(key))}",
                            f"{item_where}.{key}",
                        )
                steps.append(Strip(item["strip_left"], item["strip_right"]))
            elif kind in _UNICODE_STEP_OF_TYPE:
                steps.append(_UNICODE_STEP_OF_TYPE[kind])
            else:
                raise self.unsupported(
                    item_where,
                    item,
                    "bytepair reads the normalizers Precompiled, Replace, Prepend, Strip, NFC, "
                    "NFKC and Lowercase (alone or in a Sequence)",
                )
        return tuple(steps), charsmap

    def charsmap(self, value: object, where: str) -> bytes:
        if not isinstance(value, str):
            raise self.error(
                f"expected base64 text, got {_show(value)}", f"{where}.precompiled_charsmap"
            )
        try:
            blob = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise self.error(f"not base64: {exc}", f"{where}.precompiled_charsmap") from None
        if not blob:  # a .model file may hold none; tokenizers cannot parse an empty one
            raise self.error(
                "an empty charsmap (tokenizers refuses it: Cannot parse precompiled_charsmap)",
                f"{where}.precompiled_charsmap",
            )
        check_charsmap(blob, self.source, f"{where}.precompiled_charsmap")
        (trie_size,) = struct.unpack_from("<I", blob, 0)
        try:
            blob[4 + trie_size :].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.error(
                f"the charsmap's replacement strings are not UTF-8 (byte {exc.start})",
                f"{where}.precompiled_charsmap",
            ) from None
        return blob

    def replace(self, step: Mapping[str, object], where: str) -> Replace:
        pattern = step.get("pattern")
        content = step.get("content")
        if not isinstance(content, str):
            raise self.error(f"expected text, got {_show(content)}", f"{where}.content")
        if isinstance(pattern, dict) and len(pattern) == 1:
            ((key, text),) = pattern.items()
            if key in ("String", "Regex") and isinstance(text, str) and text:
                if key == "Regex":
                    try:
                        from_tokenizers(text)
                    except UnsupportedPattern as exc:
                        raise self.error(
                            f"the regex {text!r} cannot be run exactly as tokenizers runs it: "
                            f"{exc}",
                            f"{where}.pattern.Regex",
                        ) from None
                return Replace(text, content, regex=key == "Regex")
        raise self.unsupported(
            f"{where}.pattern", pattern, 'expected {"String": "..."} or {"Regex": "..."}'
        )

    def decoder(self, value: object, where: str) -> list[DecoderStep]:
        """The steps of a decoder tokenizers reads (a Sequence flattened:
        its decode_chain is its decoders' in turn)."""
        step = self.obj(value, where)
        kind = self.kind(step, where)
        if kind == "Sequence":
            inner = step.get("decoders")
            if not isinstance(inner, list):
                raise self.error(f"expected a list, got {_show(inner)}", f"{where}.decoders")
            return [
                part
                for index, item in enumerate(inner)
                for part in self.decoder(item, f"{where}.decoders[{index}]")
            ]
        if kind in (BYTE_FALLBACK, FUSE):
            return [kind]
        if kind == "Replace":
            return [self.replace(step, where)]
        if kind == "Strip":
            return [
                StripDecoder(
                    self.char(step, "content", where),
                    self.count(step, "start", where),
                    self.count(step, "stop", where),
                )
            ]
        if kind == "Metaspace":
            replacement = self.char(step, "replacement", where)
            for key in ("add_prefix_space", "split"):
                if step.get(key) is not None and not isinstance(step[key], bool):
                    raise self.error(
                        f"expected true or false, got {_show(step[key])}", f"{where}.{key}"
                    )
            if step.get("str_rep") is not None and not isinstance(step["str_rep"], str):
                raise self.error(f"expected text, got {_show(step['str_rep'])}", f"{where}.str_rep")
            scheme = step.get("prepend_scheme", "always")
            if scheme not in ("always", "first", "never"):
                raise self.unsupported(
                    f"{where}.prepend_scheme", scheme, 'expected "always", "first" or "never"'
                )
            if step.get("add_prefix_space") is False and scheme != "never":
                raise self.unsupported(
                    f"{where}.add_prefix_space",
                    False,
                    f'tokenizers refuses it with prepend_scheme "{scheme}" (the default '
                    'is "always"); write prepend_scheme "never"',
                )
            return [MetaspaceDecoder(replacement, prepend=scheme != "never")]
        raise self.unsupported(
            f"{where}.type",
            kind,
            "bytepair decodes by the decoders Metaspace, Replace, ByteFallback, Fuse, Strip "
            "and Sequence",
        )

    def char(self, step: Mapping[str, object], key: str, where: str) -> str:
        value = step.get(key)
        if not (isinstance(value, str) and len(value) == 1):
            raise self.error(f"expected one character, got {_show(value)}", f"{where}.{key}")
        self.no_surrogate(value, f"{where}.{key}")
        return value

    def count(self, step: Mapping[str, object], key: str, where: str) -> int:
        value = step.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**64:
            raise self.error(
                f"expected a non-negative integer, got {_show(value)}", f"{where}.{key}"
            )
        return value

    def pre_tokenizer(self, value: object) -> tuple[bool, str, bool, Optional[tuple[str, str]]]:
        """(whitespace_split, prepend scheme, split, (the Split's regex, its key) or None)."""
        where = "pre_tokenizer"
        if value is None:
            raise self.unsupported(
                where, value, "a Unigram file needs a Metaspace pre-tokenizer for its ▁ pieces"
            )
        step = self.obj(value, where)
        whitespace_split = False
        isolation = None
        if step.get("type") == "Sequence":
            inner = step.get("pretokenizers")
            if not isinstance(inner, list) or not inner:
                raise self.error(f"expected a list, got {_show(inner)}", f"{where}.pretokenizers")
            kinds = [item.get("type") if isinstance(item, dict) else None for item in inner]
            if kinds == ["Metaspace"]:
                step, where = inner[0], f"{where}.pretokenizers[0]"
            elif kinds == ["WhitespaceSplit", "Metaspace"]:
                whitespace_split = True
                step, where = inner[1], f"{where}.pretokenizers[1]"
            elif kinds == ["Split", "Metaspace"]:
                isolation = self.isolation(inner[0], f"{where}.pretokenizers[0]")
                step, where = inner[1], f"{where}.pretokenizers[1]"
            else:
                raise self.unsupported(
                    where,
                    value,
                    "bytepair reads Metaspace, or WhitespaceSplit or its own Split then "
                    f"Metaspace; found {kinds}",
                )
        if step.get("type") != "Metaspace":
            raise self.unsupported(where, step, "bytepair reads a Metaspace pre-tokenizer")
        replacement = step.get("replacement", SPACE_SYMBOL)
        if replacement != SPACE_SYMBOL:
            raise self.unsupported(
                f"{where}.replacement", replacement, "the pieces are written with ▁ (U+2581)"
            )
        if "prepend_scheme" in step:
            scheme = step["prepend_scheme"]
            if scheme not in ("always", "first", "never"):
                raise self.unsupported(
                    f"{where}.prepend_scheme", scheme, 'expected "always", "first" or "never"'
                )
        else:  # files written before prepend_scheme existed
            scheme = "always" if self.boolean(step, "add_prefix_space", where, True) else "never"
        split = self.boolean(step, "split", where, True)
        return whitespace_split, str(scheme), split, isolation

    def isolation(self, step: Mapping[str, object], where: str) -> tuple[str, str]:
        """The regex of a Split that isolates its matches (checked against the
        vocabulary once that is known)."""
        pattern = step.get("pattern")
        if not (
            isinstance(pattern, dict)
            and list(pattern) == ["Regex"]
            and isinstance(pattern["Regex"], str)
            and step.get("behavior") == "Isolated"
            and step.get("invert", False) is False
            and set(step) <= {"type", "pattern", "behavior", "invert"}
        ):
            raise self.unsupported(
                where,
                step,
                "bytepair reads a Split pre-tokenizer only as the one it writes (a Regex, "
                "behavior Isolated, not inverted)",
            )
        return pattern["Regex"], f"{where}.pattern.Regex"


def loads(text: str, source: str = "<string>") -> tuple[SentencePieceModel, HFPipeline]:
    """Read a Unigram ``tokenizer.json`` text: the model and the rest of its pipeline."""
    return _Reader(source).document(text)


def load(path: PathLike) -> tuple[SentencePieceModel, HFPipeline]:
    """Read the Unigram ``tokenizer.json`` file at ``path``."""
    return loads(read_text(path), str(path))


__all__ = [
    "BYTE_FALLBACK",
    "FUSE",
    "PRECOMPILED",
    "UNICODE_STEPS",
    "AddedToken",
    "DecoderStep",
    "HFPipeline",
    "Prepend",
    "Replace",
    "MetaspaceDecoder",
    "Strip",
    "StripDecoder",
    "decoder_json",
    "decoder_steps",
    "default_pipeline",
    "dumps",
    "known_characters",
    "unknown_characters_pattern",
    "load",
    "loads",
    "prepend_scheme",
    "save",
]
