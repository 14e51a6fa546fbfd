"""The Tokenizer: encode and decode with a trained or loaded BPE model.

Names follow tiktoken where they apply (encode_ordinary, decode_bytes,
n_vocab, special_tokens_set). A Tokenizer is immutable; one object can be
shared by many threads.
"""

from __future__ import annotations

import operator
import os
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional, SupportsIndex, Union, cast

from .. import _native
from ..model import BPEModel
from ..pretokenizers import Pretokenizer
from ..registry import ENDOFTEXT
from ._contract import (
    BatchDecoding,
    SpecialSet,
    checked_batch,
    checked_id,
    checked_ids,
    default_choice,
    on_batch,
    on_text,
    reject_surrogates,
    select_specials,
    special_texts,
)


@dataclass(frozen=True)
class TrainingReport:
    """How a training run went."""

    merge_counts: tuple[int, ...]  # the count of each merge when it won, in merge order
    stop_reason: str  # "vocab_size", "no_pairs" or "min_frequency"
    vocab_size_requested: int
    distinct_pretokens: int
    seconds: float

    def __repr__(self) -> str:
        # A summary: the counts of every merge are in merge_counts, not on the screen.
        counts = self.merge_counts
        shown = f"{counts[0]} .. {counts[-1]}" if counts else "none"
        return (
            f"TrainingReport(merges={len(counts)} (counts {shown}), "
            f"stop_reason={self.stop_reason!r}, vocab_size_requested={self.vocab_size_requested}, "
            f"distinct_pretokens={self.distinct_pretokens}, seconds={self.seconds:.2f})"
        )


_ID_LIMIT = 1 << 32  # the core's ids are u32


def _as_index(value: object) -> Optional[int]:
    """``value`` as the core reads an id (anything ``operator.index`` takes,
    numpy integers too, but not a bool); None when it is none."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(cast(SupportsIndex, value))
    except TypeError:
        return None


def _check_special_tokens(model: BPEModel) -> None:
    """The types and ranges of the special tokens, checked first so that a model
    built by hand gets an error naming the token (the core's argument reading
    names the index of a bad token or merge; the core then checks what the
    values mean: merges that make no token, ids out of place)."""
    field = "BPEModel.special_tokens"
    for text, token_id in model.special_tokens.items():
        if not isinstance(text, str):
            raise TypeError(f"{field}: special token {text!r} is {type(text).__name__}, not str")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise reject_surrogates(e, f"{field}: special token {text!r}") from None
        index = _as_index(token_id)
        if index is None:
            raise TypeError(f"{field}: special token {text!r} has the id {token_id!r}, not an int")
        if not 0 <= index < _ID_LIMIT:
            raise ValueError(
                f"{field}: special token {text!r} has the id {token_id}, not a token id"
            )


def _dropout(p: object, seed: object) -> Optional[tuple[float, int]]:
    """The core's (probability, seed) for BPE-dropout; None for the plain encoding."""
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"dropout must be a number between 0 and 1, not {type(p).__name__}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout must be between 0 and 1, got {p!r}")
    if p == 0:
        return None
    if seed is None:
        seed = random.getrandbits(64)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, not {type(seed).__name__}")
    return float(p), seed % (1 << 64)


