"""SentencePieceTokenizer: the unigram language model (and SentencePiece's
score-ordered BPE) behind the same encode/decode API as :class:`Tokenizer`,
plus n-best and sampled segmentations (subword regularization).

Where the model comes from decides the exact behaviour, and each source is
its own class behind :class:`SentencePieceTokenizer` (its ``flavor``):

- :class:`UnigramTokenizer` (``"bytepair"``): trained here. Text is cut into
  metaspace words (or by a BPE-side pre-tokenizer) and each word is segmented
  on its own lattice in f64 (docs/design/unigram.md); special tokens are
  control pieces with the tiktoken contract of :class:`Tokenizer`.
- ``SentencePieceFileTokenizer`` (``"sentencepiece"``, in
  :mod:`bytepair.tokenizers.loaded`): read from a ``.model`` file; ids equal
  ``SentencePieceProcessor.encode(text)``.
- ``HFUnigramTokenizer`` (``"tokenizers"``, same module): read from a
  HuggingFace ``tokenizer.json`` with a Unigram model; ids equal
  ``tokenizers``' ``encode(text, add_special_tokens=False)``.
"""

from __future__ import annotations

import math
import numbers
import operator
import os
import random
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Literal, Optional, TypeVar, Union

from .. import _native
from ..model import PIECE_KINDS, SentencePieceModel
from ._contract import (
    BatchDecoding,
    SpecialSet,
    checked_batch,
    checked_id,
    checked_ids,
    default_choice,
    on_batch,
    on_text,
    select_specials,
)

T = TypeVar("T")

# The flavors, by where the model comes from (UnigramTokenizer, then bytepair.tokenizers.loaded).
FLAVORS = ("bytepair", "sentencepiece", "tokenizers")
METASPACE = "\u2581"
MAX_NBEST = 512  # encode_nbest's largest k: SentencePiece's kMaxNBestSize, which it enforces
UNK_SURFACE = "\u2047"  # what <unk> decodes to in a bytepair-trained model


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

    def __repr__(self) -> str:
        # A summary: each round's objectives are in rounds, not on the screen.
        rounds = self.rounds
        sizes = ""
        if rounds:
            _, _, after_em, after_pruning = rounds[-1]
            last = after_em if after_pruning is None else after_pruning
            sizes = f" ({rounds[0][0]} -> {last} pieces)"
        return (
            f"UnigramTrainingReport(rounds={len(rounds)}{sizes}, "
            f"vocab_size_requested={self.vocab_size_requested}, "
            f"distinct_words={self.distinct_words}, seconds={self.seconds:.2f})"
        )


def checked_alpha(alpha: object) -> float:
    """``alpha`` of a sampled segmentation, checked."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise ValueError(f"alpha must be a non-negative number, got {alpha!r}")
    if not 0 <= alpha < float("inf"):  # NaN fails too
        raise ValueError(f"alpha must be a non-negative number, got {alpha!r}")
    return float(alpha)


def sampling_seed(seed: object) -> int:
    """The core's 64-bit seed for ``seed`` (a random one for None)."""
    if seed is None:
        return random.getrandbits(64)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, not {type(seed).__name__}")
    return seed % (1 << 64)


