"""The plain data of a BPE tokenizer, as every format reads and writes it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .pretokenizers import Pretokenizer


@dataclass(frozen=True)
class BPEModel:
    """Everything that defines a byte-level BPE tokenizer.

    tokens: ``tokens[i]`` is the bytes of id ``i`` (ids are dense, 0..n-1).
        A special token's entry is its UTF-8 text.
    merges: pairs of token ids in rank order (rank 0 merges first); the result
        of a merge is the token whose bytes are the concatenation.
    special_tokens: special text -> id (ids point into ``tokens``).
    pretokenizer: how text is cut before merging.
    """

    tokens: tuple[bytes, ...]
    merges: tuple[tuple[int, int], ...]
    special_tokens: Mapping[str, int]
    pretokenizer: Pretokenizer
