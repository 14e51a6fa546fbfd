"""The tokenizers of files other libraries wrote, each giving that library's
ids: :class:`SentencePieceFileTokenizer` for a SentencePiece ``.model`` file
(``SentencePieceProcessor.encode``), :class:`HFUnigramTokenizer` for a
HuggingFace ``tokenizer.json`` with a Unigram model (``tokenizers``'
``encode(text, add_special_tokens=False)``). Both are
:class:`~bytepair.SentencePieceTokenizer` s; :func:`bytepair.load` makes them.

Their own library decides how special-token text is encoded (sentencepiece
as plain text, tokenizers by cutting out its added tokens), so they allow no
special token, and the text of a disallowed one raises
:class:`~bytepair.DisallowedSpecialError` as :class:`~bytepair.Tokenizer` does.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Optional

from .. import _native
from ..errors import DisallowedSpecialError, warn
from ..formats.hf_regex import from_tokenizers
from ..formats.hf_unigram import (
    BYTE_FALLBACK,
    FUSE,
    PRECOMPILED,
    UNICODE_STEPS,
    DecoderStep,
    HFPipeline,
    MetaspaceDecoder,
    Prepend,
    Replace,
    Strip,
    StripDecoder,
    decoder_json,
    decoder_steps,
    prepend_scheme,
)
from ..formats.hf_unigram_bytepair import not_written_by_bytepair, split_refusal
from ..formats.sentencepiece import DEFAULT_UNK_SURFACE
from ..model import SentencePieceModel, SentencePieceNormalizer
from ._contract import SpecialSet, checked_batch, on_batch, on_text, special_finder
from .unigram import (
    METASPACE,
    SentencePieceTokenizer,
    UnigramTrainingReport,
    checked_alpha,
    sampling_seed,
)

# Texts on which tokenizers' reading of a converted .model often differs from sentencepiece.
_CONVERSION_PROBES = ("a\n", "\u2581", "<unk>", " ", "a  b ", "x\u3000 y", "e\u0301", "\ufb01")


class LoadedTokenizer(SentencePieceTokenizer):
    """What the two loaded flavors share: a core port of the library's
    encoder, and its special-token contract (none allowed)."""

    __slots__ = ()
    _library: str  # the library whose ids the class gives
    _source: str  # the file it reads, for messages

    def _chosen(
        self,
        texts: list[str],
        allowed_special: SpecialSet,
        disallowed_special: SpecialSet,
        batch: bool,
    ) -> tuple[object, ...]:
        """No special token can be allowed; a disallowed one in the text is refused."""
        allowed, disallowed = self._selected(allowed_special, disallowed_special, texts, batch)
        library, source = self._library, self._source
        if allowed:
            raise ValueError(
                f"special tokens cannot be allowed for this model, read from {source}: it gives "
                f"{library}'s ids, and {library} has no choice of special tokens to cut out of "
                "text; encode the text as ordinary text instead (disallowed_special=() or "
                "encode_ordinary in Python, --ordinary on the command line)"
            )
        if not disallowed:
            return ()
        finder = special_finder(frozenset(disallowed))
        for n, text in enumerate(texts):
            found = finder.search(text) if isinstance(text, str) else None
            if found is None:
                continue
            token, position = found.group(), found.start()
            prefix = f"text {n} of the batch: " if batch else ""
            raise DisallowedSpecialError(
                f"{prefix}Encountered text corresponding to disallowed special token "
                f"{json.dumps(token, ensure_ascii=False)} at character {position}.\n"
                f"This model, read from {source}, cannot encode it as its special id; "
                f"to encode the text as {library} does, pass `disallowed_special=()`.",
                token,
                position,
            )
        return ()


class SentencePieceFileTokenizer(LoadedTokenizer, flavor="sentencepiece"):
    """A SentencePiece ``.model`` file (unigram, or SentencePiece's BPE by
    piece score): ids equal ``SentencePieceProcessor.encode(text)``. ``extra``:
    what ``<unk>`` decodes to (the file's ``trainer_spec.unk_surface``)."""

    __slots__ = ("_unk_surface",)
    _algorithms = ("unigram", "bpe")
    _library = "sentencepiece"
    _source = "a SentencePiece .model file"

    def __init__(
        self,
        model: SentencePieceModel,
        *,
        flavor: Optional[str] = None,
        training: Optional[UnigramTrainingReport] = None,
        extra: object = None,
    ) -> None:
        super().__init__(model, training=training)
        if extra is not None and not isinstance(extra, str):
            raise TypeError(f"extra must be the unk surface (a str), not {type(extra).__name__}")
        self._unk_surface = DEFAULT_UNK_SURFACE if extra is None else extra
        self._core = _sentencepiece_core(model)

    @property
    def extra(self) -> object:
        return self._unk_surface

    def _check_sampling(self, what: str) -> None:
        if self._model.algorithm != "unigram":
            raise NotImplementedError(
                f"{what} samples unigram models; this .model file is SentencePiece's BPE"
            )

    def encode_sample(
        self,
        text: str,
        *,
        alpha: float = 0.1,
        seed: Optional[int] = None,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> list[int]:
        """A segmentation drawn from sentencepiece's lattice (its
        ``SampleEncode(text, -1, alpha)``: the same distribution, not the same
        draws for a seed); unigram files only."""
        self._check_sampling("encode_sample")
        self._chosen([text], allowed_special, disallowed_special, False)
        return on_text(self._core.sample, text, checked_alpha(alpha), sampling_seed(seed))

    def encode_sample_batch(
        self, texts: Iterable[str], *, alpha: float = 0.1, seed: Optional[int] = None
    ) -> list[list[int]]:
        self._check_sampling("encode_sample_batch")
        texts = checked_batch(texts)
        alpha, seed = checked_alpha(alpha), sampling_seed(seed)
        return on_batch(self._core.sample_batch, texts, alpha, seed)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        # Valid UTF-8 as sentencepiece writes it, or the raw bytes for other errors.
        raw_bytes = errors != "replace"
        data = self._decode_in_core(self._core.decode, ids, self._unk_surface, raw_bytes)
        return data.decode("utf-8", errors=errors)

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return self._decode_in_core(self._core.decode, ids, self._unk_surface, True)

    def _piece_bytes(self, piece: str, kind: str) -> bytes:
        if kind == "control":
            return b""
        if kind == "unknown":
            return self._unk_surface.encode("utf-8")
        return piece.replace(METASPACE, " ").encode("utf-8")

    def _write_tokenizer_json(self, path: Path) -> None:
        from ..formats import hf_unigram

        pipeline = hf_unigram.default_pipeline(self._model)
        warn(self._inexact_conversion(path, pipeline))
        hf_unigram.save(self._model, path, pipeline)

    def _inexact_conversion(self, path: Path, pipeline: HFPipeline) -> str:
        """The warning for a ``.model`` written as ``tokenizer.json``, with a
        text on which the two libraries' rules give different ids, if one of
        a few usual suspects does."""
        written = HFUnigramTokenizer(self._model, extra=pipeline)
        message = (
            f"{path}: tokenizers' rules differ from sentencepiece's (whitespace other than "
            "spaces is dropped at the end, '▁' in the text is a space, every piece is a "
            "candidate, the charsmap applies per grapheme cluster), so this "
            "tokenizer.json gives other ids than the .model file on some texts"
        )
        for text in _CONVERSION_PROBES:
            ours, theirs = self.encode_ordinary(text), written.encode_ordinary(text)
            if ours != theirs:
                return f"{message}, e.g. {text!r}: sentencepiece {ours}, tokenizers {theirs}"
        return message


class HFUnigramTokenizer(LoadedTokenizer, flavor="tokenizers"):
    """A HuggingFace ``tokenizer.json`` with a Unigram model: ids equal
    tokenizers' ``encode(text, add_special_tokens=False)``, text its
    ``decode(ids, skip_special_tokens=False)``. ``extra``: the file's
    pipeline (:class:`~bytepair.formats.hf_unigram.HFPipeline`, which
    ``formats.hf_unigram.load`` gives with the model)."""

    __slots__ = ("_pipeline", "_decoder", "_core_decoder", "_byte_fallback")
    _library = "tokenizers"
    _source = "a tokenizer.json"

    def __init__(
        self,
        model: SentencePieceModel,
        *,
        flavor: Optional[str] = None,
        training: Optional[UnigramTrainingReport] = None,
        extra: object = None,
    ) -> None:
        super().__init__(model, training=training)
        if extra is None:
            raise ValueError(
                "the tokenizers flavor follows a tokenizer.json's pipeline, given as extra= "
                "(formats.hf_unigram.load gives it; bytepair.load reads such a file whole)"
            )
        if not isinstance(extra, HFPipeline):
            raise TypeError(f"extra must be the file's HFPipeline, not {type(extra).__name__}")
        from ..formats.hf_decoder import decode_tokens  # with user_regex: loaded when needed

        self._pipeline = extra
        self._core = _tokenizers_core(model, extra)
        # The file's decoder (tokens, errors) -> text, read once: decoding
        # re-read its JSON at every call.
        steps = decoder_steps(decoder_json(model, extra))
        self._decoder = functools.partial(decode_tokens, steps)
        self._core_decoder = _tokenizers_core_decoder(model, steps)
        self._byte_fallback = steps is not None and BYTE_FALLBACK in steps

    @property
    def extra(self) -> object:
        return self._pipeline

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        if errors == "replace":
            text = self._decode_in_core_decoder(ids)
            if text is not None:
                return text
        ids = self._check(ids)
        if errors != "replace":
            return self._decoded_bytes(ids).decode("utf-8", errors=errors)
        return self._decode_like_tokenizers(ids, None)

    def _decode_in_core_decoder(self, ids: Iterable[int]) -> Optional[str]:
        """tokenizers' decode by the core's port of the file's decoder (None
        where there is none: a Replace decoder with a regex)."""
        core = self._core_decoder
        return None if core is None else self._decode_in_core(core.decode, ids)

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        if not self._byte_fallback:
            # Only ByteFallback writes bytes that are no text: decode's text is all.
            text = self._decode_in_core_decoder(ids)
            if text is not None:
                return text.encode("utf-8")
        return self._decoded_bytes(self._check(ids))

    def _decoded_bytes(self, ids: list[int]) -> bytes:
        # surrogateescape carries each byte of invalid UTF-8 through the text unchanged.
        text = self._decode_like_tokenizers(ids, "surrogateescape")
        return text.encode("utf-8", errors="surrogateescape")

    def _decode_like_tokenizers(self, ids: list[int], errors: Optional[str]) -> str:
        """tokenizers' ``decode(ids, skip_special_tokens=False)``: the pieces
        through the file's decoder (with none, joined by spaces).
        ``errors=None``: each byte of an invalid run of byte pieces a U+FFFD,
        as tokenizers' ByteFallback writes it; else each such byte decoded
        with ``errors``."""
        pieces = self._model.pieces
        return self._decoder([pieces[i] for i in ids], errors)

    def _write_tokenizer_json(self, path: Path) -> None:
        from ..formats import hf_unigram

        hf_unigram.save(self._model, path, self._pipeline)


def _sentencepiece_core(model: SentencePieceModel):
    """The core's port of sentencepiece's encoder for a ``.model`` file."""
    if model.normalizer.split_on_whitespace or model.pretokenizer is not None:
        raise ValueError("a sentencepiece model runs one lattice over the whole text")
    n = model.normalizer
    return _native.CoreSentencePiece(
        list(model.pieces),
        [float(s) for s in model.scores],
        list(model.kinds),
        {
            "algorithm": model.algorithm,
            "byte_fallback": model.byte_fallback,
            "precompiled_charsmap": bytes(n.precompiled_charsmap),
            "add_dummy_prefix": n.add_dummy_prefix,
            "remove_extra_whitespaces": n.remove_extra_whitespaces,
            "escape_whitespaces": n.escape_whitespaces,
            "treat_whitespace_as_suffix": n.treat_whitespace_as_suffix,
        },
    )


def _tokenizers_core_decoder(
    model: SentencePieceModel, steps: Optional[list[DecoderStep]]
) -> Optional[_native.CoreHfDecoder]:
    """The core's port of a tokenizer.json's decoder steps
    (``formats.hf_unigram.decoder_steps``), or None for a Replace with a
    regex, which only Python runs (``formats.hf_decoder``)."""
    if steps is None:
        return _native.CoreHfDecoder(list(model.pieces), None)
    core_steps: list[tuple[str, object]] = []
    for step in steps:
        if step == BYTE_FALLBACK:
            core_steps.append(("byte_fallback", None))
        elif step == FUSE:
            core_steps.append(("fuse", None))
        elif isinstance(step, MetaspaceDecoder):
            core_steps.append(("metaspace", (step.replacement, step.prepend)))
        elif isinstance(step, Replace) and not step.regex:
            core_steps.append(("replace", (step.pattern, step.content)))
        elif isinstance(step, StripDecoder):
            core_steps.append(("strip", (step.content, step.start, step.stop)))
        else:
            return None
    return _native.CoreHfDecoder(list(model.pieces), core_steps)


def _tokenizers_core(model: SentencePieceModel, pipeline):
    """The core's port of tokenizers' Unigram encoder for a ``tokenizer.json``."""
    if pipeline.isolate_unknown:
        raise ValueError(split_refusal(not_written_by_bytepair(model, pipeline)))
    steps: list[tuple[str, object]] = []
    for step in pipeline.normalizers:
        if step == PRECOMPILED:
            steps.append(("precompiled", bytes(model.normalizer.precompiled_charsmap)))
        elif isinstance(step, Replace):
            pattern = from_tokenizers(step.pattern) if step.regex else step.pattern
            steps.append(("replace", (pattern, step.content, step.regex)))
        elif isinstance(step, Prepend):
            steps.append(("prepend", step.prepend))
        elif step in UNICODE_STEPS:
            steps.append(("unicode", UNICODE_STEPS[step]))
        elif isinstance(step, Strip):
            # The core has no Strip step: its regex Replace (fancy-regex, whose
            # \s is Unicode White_Space, as Rust's char::is_whitespace) does it.
            if step.left:
                steps.append(("replace", (r"\A\s+", "", True)))
            if step.right:
                steps.append(("replace", (r"\s+\z", "", True)))
        else:
            raise ValueError(f"unknown normalizer step {step!r}")
    return _native.CoreHfUnigram(
        list(model.pieces),
        [float(s) for s in model.scores],
        {
            "unk_id": model.unk_id,
            "byte_fallback": model.byte_fallback,
            "normalizers": steps,
            "whitespace_split": pipeline.whitespace_split,
            "metaspace": {
                "replacement": METASPACE,
                "prepend_scheme": prepend_scheme(model, pipeline),
                "split": model.normalizer.split_on_whitespace,
            },
            "added_tokens": [(t.content, t.id, t.normalized) for t in pipeline.added_tokens],
        },
    )


def from_tokenizers_file(model: SentencePieceModel, pipeline) -> SentencePieceTokenizer:
    """The tokenizer for a Unigram ``tokenizer.json``. A file this library
    wrote for a model it trained (:func:`~bytepair.formats.hf_unigram_bytepair.for_tokenizers`'s shape) gives the
    same ids under both libraries' rules, so it loads as a bytepair model,
    with n-best and sampling; any other file follows tokenizers' rules (and
    one that keeps bytepair's Split of unknown characters, which only the
    bytepair flavor runs, is a ValueError naming what differs)."""
    differs = not_written_by_bytepair(model, pipeline)
    if differs is not None:
        if pipeline.isolate_unknown:
            raise ValueError(split_refusal(differs))
        return HFUnigramTokenizer(model, extra=pipeline)
    forms = tuple(pipeline.normalizers[:-1])  # before the Prepend("▁")
    normalizer = SentencePieceNormalizer(remove_extra_whitespaces=False, split_on_whitespace=True)
    return SentencePieceTokenizer(
        dataclasses.replace(model, normalizer=normalizer, normalize=forms)
    )
