"""bytepair: exact, fast byte-level BPE tokenizers.

    >>> import bytepair
    >>> tok = bytepair.train(["some text", "more text"], vocab_size=300)
    >>> tok.decode(tok.encode("some text"))
    'some text'

The pure-Python reference (``bytepair.reference``) is the specification; the
Rust core gives the same answers, faster.
"""

from .errors import DisallowedSpecialError, FormatError
from .model import BPEModel
from .pretokenizers import Pretokenizer
from .tokenizer import Tokenizer, load
from .training import TrainingReport, train

__all__ = [
    "BPEModel",
    "DisallowedSpecialError",
    "FormatError",
    "Pretokenizer",
    "Tokenizer",
    "TrainingReport",
    "load",
    "train",
]
__version__ = "0.1.0"
