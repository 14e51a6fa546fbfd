"""Tokenizer files: reading and writing the formats other libraries use.

One module per format (``huggingface``: ``tokenizer.json``; ``gpt2``:
``vocab.json`` + ``merges.txt`` or ``encoder.json`` + ``vocab.bpe``;
``tiktoken``: ``.tiktoken`` rank files), each converting between its files
and a :class:`~bytepair.model.BPEModel`; ``byte_level`` holds the tables the
GPT-2 family shares, ``hf_regex`` translates Split regexes between
tokenizers' engine and ours, ``merge_rules`` relates merge lists to tiktoken's
ranking rule, ``files`` the helpers they share (UTF-8, atomic writes,
errors naming the file and place). This package adds :func:`load_model`,
which finds the format from what is on disk. Readers return model data
(:mod:`bytepair.model`), never a tokenizer.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import FormatError
from ..model import BPEModel
from .files import (
    GPT2_MERGES_FILE,
    GPT2_ORIGINAL_MERGES_FILE,
    GPT2_ORIGINAL_VOCAB_FILE,
    GPT2_PAIRS,
    GPT2_VOCAB_FILE,
    HF_FILE,
    TIKTOKEN_SUFFIX,
    PathLike,
)


def load_model(path: PathLike) -> BPEModel:
    """Read the tokenizer at ``path``.

    A ``.tiktoken`` file is read by :mod:`.tiktoken` (tiktoken's rule); any
    other file as a HuggingFace ``tokenizer.json``. A directory is read from
    its ``tokenizer.json`` when it has one, else from its GPT-2 pair
    ``vocab.json`` + ``merges.txt`` (or ``encoder.json`` + ``vocab.bpe``).
    """
    from . import gpt2, huggingface

    path = Path(path)
    if path.is_file():
        if path.suffix == TIKTOKEN_SUFFIX:
            from .tiktoken import load_model as load_tiktoken_model

            return load_tiktoken_model(path)
        return huggingface.load(path)
    if path.is_dir():
        if (path / HF_FILE).is_file():
            return huggingface.load(path / HF_FILE)
        if gpt2.file_pair(path) is not None:
            return gpt2.load(path)
        for vocab_name, merges_name in GPT2_PAIRS:
            has_vocab = (path / vocab_name).is_file()
            has_merges = (path / merges_name).is_file()
            if has_vocab or has_merges:
                found, absent = (
                    (vocab_name, merges_name) if has_vocab else (merges_name, vocab_name)
                )
                raise FormatError(
                    path, f"found {found} but not {absent}; the GPT-2 format needs both files"
                )
        raise FormatError(
            path,
            f"no tokenizer in this directory: looked for {HF_FILE}, then for "
            f"{GPT2_VOCAB_FILE} with {GPT2_MERGES_FILE}, then for "
            f"{GPT2_ORIGINAL_VOCAB_FILE} with {GPT2_ORIGINAL_MERGES_FILE}",
        )
    if path.exists():
        raise FormatError(
            path,
            "not a regular file or a directory (a named pipe or a device): a tokenizer "
            "is read from a file",
        )
    raise FormatError(
        path,
        f"no such file or directory: expected a {HF_FILE}, {TIKTOKEN_SUFFIX} or SentencePiece "
        ".model file, or a "
        f"directory holding {HF_FILE}, {GPT2_VOCAB_FILE} with {GPT2_MERGES_FILE}, or "
        f"{GPT2_ORIGINAL_VOCAB_FILE} with {GPT2_ORIGINAL_MERGES_FILE}",
    )


__all__ = ["load_model"]
