"""SentencePieceTokenizer: the unigram language model (and SentencePiece's
score-ordered BPE) behind the same encode/decode API as :class:`Tokenizer`,
plus n-best and sampled segmentations (subword regularization).

Where the model comes from decides the exact behaviour ("flavor"):

- ``"bytepair"``: trained here. Text is cut into metaspace words (or by a
  BPE-side pre-tokenizer) and each word is segmented on its own lattice in
  f64 (docs/unigram.md); special tokens are control pieces with the
  tiktoken contract of :class:`Tokenizer`.
- ``"sentencepiece"``: read from a ``.model`` file; ids equal
  ``SentencePieceProcessor.encode(text)``.
- ``"tokenizers"``: read from a HuggingFace ``tokenizer.json`` with a Unigram
  model; ids equal ``tokenizers``' ``encode(text, add_special_tokens=False)``.
"""

from __future__ import annotations

import functools
import json
import math
import numbers
import operator
import os
import random
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional, Union

from . import _native
from .decode_batch import decode_each
from .errors import DisallowedSpecialError, warn
from .model import PIECE_KINDS, SentencePieceModel, SentencePieceNormalizer
from .tokenizer import (
    SpecialSet,
    _batch_surrogate_error,
    _checked_id,
    _checked_ids,
    _finder,
    _on_text,
    default_choice,
    select_specials,
)

FLAVORS = ("bytepair", "sentencepiece", "tokenizers")
METASPACE = "\u2581"
MAX_NBEST = 512  # encode_nbest's largest k: SentencePiece's kMaxNBestSize, which it enforces
UNK_SURFACE = "\u2047"  # what <unk> decodes to in a bytepair-trained model
# Texts on which tokenizers' reading of a converted .model often differs from sentencepiece.
_CONVERSION_PROBES = ("a\n", "\u2581", "<unk>", " ", "a  b ", "x\u3000 y", "e\u0301", "\ufb01")


@dataclass(frozen=True)
class UnigramTrainingReport:
    """How a unigram training run went.

    rounds: per EM round, (table size at its start, the E-step objective of
        each sub-iteration, size after EM, size after pruning or None).
    """

    rounds: tuple[tuple[int, tuple[float, ...], int, Optional[int]], ...]
    vocab_size_requested: int
    distinct_words: int
    seconds: float


def _alpha(alpha: object) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise ValueError(f"alpha must be a non-negative number, got {alpha!r}")
    if not 0 <= alpha < float("inf"):  # NaN fails too
        raise ValueError(f"alpha must be a non-negative number, got {alpha!r}")
    return float(alpha)


def _seed(seed: object) -> int:
    if seed is None:
        return random.getrandbits(64)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, not {type(seed).__name__}")
    return seed % (1 << 64)


