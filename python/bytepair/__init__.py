"""bytepair: exact, fast subword tokenizers: byte-level BPE and the unigram LM.

    >>> import bytepair
    >>> tok = bytepair.train(["some text", "more text"], vocab_size=300)
    >>> tok.decode(tok.encode("some text"))
    'some text'

The names below are the public API. The pure-Python reference
(``bytepair.reference``) is the specification; the Rust core gives the same
answers, faster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .api import get_encoding, load, load_tiktoken, resume_training, train
from .corpus.sources import read_documents
from .errors import DisallowedSpecialError, FormatError
from .formats.tiktoken import save_tiktoken, to_tiktoken
from .model import BPEModel, SentencePieceModel, SentencePieceNormalizer
from .pretokenizers import Pretokenizer
from .registry import list_encoding_names
from .tokenizers.bpe import Tokenizer, TrainingReport
from .tokenizers.char_bpe import CharBPE
from .tokenizers.unigram import SentencePieceTokenizer, UnigramTrainingReport
from .tools.trace import MergeStep, trace

if TYPE_CHECKING:
    from .corpus.dataset import TokenDataset, encode_dataset

__all__ = [
    "BPEModel",
    "CharBPE",
    "DisallowedSpecialError",
    "FormatError",
    "MergeStep",
    "Pretokenizer",
    "SentencePieceModel",
    "SentencePieceNormalizer",
    "SentencePieceTokenizer",
    "TokenDataset",
    "Tokenizer",
    "TrainingReport",
    "UnigramTrainingReport",
    "encode_dataset",
    "get_encoding",
    "list_encoding_names",
    "load",
    "load_tiktoken",
    "read_documents",
    "resume_training",
    "save_tiktoken",
    "to_tiktoken",
    "trace",
    "train",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # The dataset module needs numpy, which a plain ``import bytepair`` does not load.
    if name in ("TokenDataset", "encode_dataset"):
        from .corpus import dataset

        return getattr(dataset, name)
    raise AttributeError(f"module 'bytepair' has no attribute {name!r}")
