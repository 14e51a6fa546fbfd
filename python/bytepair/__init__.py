"""bytepair: exact, fast subword tokenizers: byte-level BPE and the unigram LM.

    >>> import bytepair
    >>> tok = bytepair.train(["some text", "more text"], vocab_size=300)
    >>> tok.decode(tok.encode("some text"))
    'some text'

The pure-Python reference (``bytepair.reference``) is the specification; the
Rust core gives the same answers, faster.
"""

import importlib

from .encodings import get_encoding, list_encoding_names, load_tiktoken
from .errors import DisallowedSpecialError, FormatError
from .formats.tiktoken import save_tiktoken, to_tiktoken
from .model import BPEModel, SentencePieceModel, SentencePieceNormalizer
from .pretokenizers import Pretokenizer
from .sentencepiece_tokenizer import SentencePieceTokenizer, UnigramTrainingReport
from .sources import read_documents
from .tokenizer import Tokenizer, load
from .trace import MergeStep, trace
from .training import TrainingReport, resume_training, train

__all__ = [
    "BPEModel",
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


# Submodules the README names as ``bytepair.<module>.<function>``, imported on
# first use (some need numpy or Ray, which a plain ``import bytepair`` does not load).
_SUBMODULES = (
    "analysis",
    "char_bpe",
    "counts",
    "dataset",
    "demo",
    "formats",
    "gage",
    "on_ray",
    "reference",
    "viz",
)


def __getattr__(name: str):
    # The dataset module needs numpy; import it (and numpy) on first use only.
    if name in ("TokenDataset", "encode_dataset"):
        from . import dataset

        return getattr(dataset, name)
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'bytepair' has no attribute {name!r}")