class SentencePieceTokenizer(BatchDecoding):
    """A unigram (or SentencePiece BPE) tokenizer: the methods every flavor
    shares. ``SentencePieceTokenizer(model)`` makes a model trained here
    (:class:`UnigramTokenizer`); ``flavor="sentencepiece"`` or
    ``"tokenizers"`` (with the file's pipeline as ``extra``) makes the class
    of that file (:mod:`bytepair.tokenizers.loaded`)."""

    __slots__ = (
        "_model",
        "_training",
        "_special_index",
        "_piece_index",
        "_default_selection",
        "_core",
    )
    # The core's encoder of the flavor (its encode, encode_batch, ... methods).
    _core: Any

    # Where the model comes from: "bytepair" (trained here), "sentencepiece"
    # (a .model file) or "tokenizers" (a tokenizer.json).
    flavor: ClassVar[str]
    _flavors: ClassVar[dict[str, type[SentencePieceTokenizer]]] = {}
    # What the core's encode takes after the text for the ordinary encoding.
    _ordinary_args: ClassVar[tuple[object, ...]] = ()
    # What a model of the class may be: its algorithms, its pieces' kinds,
    # whether it has a normalize of its own (a file normalizes as it says).
    _algorithms: ClassVar[tuple[str, ...]] = ("unigram",)
    _piece_kinds: ClassVar[tuple[str, ...]] = PIECE_KINDS
    _normalizes: ClassVar[bool] = False

    def __init_subclass__(cls, flavor: Optional[str] = None, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if flavor is not None:
            cls.flavor = flavor
            SentencePieceTokenizer._flavors[flavor] = cls

    def __new__(
        cls,
        model: SentencePieceModel,
        *,
        flavor: Optional[str] = None,
        training: Optional[UnigramTrainingReport] = None,
        extra: object = None,
    ) -> SentencePieceTokenizer:
        if cls is SentencePieceTokenizer:
            chosen = "bytepair" if flavor is None else flavor
            if chosen not in SentencePieceTokenizer._flavors:
                raise ValueError(f"unknown flavor {chosen!r}: use one of {', '.join(FLAVORS)}")
            cls = SentencePieceTokenizer._flavors[chosen]
        elif flavor is not None and flavor != cls.flavor:
            raise ValueError(f"a {cls.__name__} has the flavor {cls.flavor!r}, not {flavor!r}")
        return object.__new__(cls)

    def __init__(
        self,
        model: SentencePieceModel,
        *,
        flavor: Optional[str] = None,
        training: Optional[UnigramTrainingReport] = None,
        extra: object = None,
    ) -> None:
        _check_model(model, type(self))
        self._model = model
        self._training = training
        self._special_index = {
            p: n
            for n, p in enumerate(p for p, k in zip(model.pieces, model.kinds) if k == "control")
        }
        self._default_selection: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        for name, allowed_special in (("none", ()), ("all", "all")):
            allowed, disallowed = select_specials(
                self._special_index, allowed_special, "all", (), False
            )
            self._default_selection[name] = (frozenset(allowed), frozenset(disallowed))
        self._piece_index: Optional[dict[str, int]] = None

    # ---- Encoding ----

    def _chosen(
        self,
        texts: list[str],
        allowed_special: SpecialSet,
        disallowed_special: SpecialSet,
        batch: bool,
    ) -> tuple[object, ...]:
        """What the core's encode takes after the text(s) for these special-token arguments."""
        raise NotImplementedError(f"{type(self).__name__} does not encode")

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

    def _encode_with(
        self, call: str, text: str, allowed_special: SpecialSet, disallowed_special: SpecialSet
    ) -> Any:
        """The core's ``call`` (``encode`` or ``encode_to_buffer``) on ``text``,
        once the special tokens in it are allowed."""
        chosen = self._chosen([text], allowed_special, disallowed_special, False)
        return on_text(getattr(self._core, call), text, *chosen)

    def _encode_batch_with(
        self,
        call: str,
        texts: Iterable[str],
        allowed_special: SpecialSet,
        disallowed_special: SpecialSet,
    ) -> Any:
        """The core's ``call`` (``encode_batch`` or ``encode_batch_to_buffers``)
        on ``texts``, once the special tokens in them are allowed."""
        texts = checked_batch(texts)
        chosen = self._chosen(texts, allowed_special, disallowed_special, True)
        return on_batch(getattr(self._core, call), texts, *chosen)

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
        return on_text(self._core.encode, text, *self._ordinary_args)

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
    ) -> Any:
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
    ) -> Any:
        """Like :meth:`encode_batch`, as one flat ``numpy.uint32`` array plus
        ``int64`` offsets: text ``i`` is ``ids[offsets[i]:offsets[i + 1]]``."""
        import numpy as np

        ids, offsets = self._encode_batch_with(
            "encode_batch_to_buffers", texts, allowed_special, disallowed_special
        )
        return np.frombuffer(ids, dtype=np.uint32), np.frombuffer(offsets, dtype=np.int64)

    def _not_unigram(self, what: str) -> NotImplementedError:
        return NotImplementedError(
            f"{what} needs a unigram model trained by bytepair; this {self.flavor} model "
            "only encodes with its library's rule"
        )

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
        (512: SentencePiece refuses a larger n-best size too). Only a model
        trained by bytepair has them."""
        raise self._not_unigram("encode_nbest")

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
        ``seed`` makes it reproducible. A model trained by bytepair and a
        unigram ``.model`` file have it."""
        raise self._not_unigram("encode_sample")

    def encode_sample_batch(
        self, texts: Iterable[str], *, alpha: float = 0.1, seed: Optional[int] = None
    ) -> list[list[int]]:
        """:meth:`encode_sample` of many texts in parallel (special-token text
        as ordinary text); text ``i`` draws from its own stream of ``seed``."""
        raise self._not_unigram("encode_sample_batch")

    # ---- Decoding ----

    def _check(self, ids: Iterable[int]) -> list[int]:
        return checked_ids(ids, len(self._model.pieces))

    def _decode_in_core(self, decode: Callable[..., T], ids: Iterable[int], *options: object) -> T:
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

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """The text of ``ids``. With ``errors="replace"`` (the default), as
        the model's own library decodes them (sentencepiece's ``decode``,
        tokenizers' ``decode(ids, skip_special_tokens=False)``: each byte of
        invalid UTF-8 a U+FFFD); with other ``errors`` (``"strict"``, ...),
        :meth:`decode_bytes` decoded with them. For a bytepair model special
        tokens decode to their text, ``<unk>`` to ``⁇``."""
        raise NotImplementedError(f"{type(self).__name__} does not decode")

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes :meth:`decode` writes, with byte pieces (``<0xC3>``) as
        their byte, valid UTF-8 or not."""
        raise NotImplementedError(f"{type(self).__name__} does not decode")

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token where it stands inside a text: a byte piece
        its byte, any other piece what :meth:`decode_bytes` writes for it
        there (``▁`` as a space; at the start of a text that space may be
        dropped)."""
        i = checked_id(token, len(self._model.pieces))
        piece, kind = self._model.pieces[i], self._model.kinds[i]
        if kind == "byte":
            return bytes([int(piece[3:5], 16)])
        return self._piece_bytes(piece, kind)

    def _piece_bytes(self, piece: str, kind: str) -> bytes:
        """:meth:`decode_single_token_bytes` of a piece that is no byte piece."""
        return piece.replace(METASPACE, " ").encode("utf-8")

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
    def training(self) -> Optional[UnigramTrainingReport]:
        return self._training

    def save(
        self,
        path: Union[str, os.PathLike[str]],
        *,
        format: Literal["huggingface"] = "huggingface",
        overwrite: bool = False,
    ) -> None:
        """Writes a HuggingFace ``tokenizer.json``; an existing file is only
        replaced with ``overwrite=True``. ``tokenizers`` loads it with the same
        ids, except for a model read from a ``.model`` file: that is written
        as transformers' converter writes it, with a warning, since
        tokenizers' rules differ from sentencepiece's on some texts."""
        from ..formats.files import refuse_directory

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
        self._write_tokenizer_json(path)

    def _write_tokenizer_json(self, path: Path) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not save")

    @property
    def extra(self) -> object:
        """What the constructor's ``extra`` holds for this flavor: a ``.model``
        file's unk surface (what ``<unk>`` decodes to), a ``tokenizer.json``'s
        pipeline (:class:`~bytepair.formats.hf_unigram.HFPipeline`), None for
        a model trained here."""
        return None

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self._model, self.flavor, self.extra))

    def __repr__(self) -> str:
        return (
            f"<SentencePieceTokenizer {self._model.algorithm} flavor={self.flavor!r} "
            f"n_vocab={self.n_vocab} special={len(self._special_index)}>"
        )