class Tokenizer(BatchDecoding):
    """A byte-level BPE tokenizer (vocabulary, merges, special tokens, pre-tokenizer)."""

    __slots__ = ("_model", "_core", "_special_index", "_added", "_training", "_default_specials")

    def __init__(self, model: BPEModel, *, training: Optional[TrainingReport] = None) -> None:
        pretokenizer = model.pretokenizer
        _check_special_tokens(model)
        self._core = _native.CoreBPE(
            model.tokens,
            model.merges,
            list(model.special_tokens.items()),
            {
                "pretokenizer": pretokenizer.kind,
                "pattern": pretokenizer.pattern if pretokenizer.kind == "regex" else None,
                "special_strip": [
                    model.special_token_strip.get(t, (False, False)) for t in model.special_tokens
                ]
                if model.special_token_strip
                else None,
                "normalize": list(model.normalize),
            },
        )
        self._model = model
        added = set(model.added_tokens)
        # The core's index of each special token (special_tokens order); the
        # non-special added tokens are special tokens to the core, always allowed.
        self._special_index = {
            text: i for i, text in enumerate(model.special_tokens) if text not in added
        }
        self._added = sorted(i for i, text in enumerate(model.special_tokens) if text in added)
        self._training = training
        # The core's indices for the two argument pairs most calls pass (none
        # allowed or all, the rest disallowed): they depend on no text, and
        # working them out per call cost a short text's encoding several times over.
        self._default_specials = {
            name: self._chosen_specials(allowed, "all", [], batch=False)
            for name, allowed in (("none", ()), ("all", "all"))
        }

    # ---- Encoding ----

    def clear_cache(self) -> None:
        """Forgets the pieces (words) whose ids each thread remembers between calls.

        Encoding keeps, per thread, the ids of the pieces it met (up to about
        6 MB a thread), so that later texts skip merging words already seen;
        ids never depend on it. Each thread frees that memory at its next
        call. Useful to time text new to the tokenizer, as the benchmark does.
        """
        self._core.clear_cache()

    def _special_indices(
        self,
        allowed_special: SpecialSet,
        disallowed_special: SpecialSet,
        texts: Sequence[object],
        batch: bool,
    ) -> tuple[list[int], list[int]]:
        """The core's (allowed, disallowed) special-token indices (see
        :func:`select_specials`; the core checks the special tokens). The
        model's non-special added tokens are always allowed: a name of one in
        ``disallowed_special`` is left out (it is cut out, not refused)."""
        default = default_choice(allowed_special, disallowed_special)
        if default is not None:
            return self._default_specials[default]
        return self._chosen_specials(allowed_special, disallowed_special, texts, batch)

    def _chosen_specials(
        self,
        allowed_special: SpecialSet,
        disallowed_special: SpecialSet,
        texts: Sequence[object],
        batch: bool,
    ) -> tuple[list[int], list[int]]:
        """:meth:`_special_indices` worked out from the arguments."""
        index = self._special_index
        if self._added and disallowed_special != "all":
            added = self._model.added_tokens
            disallowed_special = [
                t for t in special_texts(disallowed_special, "disallowed_special") if t not in added
            ]
        allowed, disallowed = select_specials(
            index, allowed_special, disallowed_special, texts, batch
        )
        return (
            sorted([index[t] for t in allowed] + self._added),
            sorted(index[t] for t in disallowed),
        )

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        dropout: float = 0.0,
        seed: Optional[int] = None,
    ) -> list[int]:
        """Encodes text. A special token's text raises an error unless it is in
        ``allowed_special`` (then it becomes its id) or removed from
        ``disallowed_special`` (then it is encoded as ordinary text).

        ``dropout=p`` is BPE-dropout (Provilkov et al., 2020): each merge is
        skipped with probability ``p``, so a word may come out in smaller
        pieces (subword regularization for training a model). ``seed`` makes
        it reproducible; ``p=0`` is exactly the ordinary encoding.

        As in tiktoken, a name in ``allowed_special`` that is no special token
        is ignored, and a string in ``disallowed_special`` that is none is
        still refused wherever it occurs in the text.

        The model's non-special added tokens (:attr:`added_tokens`, from a
        ``tokenizer.json``) are not special: they are always cut out of the
        text and become their ids, whatever the two arguments say (naming one
        in ``disallowed_special`` does not refuse it), as HuggingFace
        ``tokenizers`` does."""
        allowed, disallowed = self._special_indices(
            allowed_special, disallowed_special, [text], batch=False
        )
        return on_text(self._core.encode, text, allowed, disallowed, _dropout(dropout, seed))

    def encode_ordinary(
        self, text: str, *, dropout: float = 0.0, seed: Optional[int] = None
    ) -> list[int]:
        """Encodes text, treating special-token text as ordinary text (``dropout``: see :meth:`encode`).

        The non-special added tokens (:attr:`added_tokens`) are still cut out:
        they are ordinary tokens (HuggingFace ``tokenizers`` with
        ``encode_special_tokens=True`` gives the same ids)."""
        if dropout or self._added:
            return self.encode(text, disallowed_special=(), dropout=dropout, seed=seed)
        return on_text(self._core.encode_ordinary, text)

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        dropout: float = 0.0,
        seed: Optional[int] = None,
    ) -> list[list[int]]:
        """Encodes many texts in parallel on all cores, without the GIL.
        With ``dropout``, text ``i`` draws from its own stream of ``seed``: the
        result does not depend on the number of threads."""
        texts = checked_batch(texts)
        allowed, disallowed = self._special_indices(
            allowed_special, disallowed_special, texts, batch=True
        )
        return on_batch(
            self._core.encode_batch, texts, allowed, disallowed, _dropout(dropout, seed)
        )

    def encode_ordinary_batch(
        self, texts: Iterable[str], *, dropout: float = 0.0, seed: Optional[int] = None
    ) -> list[list[int]]:
        """Encodes many texts in parallel, special-token text as ordinary text."""
        return self.encode_batch(texts, disallowed_special=(), dropout=dropout, seed=seed)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        dropout: float = 0.0,
        seed: Optional[int] = None,
    ):
        """Like :meth:`encode`, as a ``numpy.uint32`` array (no Python int per token)."""
        import numpy as np

        allowed, disallowed = self._special_indices(
            allowed_special, disallowed_special, [text], batch=False
        )
        buffer = on_text(
            self._core.encode_to_buffer, text, allowed, disallowed, _dropout(dropout, seed)
        )
        return np.frombuffer(buffer, dtype=np.uint32)

    def encode_batch_to_numpy(
        self,
        texts: Iterable[str],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        dropout: float = 0.0,
        seed: Optional[int] = None,
    ):
        """Encodes many texts in parallel into one flat ``numpy.uint32`` array
        plus ``int64`` offsets: text ``i`` is ``ids[offsets[i]:offsets[i + 1]]``."""
        import numpy as np

        texts = checked_batch(texts)
        allowed, disallowed = self._special_indices(
            allowed_special, disallowed_special, texts, batch=True
        )
        chosen = _dropout(dropout, seed)
        ids, offsets = on_batch(
            self._core.encode_batch_to_buffers, texts, allowed, disallowed, chosen
        )
        return np.frombuffer(ids, dtype=np.uint32), np.frombuffer(offsets, dtype=np.int64)

    # ---- Decoding ----

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of the tokens, concatenated. ``ids``: any iterable of ints."""
        if not isinstance(ids, (list, tuple)) and not hasattr(ids, "__array__"):
            # The core reads only sequences; a generator or dict view is read once, here.
            ids = checked_ids(ids, self.n_vocab)
        try:
            # The core reads any sequence of ints (numpy arrays too).
            return self._core.decode_bytes(cast(list[int], ids))
        except (OverflowError, TypeError):
            # Names the first bad id; valid ids the core could not read go in as a list.
            return self._core.decode_bytes(checked_ids(ids, self.n_vocab))

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """The text of the tokens; invalid UTF-8 is replaced unless ``errors="strict"``."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token."""
        try:
            return self._core.token_bytes(token)
        except (OverflowError, TypeError, ValueError):
            # The core's message names a position, as for a list of ids.
            return self._core.token_bytes(checked_id(token, self.n_vocab))

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """The bytes of each token, in order (``[b"hello", b" world"]``): how
        a text was cut. A bad id is named with its position."""
        ids = checked_ids(tokens, self.n_vocab)
        entries = self._model.tokens
        parts = [entries[i] for i in ids]
        if not all(parts):  # None or b"": an unused id, as the core reads the table
            self._core.decode_bytes(ids)  # raises, naming the unused id and its position
        return cast(list[bytes], parts)

    def decode_with_offsets(self, tokens: Iterable[int]) -> tuple[str, list[int]]:
        """The text of the tokens and, for each token, the index in that text
        of the character its first byte belongs to (tiktoken's rule: a token
        that starts inside a character gets that character's index). The
        bytes must be valid UTF-8 (else ``UnicodeDecodeError``)."""
        parts = self.decode_tokens_bytes(tokens)
        offsets = []
        characters = 0  # characters started so far: bytes that are no UTF-8 continuation
        for part in parts:
            starts_inside = 0x80 <= part[0] < 0xC0
            offsets.append(max(0, characters - starts_inside))
            characters += sum(not 0x80 <= byte < 0xC0 for byte in part)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    # ---- Single tokens ----

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of the token that is exactly ``text_or_bytes``: an ordinary
        token's bytes, or a special (or added) token's text. ``KeyError`` when
        no token is."""
        if isinstance(text_or_bytes, str):
            data = text_or_bytes.encode("utf-8", errors="surrogatepass")
        elif isinstance(text_or_bytes, (bytes, bytearray)):
            data = bytes(text_or_bytes)
        else:
            raise TypeError(f"expected str or bytes, not {type(text_or_bytes).__name__}")
        found = self._core.token_id(data)
        if found is not None:
            return found
        try:
            return self._model.special_tokens[data.decode("utf-8")]
        except (UnicodeDecodeError, KeyError):
            raise KeyError(text_or_bytes) from None

    @property
    def eot_token(self) -> int:
        """The id of the special token ``<|endoftext|>`` (``KeyError`` without one)."""
        try:
            return self.special_tokens[ENDOFTEXT]
        except KeyError:
            raise KeyError(
                f"{ENDOFTEXT} is not a special token of this tokenizer "
                f"(its special tokens: {sorted(self.special_tokens) or 'none'})"
            ) from None

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is the id of a special token (not of an ordinary
        or a non-special added token)."""
        value = _as_index(token)
        if value is None:
            raise TypeError(f"a token id must be an int, not {type(token).__name__}")
        return value in self.special_tokens.values()

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary token (no special or added token), sorted."""
        specials = set(self._model.special_tokens.values())
        return sorted(t for i, t in enumerate(self._model.tokens) if t and i not in specials)

    @property
    def max_token_value(self) -> int:
        """The highest id a token has (special tokens included; an unused id,
        None or empty, is no token's)."""
        tokens = self._model.tokens
        return next(i for i in range(len(tokens) - 1, -1, -1) if tokens[i])

    # ---- Miscellaneous ----

    @property
    def n_vocab(self) -> int:
        return len(self._model.tokens)

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' texts (tiktoken's meaning: what ``allowed_special``
        and ``disallowed_special`` choose among); not the :attr:`added_tokens`."""
        return set(self._special_index)

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special text -> id, the non-special :attr:`added_tokens` left out
        (``model.special_tokens`` holds both)."""
        special = self._special_index
        return {t: i for t, i in self._model.special_tokens.items() if t in special}

    @property
    def added_tokens(self) -> dict[str, int]:
        """Text -> id of the non-special added tokens (HuggingFace's ``"special":
        false`` added tokens): ordinary tokens that every encode cuts out of the
        text, never refused; empty for tokenizers that bytepair trained."""
        return {t: self._model.special_tokens[t] for t in self._model.added_tokens}

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """The merges in rank order, as pairs of bytes. For a tiktoken
        vocabulary (ranked by token id) they are derived: for each token, the
        last merge that makes it from its own bytes."""
        tokens = self._model.tokens
        return cast(
            list[tuple[bytes, bytes]],
            [(tokens[left], tokens[right]) for left, right in self.merge_ids],
        )

    @property
    def merge_ids(self) -> list[tuple[int, int]]:
        """The merges in rank order, as pairs of ids."""
        if self._model.merges is not None:
            return list(self._model.merges)
        return self._core.merges()[0]

    @property
    def vocab(self) -> dict[int, bytes]:
        return {i: t for i, t in enumerate(self._model.tokens) if t is not None}

    @property
    def model(self) -> BPEModel:
        return self._model

    @property
    def pretokenizer(self) -> Pretokenizer:
        return self._model.pretokenizer

    @property
    def normalize(self) -> tuple[str, ...]:
        """The normalization of the text between special tokens: ``()``, or
        ``"nfc"``/``"nfkc"`` and/or ``"lowercase"``."""
        return self._model.normalize

    @property
    def training(self) -> Optional[TrainingReport]:
        """How training went (merge counts, why it stopped); None for a loaded tokenizer."""
        return self._training

    def pretokenize(self, text: str) -> list[str]:
        """The pieces the pre-tokenizer cuts ``text`` into, once normalized
        (special tokens not cut out)."""
        return on_text(self._core.pretokenize, text)

    def save(
        self,
        path: Union[str, os.PathLike],
        *,
        format: Literal["huggingface", "gpt2"] = "huggingface",
        overwrite: bool = False,
    ) -> None:
        """Writes a HuggingFace ``tokenizer.json`` (a file path), or GPT-2's
        ``vocab.json`` + ``merges.txt`` (a directory path). An existing file is
        only replaced with ``overwrite=True``."""
        from ..formats import gpt2, huggingface
        from ..formats.files import refuse_directory

        path = Path(path)
        if format == "huggingface":
            targets = [path]
        elif format == "gpt2":
            targets = [path / "vocab.json", path / "merges.txt"]
        else:
            raise ValueError(f"unknown format {format!r}: use 'huggingface' or 'gpt2'")
        if format == "huggingface":
            refuse_directory(path)
        existing = [str(t) for t in targets if t.exists()]
        if existing and not overwrite:
            raise FileExistsError(
                f"{', '.join(existing)} already exists; pass overwrite=True to replace it"
            )
        if format == "huggingface":
            huggingface.save(self._model, path)
        else:
            gpt2.save(self._model, path)  # checks the model before it makes the directory

    def __reduce__(self):
        # The training report is plain data (a frozen dataclass): copies and pickles keep it.
        return (_rebuild, (self._model, self._training))

    def __repr__(self) -> str:
        return (
            f"<Tokenizer n_vocab={self.n_vocab} "
            f"merges={'by token id' if self._model.merges is None else len(self._model.merges)} "
            f"special={len(self._special_index)}"
            + (f" added={len(self._added)}" if self._added else "")
            + f" pretokenizer={self.pretokenizer.name!r}>"
        )


def _rebuild(model: BPEModel, training: Optional[TrainingReport]) -> Tokenizer:
    """A pickled Tokenizer, made again (a module-level function, so pickles can name it)."""
    return Tokenizer(model, training=training)
