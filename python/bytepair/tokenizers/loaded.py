"""The tokenizers of files other libraries wrote, each giving that library's
ids: :class:`SentencePieceFileTokenizer` for a SentencePiece ``.model`` file
(``SentencePieceProcessor.encode``), :class:`HFUnigramTokenizer` for a
HuggingFace ``tokenizer.json`` with a Unigram model (``tokenizers``'
``encode(text, add_special_tokens=False)``). Both are
:class:`~bytepair.SentencePieceTokenizer` s.
"""

from __future__ import annotations

import dataclasses

from ..model import SentencePieceModel, SentencePieceNormalizer
from .unigram import SentencePieceTokenizer, not_written_by_bytepair, split_refusal


class SentencePieceFileTokenizer(SentencePieceTokenizer):
    """A SentencePiece ``.model`` file's tokenizer."""

    __slots__ = ()

    def __init__(self, model: SentencePieceModel, *, flavor=None, training=None, extra=None):
        super().__init__(model, flavor="sentencepiece", extra=extra)


class HFUnigramTokenizer(SentencePieceTokenizer):
    """A Unigram ``tokenizer.json``'s tokenizer."""

    __slots__ = ()

    def __init__(self, model: SentencePieceModel, *, flavor=None, training=None, extra=None):
        super().__init__(model, flavor="tokenizers", extra=extra)


def from_tokenizers_file(model: SentencePieceModel, pipeline) -> SentencePieceTokenizer:
    """The tokenizer for a Unigram ``tokenizer.json``. A file this library
    wrote for a model it trained (:func:`~bytepair.tokenizers.unigram.for_tokenizers`'s shape) gives the
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