class UnigramTokenizer(SentencePieceTokenizer, flavor="bytepair"):
    """A unigram model trained by bytepair: each metaspace word (or piece of
    a BPE-side pre-tokenizer) segmented on its own lattice in f64, special
    tokens as control pieces with :class:`Tokenizer`'s contract, n-best and
    sampled segmentations."""

    __slots__ = ()
    _core: _native.CoreUnigram
    _ordinary_args: ClassVar[tuple[object, ...]] = ([], [])
    _piece_kinds = ("normal", "unknown", "control", "byte")
    _normalizes = True

    def __init__(
        self,
        model: SentencePieceModel,
        *,
        flavor: Optional[str] = None,
        training: Optional[UnigramTrainingReport] = None,
        extra: object = None,
    ) -> None:
        super().__init__(model, training=training)
        pre = model.pretokenizer
        normal_lengths = [len(p) for p, k in zip(model.pieces, model.kinds) if k == "normal"]
        self._core = _native.CoreUnigram(
            list(model.pieces),
            [float(s) for s in model.scores],
            list(model.kinds),
            [(p, i) for i, (p, k) in enumerate(zip(model.pieces, model.kinds)) if k == "control"],
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
    ) -> tuple[list[int], list[int]]:
        """The core's (allowed, disallowed) indices, as :class:`Tokenizer` reads
        the two arguments (tiktoken's way: see ``_contract.select_specials``)."""
        allowed, disallowed = self._selected(allowed_special, disallowed_special, texts, batch)
        index = self._special_index
        return sorted(index[t] for t in allowed), sorted(index[t] for t in disallowed)

    def _chosen(
        self,
        texts: list[str],
        allowed_special: SpecialSet,
        disallowed_special: SpecialSet,
        batch: bool,
    ) -> tuple[object, ...]:
        return self._special_indices(allowed_special, disallowed_special, texts, batch)

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
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        if k > MAX_NBEST:
            raise ValueError(f"k must be at most {MAX_NBEST} (as in SentencePiece), got {k}")
        allowed, disallowed = self._special_indices(allowed_special, disallowed_special, [text])
        return on_text(self._core.nbest, text, allowed, disallowed, k)

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
        ``seed`` makes it reproducible."""
        allowed, disallowed = self._special_indices(allowed_special, disallowed_special, [text])
        return on_text(
            self._core.sample, text, allowed, disallowed, checked_alpha(alpha), sampling_seed(seed)
        )

    def encode_sample_batch(
        self, texts: Iterable[str], *, alpha: float = 0.1, seed: Optional[int] = None
    ) -> list[list[int]]:
        """:meth:`encode_sample` of many texts in parallel (special-token text
        as ordinary text); text ``i`` draws from its own stream of ``seed``."""
        texts = checked_batch(texts)
        alpha, seed = checked_alpha(alpha), sampling_seed(seed)
        return on_batch(self._core.sample_batch, texts, [], alpha, seed)

    # ---- Decoding ----

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        if errors == "replace":
            return self._decode_in_core(self._core.decode, ids, False).decode("utf-8")
        # Other errors may drop bytes before a '▁' that then starts a text: the reference.
        return self._decode_with_errors(self._check(ids), errors)

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return self._decode_in_core(self._core.decode, ids, True)

    def _piece_bytes(self, piece: str, kind: str) -> bytes:
        if kind == "unknown":
            return UNK_SURFACE.encode("utf-8")
        if kind == "control" or self._model.pretokenizer is not None:
            return piece.encode("utf-8")
        return piece.replace(METASPACE, " ").encode("utf-8")

    def _decode_with_errors(self, ids: list[int], errors: str) -> str:
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

    def _write_tokenizer_json(self, path: Path) -> None:
        from ..formats import hf_unigram
        from ..formats.hf_unigram_bytepair import for_tokenizers

        model, pipeline = for_tokenizers(self._model)
        hf_unigram.save(model, path, pipeline)


_BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")


def _check_model(model: object, owner: type[SentencePieceTokenizer]) -> None:
    """The fields of a :class:`SentencePieceModel` (perhaps built by hand)
    as the cores need them: a TypeError or ValueError naming the field (and
    index) instead of a conversion error that does not say where. ``owner``:
    the class the model is for (its flavor, algorithms, piece kinds, whether
    it normalizes)."""
    flavor = owner.flavor
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
    if model.algorithm not in owner._algorithms:
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
    _check_normalize(model, flavor, owner._normalizes)
    allowed_kinds = owner._piece_kinds
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
        if kind not in allowed_kinds:
            raise ValueError(
                f"{name}.kinds[{i}] is {kind!r}: a model trained by bytepair holds only "
                f"{', '.join(allowed_kinds)} pieces"
            )
        if kind == "byte" and not _BYTE_PIECE.fullmatch(piece):
            raise ValueError(f"{name}.pieces[{i}] {piece!r} is a byte piece, but not <0xXX>")


def _check_normalize(model: SentencePieceModel, flavor: str, normalizes: bool) -> None:
    from ..normalization import check_normalize_field

    name = "SentencePieceModel.normalize"
    check_normalize_field(model.normalize, name)
    if model.normalize and not normalizes:
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


def _rebuild(model: SentencePieceModel, flavor: str, extra: object) -> SentencePieceTokenizer:
    """A pickled SentencePieceTokenizer, made again."""
    return SentencePieceTokenizer(model, flavor=flavor, extra=extra)