class SentencePieceTokenizer:
    """A unigram (or SentencePiece BPE) tokenizer; see the module docstring."""

    __slots__ = (
        "_model",
        "_flavor",
        "_core",
        "_foreign_core",
        "_special_index",
        "_piece_index",
        "_training",
        "_extra",
        "_default_selection",
        "_tokenizers_decoder",
        "_tokenizers_core_decoder",
        "_tokenizers_byte_fallback",
    )

    def __init__(
        self,
        model: SentencePieceModel,
        *,
        flavor: str = "bytepair",
        training: Optional[UnigramTrainingReport] = None,
        extra: object = None,
    ) -> None:
        if flavor not in FLAVORS:
            raise ValueError(f"unknown flavor {flavor!r}: use one of {', '.join(FLAVORS)}")
        _check_model(model, flavor)
        if flavor == "tokenizers" and extra is None:
            raise ValueError(
                "the tokenizers flavor follows a tokenizer.json's pipeline, given as extra= "
                "(formats.hf_unigram.load gives it; bytepair.load reads such a file whole)"
            )
        self._model = model
        self._flavor = flavor
        self._training = training
        self._extra = extra  # the HF pipeline of a tokenizer.json, for the "tokenizers" flavor
        specials = [
            (p, i) for i, (p, k) in enumerate(zip(model.pieces, model.kinds)) if k == "control"
        ]
        self._special_index = {text: n for n, (text, _) in enumerate(specials)}
        self._default_selection = {
            name: tuple(
                map(frozenset, select_specials(self._special_index, allowed, "all", (), False))
            )
            for name, allowed in (("none", ()), ("all", "all"))
        }
        self._core = None
        self._piece_index: Optional[dict[str, int]] = None
        self._foreign_core = None
        self._tokenizers_decoder = None
        self._tokenizers_core_decoder = None
        self._tokenizers_byte_fallback = False
        if flavor == "sentencepiece":
            from .reference.sentencepiece import DEFAULT_UNK_SURFACE

            self._extra = DEFAULT_UNK_SURFACE if extra is None else extra  # what <unk> decodes to
            self._foreign_core = _sentencepiece_core(model)
        elif flavor == "tokenizers":
            from .formats.hf_unigram import BYTE_FALLBACK, decoder_json, decoder_steps
            from .reference.hf_unigram import decode_tokens

            self._foreign_core = _tokenizers_core(model, extra)
            # The file's decoder (tokens, errors) -> text, read once: decoding
            # re-read its JSON at every call.
            steps = decoder_steps(decoder_json(model, extra))
            self._tokenizers_decoder = functools.partial(decode_tokens, steps)
            self._tokenizers_core_decoder = _tokenizers_core_decoder(model, steps)
            self._tokenizers_byte_fallback = steps is not None and BYTE_FALLBACK in steps
        elif flavor == "bytepair":
            pre = model.pretokenizer
            normal_lengths = [len(p) for p, k in zip(model.pieces, model.kinds) if k == "normal"]
            self._core = _native.CoreUnigram(
                list(model.pieces),
                [float(s) for s in model.scores],
                list(model.kinds),
                specials,
                {
                    "unk_id": model.unk_id,
                    "byte_fallback": model.byte_fallback,
                    "max_piece_length": max(normal_lengths, default=1),
                    "pretokenizer": "metaspace" if pre is None else pre.kind,
                    "pattern": pre.pattern if pre is not None and pre.kind == "regex" else None,
                    "normalize": list(model.normalize),
                },
            )

    # ---- Encoding ----

    def _special_indices(
        self,
        allowed_special: SpecialSet,
        disallowed_special: SpecialSet,
        texts: Sequence[object],
        batch: bool = False,
    ):
        """The core's (allowed, disallowed) indices, as :class:`Tokenizer` reads
        the two arguments (tiktoken's way: see ``tokenizer.select_specials``)."""
        allowed, disallowed = self._selected(allowed_special, disallowed_special, texts, batch)
        index = self._special_index
        return sorted(index[t] for t in allowed), sorted(index[t] for t in disallowed)

    def _selected(
        self,
        allowed_special: SpecialSet,
        disallowed_special: SpecialSet,
        texts: Sequence[object],
        batch: bool,
    ) -> tuple[Collection[str], Collection[str]]:
        """``select_specials`` of the model's special tokens; the outcome of
        the usual arguments, which depends on no text, kept from call to call."""
        default = default_choice(allowed_special, disallowed_special)
        if default is None:
            return select_specials(
                self._special_index, allowed_special, disallowed_special, texts, batch
            )
        return self._default_selection[default]

    def _check_loaded_specials(
        self,
        texts: list[str],
        allowed_special: SpecialSet,
        disallowed_special: SpecialSet,
        *,
        batch: bool,
    ) -> None:
        """Tokenizer's special-token contract, as far as a loaded model can
        keep it: its own library decides how special-token text is encoded
        (sentencepiece as plain text, tokenizers by cutting out its added
        tokens), so no special token can be allowed, and the text of a
        disallowed one raises DisallowedSpecialError as Tokenizer does."""
        allowed, disallowed = self._selected(allowed_special, disallowed_special, texts, batch)
        library = self._flavor
        source = "a SentencePiece .model file" if library == "sentencepiece" else "a tokenizer.json"
        if allowed:
            raise ValueError(
                f"special tokens cannot be allowed for this model, read from {source}: it gives "
                f"{library}'s ids, and {library} has no choice of special tokens to cut out of "
                "text; encode the text as ordinary text instead (disallowed_special=() or "
                "encode_ordinary in Python, --ordinary on the command line)"
            )
        if not disallowed:
            return
        finder = _finder(frozenset(disallowed))
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

    def _encode_with(
        self, call: str, text: str, allowed_special: SpecialSet, disallowed_special: SpecialSet
    ):
        """The core's ``call`` (``encode`` or ``encode_to_buffer``) on ``text``,
        once the special tokens in it are allowed."""
        if self._core is None:
            self._check_loaded_specials([text], allowed_special, disallowed_special, batch=False)
            return _on_text(getattr(self._foreign_core, call), text)
        allowed, disallowed = self._special_indices(allowed_special, disallowed_special, [text])
        return _on_text(getattr(self._core, call), text, allowed, disallowed)

    def _encode_batch_with(
        self,
        call: str,
        texts: Iterable[str],
        allowed_special: SpecialSet,
        disallowed_special: SpecialSet,
    ):
        """The core's ``call`` (``encode_batch`` or ``encode_batch_to_buffers``)
        on ``texts``, once the special tokens in them are allowed."""
        from .tokenizer import Tokenizer

        texts = Tokenizer._checked_batch(texts)
        if self._core is None:
            self._check_loaded_specials(texts, allowed_special, disallowed_special, batch=True)
            native, chosen = getattr(self._foreign_core, call), ()
        else:
            native = getattr(self._core, call)
            chosen = self._special_indices(allowed_special, disallowed_special, texts, batch=True)
        try:
            return native(texts, *chosen)
        except UnicodeEncodeError as e:
            raise _batch_surrogate_error(e, texts) from None

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> list[int]:
        """The best (Viterbi) segmentation of ``text`` as ids. Special tokens
        follow :meth:`Tokenizer.encode`'s contract; a loaded model allows
        none (its own library decides) and, without a disallowed one in the
        text, gives :meth:`encode_ordinary`'s ids."""
        return self._encode_with("encode", text, allowed_special, disallowed_special)

    def encode_ordinary(self, text: str) -> list[int]:
        """``text`` with special-token text encoded as ordinary text. For a
        loaded model: the ids its own library (sentencepiece / tokenizers) gives,
        by the core's port of its rules."""
        if self._core is None:
            return _on_text(self._foreign_core.encode, text)
        return _on_text(self._core.encode, text, [], [])

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> list[list[int]]:
        """Encodes many texts in parallel on all cores, without the GIL."""
        return self._encode_batch_with("encode_batch", texts, allowed_special, disallowed_special)

    def encode_ordinary_batch(self, texts: Iterable[str]) -> list[list[int]]:
        return self.encode_batch(texts, disallowed_special=())

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ):
        """Like :meth:`encode`, as a ``numpy.uint32`` array (no Python int per token)."""
        import numpy as np

        buffer = self._encode_with("encode_to_buffer", text, allowed_special, disallowed_special)
        return np.frombuffer(buffer, dtype=np.uint32)

    def encode_batch_to_numpy(
        self,
        texts: Iterable[str],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ):
        """Like :meth:`encode_batch`, as one flat ``numpy.uint32`` array plus
        ``int64`` offsets: text ``i`` is ``ids[offsets[i]:offsets[i + 1]]``."""
        import numpy as np

        ids, offsets = self._encode_batch_with(
            "encode_batch_to_buffers", texts, allowed_special, disallowed_special
        )
        return np.frombuffer(ids, dtype=np.uint32), np.frombuffer(offsets, dtype=np.int64)

    def _sentencepiece_sampling(self, what: str) -> bool:
        """Whether ``what`` samples with the ``.model`` file's own lattice."""
        if self._flavor != "sentencepiece":
            return False
        if self._model.algorithm != "unigram":
            raise NotImplementedError(
                f"{what} samples unigram models; this .model file is SentencePiece's BPE"
            )
        return True

    def _unigram_core(self, what: str):
        if self._core is None:
            raise NotImplementedError(
                f"{what} needs a unigram model trained by bytepair; this {self._flavor} model "
                "only encodes with its library's rule"
            )
        return self._core

    def encode_nbest(
        self,
        text: str,
        k: int,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> list[tuple[list[int], float]]:
        """The ``k`` most probable segmentations with their log-probability
        (sum of piece scores), best first; ``k`` at most :data:`MAX_NBEST`
        (512: SentencePiece refuses a larger n-best size too)."""
        core = self._unigram_core("encode_nbest")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        if k > MAX_NBEST:
            raise ValueError(f"k must be at most {MAX_NBEST} (as in SentencePiece), got {k}")
        allowed, disallowed = self._special_indices(allowed_special, disallowed_special, [text])
        return _on_text(core.nbest, text, allowed, disallowed, k)

    def encode_sample(
        self,
        text: str,
        *,
        alpha: float = 0.1,
        seed: Optional[int] = None,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> list[int]:
        """A segmentation drawn with probability proportional to
        ``P(segmentation) ** alpha`` (subword regularization, Kudo 2018): small
        ``alpha`` spreads the choice, large ``alpha`` approaches Viterbi.
        ``seed`` makes it reproducible. A unigram ``.model`` file draws from
        sentencepiece's lattice (its ``SampleEncode(text, -1, alpha)``: the
        same distribution, not the same draws for a seed)."""
        if self._sentencepiece_sampling("encode_sample"):
            self._check_loaded_specials([text], allowed_special, disallowed_special, batch=False)
            return _on_text(self._foreign_core.sample, text, _alpha(alpha), _seed(seed))
        core = self._unigram_core("encode_sample")
        allowed, disallowed = self._special_indices(allowed_special, disallowed_special, [text])
        return _on_text(core.sample, text, allowed, disallowed, _alpha(alpha), _seed(seed))

    def encode_sample_batch(
        self, texts: Iterable[str], *, alpha: float = 0.1, seed: Optional[int] = None
    ) -> list[list[int]]:
        """:meth:`encode_sample` of many texts in parallel (special-token text
        as ordinary text); text ``i`` draws from its own stream of ``seed``."""
        from .tokenizer import Tokenizer

        own_lattice = self._sentencepiece_sampling("encode_sample_batch")
        core = None if own_lattice else self._unigram_core("encode_sample_batch")
        texts = Tokenizer._checked_batch(texts)
        alpha, seed = _alpha(alpha), _seed(seed)
        try:
            if core is None:
                return self._foreign_core.sample_batch(texts, alpha, seed)
            return core.sample_batch(texts, [], alpha, seed)
        except UnicodeEncodeError as e:
            raise _batch_surrogate_error(e, texts) from None

    # ---- Decoding ----

    def _check(self, ids: Iterable[int]) -> list[int]:
        return _checked_ids(ids, len(self._model.pieces))

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """The text of ``ids``. With ``errors="replace"`` (the default), as
        the model's own library decodes them (sentencepiece's ``decode``,
        tokenizers' ``decode(ids, skip_special_tokens=False)``: each byte of
        invalid UTF-8 a U+FFFD); with other ``errors`` (``"strict"``, ...),
        :meth:`decode_bytes` decoded with them. For a bytepair model special
        tokens decode to their text, ``<unk>`` to ``⁇``."""
        if self._flavor == "sentencepiece":
            # Valid UTF-8 as sentencepiece writes it, or the raw bytes for other errors.
            raw_bytes = errors != "replace"
            data = self._decode_in_core(self._foreign_core.decode, ids, self._extra, raw_bytes)
            return data.decode("utf-8", errors=errors)
        if self._flavor == "bytepair" and errors == "replace":
            return self._decode_in_core(self._core.decode, ids, False).decode("utf-8")
        if self._flavor == "tokenizers" and errors == "replace":
            text = self._decode_tokenizers_in_core(ids)
            if text is not None:
                return text
        ids = self._check(ids)
        if self._flavor == "bytepair":
            # Other errors may drop bytes before a '▁' that then starts a text: the reference.
            return self._decode_bytepair(ids, errors)
        if errors != "replace":
            return self._tokenizers_bytes(ids).decode("utf-8", errors=errors)
        return self._decode_like_tokenizers(ids, None)

    def _decode_tokenizers_in_core(self, ids: Iterable[int]) -> Optional[str]:
        """tokenizers' decode by the core's port of the file's decoder (None
        where there is none: a Replace decoder with a regex)."""
        core = self._tokenizers_core_decoder
        return None if core is None else self._decode_in_core(core.decode, ids)

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes :meth:`decode` writes, with byte pieces (``<0xC3>``) as
        their byte, valid UTF-8 or not."""
        if self._flavor == "sentencepiece":
            return self._decode_in_core(self._foreign_core.decode, ids, self._extra, True)
        if self._flavor == "bytepair":
            return self._decode_in_core(self._core.decode, ids, True)
        if not self._tokenizers_byte_fallback:
            # Only ByteFallback writes bytes that are no text: decode's text is all.
            text = self._decode_tokenizers_in_core(ids)
            if text is not None:
                return text.encode("utf-8")
        return self._tokenizers_bytes(self._check(ids))

    def _decode_in_core(self, decode, ids: Iterable[int], *options) -> bytes:
        """``decode(ids, *options)``, a core's port of the reference's decoding;
        a bad id is a ValueError naming it and its position."""
        if not isinstance(ids, (list, tuple)) and not hasattr(ids, "__array__"):
            # The core reads only sequences; a generator or dict view is read once, here.
            ids = self._check(ids)
        try:
            return decode(ids, *options)
        except (OverflowError, TypeError):
            # Names the first bad id; valid ids the core could not read go in as a list.
            return decode(self._check(ids), *options)

    def _tokenizers_bytes(self, ids: list[int]) -> bytes:
        # surrogateescape carries each byte of invalid UTF-8 through the text unchanged.
        text = self._decode_like_tokenizers(ids, "surrogateescape")
        return text.encode("utf-8", errors="surrogateescape")

    def decode_batch(
        self, batch: Iterable[Iterable[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        """:meth:`decode` of each list of ids, in order (a large batch on up to
        ``num_threads`` threads)."""
        return decode_each(functools.partial(self.decode, errors=errors), batch, num_threads)

    def decode_bytes_batch(
        self, batch: Iterable[Iterable[int]], *, num_threads: int = 8
    ) -> list[bytes]:
        """:meth:`decode_bytes` of each list of ids, in order."""
        return decode_each(self.decode_bytes, batch, num_threads)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token where it stands inside a text: a byte piece
        its byte, any other piece what :meth:`decode_bytes` writes for it
        there (``▁`` as a space; at the start of a text that space may be
        dropped)."""
        i = _checked_id(token, len(self._model.pieces))
        piece, kind = self._model.pieces[i], self._model.kinds[i]
        if kind == "byte":
            return bytes([int(piece[3:5], 16)])
        if self._flavor == "sentencepiece":
            if kind == "control":
                return b""
            if kind == "unknown":
                return self._extra.encode("utf-8")
        elif self._flavor == "bytepair":
            if kind == "unknown":
                return UNK_SURFACE.encode("utf-8")
            if kind == "control" or self._model.pretokenizer is not None:
                return piece.encode("utf-8")
        return piece.replace(METASPACE, " ").encode("utf-8")

    def _decode_bytepair(self, ids: list[int], errors: str) -> str:
        """bytepair.reference.unigram.decode for ``errors`` other than
        "replace" (the core's port serves that, and decode_bytes): the text
        between special tokens, byte pieces and the others, decoded from
        UTF-8 as one, so that where ``errors`` drops bytes a text may start
        with the '▁' after them; specials as their text."""
        model = self._model
        parts: list[tuple[str, bool]] = []  # (text, is_special)
        pending = bytearray()
        for i in ids:
            piece, kind = model.pieces[i], model.kinds[i]
            if kind == "byte":
                pending.append(int(piece[3:5], 16))
            elif kind == "control":
                if pending:
                    parts.append((pending.decode("utf-8", errors=errors), False))
                    pending.clear()
                parts.append((piece, True))
            else:
                pending += (UNK_SURFACE if kind == "unknown" else piece).encode("utf-8")
        if pending:
            parts.append((pending.decode("utf-8", errors=errors), False))
        if model.pretokenizer is None:
            # Text at the start and after each special began with the dummy '▁'.
            parts = [
                (t[1:], special)
                if not special and (i == 0 or parts[i - 1][1]) and t.startswith(METASPACE)
                else (t, special)
                for i, (t, special) in enumerate(parts)
            ]
            parts = [(t if special else t.replace(METASPACE, " "), special) for t, special in parts]
        return "".join(t for t, _ in parts)

    def _decode_like_tokenizers(self, ids: list[int], errors: Optional[str]) -> str:
        """tokenizers' ``decode(ids, skip_special_tokens=False)``: the pieces
        through the file's decoder (bytepair.reference.hf_unigram.decode;
        with none, joined by spaces). ``errors=None``: each byte of an
        invalid run of byte pieces a U+FFFD, as tokenizers' ByteFallback
        writes it; else each such byte decoded with ``errors``."""
        pieces = self._model.pieces
        return self._tokenizers_decoder([pieces[i] for i in ids], errors)

    # ---- The vocabulary ----

    def id_to_piece(self, token: int) -> str:
        return self._model.pieces[self._check([token])[0]]

    def piece_to_id(self, piece: str) -> Optional[int]:
        """The id of ``piece`` (the first, should a piece repeat), or None."""
        if self._piece_index is None:
            index: dict[str, int] = {}
            for i, p in enumerate(self._model.pieces):
                index.setdefault(p, i)
            self._piece_index = index
        return self._piece_index.get(piece)

    @property
    def n_vocab(self) -> int:
        return len(self._model.pieces)

    @property
    def special_tokens(self) -> dict[str, int]:
        return {
            p: i
            for i, (p, k) in enumerate(zip(self._model.pieces, self._model.kinds))
            if k == "control"
        }

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.special_tokens)

    @property
    def vocab(self) -> dict[int, str]:
        return dict(enumerate(self._model.pieces))

    @property
    def model(self) -> SentencePieceModel:
        return self._model

    @property
    def normalize(self) -> tuple[str, ...]:
        """The normalization of the text between special tokens (a model
        trained with ``normalize``): ``()``, or ``"nfc"``/``"nfkc"`` and/or
        ``"lowercase"``."""
        return self._model.normalize

    @property
    def flavor(self) -> str:
        return self._flavor

    @property
    def training(self) -> Optional[UnigramTrainingReport]:
        return self._training

    def save(
        self,
        path: Union[str, os.PathLike],
        *,
        format: Literal["huggingface"] = "huggingface",
        overwrite: bool = False,
    ) -> None:
        """Writes a HuggingFace ``tokenizer.json``; an existing file is only
        replaced with ``overwrite=True``. ``tokenizers`` loads it with the same
        ids, except for a model read from a ``.model`` file: that is written
        as transformers' converter writes it, with a warning, since
        tokenizers' rules differ from sentencepiece's on some texts."""
        from .formats import hf_unigram, refuse_directory

        if format != "huggingface":
            raise ValueError(f"unknown format {format!r}: a unigram model saves as 'huggingface'")
        if self._model.algorithm != "unigram":
            raise ValueError(
                "this is SentencePiece's BPE (merges by piece score); bytepair writes only "
                "unigram models as tokenizer.json"
            )
        path = Path(path)
        refuse_directory(path)
        if path.exists() and not overwrite:
            raise FileExistsError(f"{path} already exists; pass overwrite=True to replace it")
        if self._flavor == "tokenizers":
            hf_unigram.save(self._model, path, self._extra)
        elif self._flavor == "sentencepiece":
            pipeline = hf_unigram.default_pipeline(self._model)
            warn(self._inexact_conversion(path, pipeline))
            hf_unigram.save(self._model, path, pipeline)
        else:
            model, pipeline = _for_tokenizers(self._model)
            hf_unigram.save(model, path, pipeline)

    def _inexact_conversion(self, path: Path, pipeline) -> str:
        """The warning for a ``.model`` written as ``tokenizer.json``, with a
        text on which the two libraries' rules give different ids, if one of
        a few usual suspects does."""
        written = SentencePieceTokenizer(self._model, flavor="tokenizers", extra=pipeline)
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

    def __reduce__(self):
        return (_rebuild, (self._model, self._flavor, self._extra))

    def __repr__(self) -> str:
        return (
            f"<SentencePieceTokenizer {self._model.algorithm} flavor={self._flavor!r} "
            f"n_vocab={self.n_vocab} special={len(self._special_index)}>"
        )


_BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")
_BYTEPAIR_KINDS = ("normal", "unknown", "control", "byte")


def _check_model(model: object, flavor: str) -> None:
    """The fields of a :class:`SentencePieceModel` (perhaps built by hand)
    as the cores need them: a TypeError or ValueError naming the field (and
    index) instead of a conversion error that does not say where."""
    if not isinstance(model, SentencePieceModel):
        raise TypeError(f"expected a SentencePieceModel, not {type(model).__name__}")
    name = "SentencePieceModel"
    columns = {}
    for field in ("pieces", "scores", "kinds"):
        value = getattr(model, field)
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"{name}.{field} must be a tuple, not {type(value).__name__}")
        columns[field] = value
    lengths = {field: len(value) for field, value in columns.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(
            f"{name}.scores / {name}.kinds: one per piece, got "
            + ", ".join(f"{n} {field}" for field, n in lengths.items())
        )
    if model.algorithm not in ("unigram", "bpe"):
        raise ValueError(f"{name}.algorithm must be 'unigram' or 'bpe', got {model.algorithm!r}")
    if flavor != "sentencepiece" and model.algorithm != "unigram":
        raise ValueError(
            f"{name}.algorithm is {model.algorithm!r}: the {flavor} flavor runs unigram "
            "models only (SentencePiece's BPE is read from a .model file)"
        )
    if not isinstance(model.byte_fallback, bool):
        raise TypeError(
            f"{name}.byte_fallback must be a bool, not {type(model.byte_fallback).__name__}"
        )
    unk_id = model.unk_id
    if unk_id is not None:
        if isinstance(unk_id, bool) or not hasattr(unk_id, "__index__"):
            raise TypeError(f"{name}.unk_id must be an int or None, not {type(unk_id).__name__}")
        unk_id = operator.index(unk_id)  # numpy integers too, as the core reads it
        if not 0 <= unk_id < len(model.pieces):
            raise ValueError(
                f"{name}.unk_id is {unk_id}, not an id of the {len(model.pieces)} pieces"
            )
    _check_normalize(model, flavor)
    allowed_kinds = _BYTEPAIR_KINDS if flavor == "bytepair" else PIECE_KINDS
    if _looks_valid(model, allowed_kinds):
        return
    for i, (piece, score, kind) in enumerate(zip(model.pieces, model.scores, model.kinds)):
        if not isinstance(piece, str):
            raise TypeError(f"{name}.pieces[{i}] must be a str, not {type(piece).__name__}")
        try:
            piece.encode("utf-8")
        except UnicodeEncodeError as error:
            surrogate = error.start
            raise ValueError(
                f"{name}.pieces[{i}] {piece!r} holds the lone surrogate "
                f"U+{ord(piece[surrogate]):04X} at character {surrogate}, which is not Unicode text"
            ) from None
        if isinstance(score, bool) or not isinstance(score, numbers.Real):
            raise TypeError(f"{name}.scores[{i}] must be a number, not {type(score).__name__}")
        if math.isnan(score):
            raise ValueError(f"{name}.scores[{i}] (piece {piece!r}) is NaN")
        if kind not in PIECE_KINDS:
            raise ValueError(f"{name}.kinds[{i}] is {kind!r}: use one of {', '.join(PIECE_KINDS)}")
        if flavor == "bytepair" and kind not in _BYTEPAIR_KINDS:
            raise ValueError(
                f"{name}.kinds[{i}] is {kind!r}: a model trained by bytepair holds only "
                f"{', '.join(_BYTEPAIR_KINDS)} pieces"
            )
        if kind == "byte" and not _BYTE_PIECE.fullmatch(piece):
            raise ValueError(f"{name}.pieces[{i}] {piece!r} is a byte piece, but not <0xXX>")


def _check_normalize(model: SentencePieceModel, flavor: str) -> None:
    from .normalization import check_normalize_field

    name = "SentencePieceModel.normalize"
    check_normalize_field(model.normalize, name)
    if model.normalize and flavor != "bytepair":
        raise ValueError(
            f"{name} is {model.normalize!r}: a {flavor} model normalizes as its file says "
            "(SentencePieceModel.normalizer, and a tokenizer.json's pipeline)"
        )


def _looks_valid(model: SentencePieceModel, allowed_kinds: tuple[str, ...]) -> bool:
    """The usual case of :func:`_check_model`'s loop over the pieces, whole-
    column at a time (a vocabulary of 100,000 pieces in a few ms)."""
    try:
        if not all(type(piece) is str for piece in model.pieces):
            return False
        "".join(model.pieces).encode("utf-8")
        if not all(type(score) is float and score == score for score in model.scores):
            return False
        if not set(model.kinds) <= set(allowed_kinds):
            return False
    except (TypeError, UnicodeEncodeError):
        return False
    return all(
        _BYTE_PIECE.fullmatch(piece)
        for piece, kind in zip(model.pieces, model.kinds)
        if kind == "byte"
    )


def _for_tokenizers(model: SentencePieceModel):
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
    import dataclasses

    from .formats.hf_unigram import AddedToken, HFPipeline, Prepend

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


def _bytepair_decoder() -> dict:
    """The decoder :func:`_for_tokenizers` writes: tokenizers then decodes as
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
    """The score :func:`_for_tokenizers` gives every piece that is not normal."""
    return min(s for s, k in zip(model.scores, model.kinds) if k == "normal") - 1000.0


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


def _tokenizers_core_decoder(model: SentencePieceModel, steps) -> Optional[object]:
    """The core's port of a tokenizer.json's decoder steps
    (``formats.hf_unigram.decoder_steps``), or None for a Replace with a
    regex, which only the reference runs."""
    from .formats.hf_unigram import BYTE_FALLBACK, FUSE, MetaspaceDecoder, Replace, StripDecoder

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
    from .formats.hf_regex import from_tokenizers
    from .formats.hf_unigram import (
        PRECOMPILED,
        UNICODE_STEPS,
        Prepend,
        Replace,
        Strip,
        prepend_scheme,
    )

    if pipeline.isolate_unknown:
        raise ValueError(_split_refusal(_not_written_by_bytepair(model, pipeline)))
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
    wrote for a model it trained (:func:`_for_tokenizers`'s shape) gives the
    same ids under both libraries' rules, so it loads as a bytepair model,
    with n-best and sampling; any other file follows tokenizers' rules (and
    one that keeps bytepair's Split of unknown characters, which only the
    bytepair flavor runs, is a ValueError naming what differs)."""
    import dataclasses

    differs = _not_written_by_bytepair(model, pipeline)
    if differs is not None:
        if pipeline.isolate_unknown:
            raise ValueError(_split_refusal(differs))
        return SentencePieceTokenizer(model, flavor="tokenizers", extra=pipeline)
    forms = tuple(pipeline.normalizers[:-1])  # before the Prepend("▁")
    normalizer = SentencePieceNormalizer(remove_extra_whitespaces=False, split_on_whitespace=True)
    return SentencePieceTokenizer(
        dataclasses.replace(model, normalizer=normalizer, normalize=forms)
    )


def _split_refusal(differs: Optional[str]) -> str:
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


def _not_written_by_bytepair(model: SentencePieceModel, pipeline) -> Optional[str]:
    """None for a file that :func:`_for_tokenizers` could have written (the
    bytepair flavor then gives tokenizers' ids and decodes as its decoder
    does); otherwise the first place where it differs, with its key."""
    from .formats.hf_unigram import Prepend, serde_json_f64, serde_json_text

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
    # The other pieces must score as _for_tokenizers writes them, or
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


def _is_normalize(steps: tuple) -> bool:
    """Whether normalizer steps are a ``normalize`` tuple in its canonical order."""
    from .normalization import NORMALIZATIONS, resolve_normalize

    if not all(isinstance(step, str) and step in NORMALIZATIONS for step in steps):
        return False
    try:
        return resolve_normalize(steps) == steps
    except ValueError:  # nfc and nfkc together
        return False


def _rebuild(model: SentencePieceModel, flavor: str, extra: object) -> SentencePieceTokenizer:
    return SentencePieceTokenizer(model, flavor=flavor, extra=extra)
