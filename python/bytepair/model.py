"""The plain data of a BPE tokenizer, as every format reads and writes it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Optional

from .pretokenizers import Pretokenizer


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
    """

    tokens: tuple[Optional[bytes], ...]
    merges: Optional[tuple[tuple[int, int], ...]]
    special_tokens: Mapping[str, int]
    pretokenizer: Pretokenizer
    special_token_strip: Mapping[str, tuple[bool, bool]] = field(default_factory=dict)
