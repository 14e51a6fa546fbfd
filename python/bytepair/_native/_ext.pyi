"""Stub of the private Rust extension. Use the public API in bytepair instead.

Checked against the compiled module by ``python -m mypy.stubtest bytepair._native._ext``
(tests/test_native_stub.py). Settings cross as plain dicts with every key
given; the ``...Settings`` TypedDicts below name their keys for type checkers
only (``@type_check_only``: they do not exist at runtime). Results come back
as frozen classes.
"""

from collections.abc import Sequence
from os import PathLike
from typing import Callable, Optional, TypedDict, Union, final, type_check_only

__all__ = [
    "CoreBPE",
    "CoreSymbolBPE",
    "PretokenCounter",
    "TrainedBPE",
    "train_bpe",
    "resume_bpe",
    "checkpoint_info",
    "train_bpe_symbols",
    "CoreUnigram",
    "TrainedUnigram",
    "UnigramRound",
    "train_unigram",
    "CoreSentencePiece",
    "CoreHfUnigram",
    "CoreHfDecoder",
    "parse_rank_file",
    "HfBpeDocument",
    "split_hf_bpe",
    "format_ids",
    "parse_ids",
    "gage_compress",
    "gage_decompress",
    "GPT2_PATTERN",
    "WHITESPACE_PATTERN",
    "R50K_PATTERN",
    "CL100K_PATTERN",
    "O200K_PATTERN",
]

GPT2_PATTERN: str
WHITESPACE_PATTERN: str
R50K_PATTERN: str
CL100K_PATTERN: str
O200K_PATTERN: str

_Path = Union[str, PathLike[str]]
# Token ids as the decoders read them: a sequence of ints, or a 1-D buffer of
# native-endian uint32 (a numpy array) read at once.
_Ids = Sequence[int]

# ---- Byte-level and symbol BPE ----

@type_check_only
class EncoderSettings(TypedDict):
    pretokenizer: str  # a builtin's name, or "regex" for pattern
    pattern: Optional[str]
    special_strip: Optional[list[tuple[bool, bool]]]  # per special token: (left, right)
    normalize: list[str]

@final
class CoreBPE:
    def __new__(
        cls,
        tokens: Sequence[Optional[bytes]],
        merges: Optional[Sequence[tuple[int, int]]],
        special_tokens: list[tuple[str, int]],
        settings: EncoderSettings,
    ) -> CoreBPE: ...
    def clear_cache(self) -> None: ...
    def encode_ordinary(self, text: str) -> list[int]: ...
    def encode(
        self,
        text: str,
        allowed: list[int],
        disallowed: list[int],
        dropout: Optional[tuple[float, int]] = None,
    ) -> list[int]: ...
    def encode_to_buffer(
        self,
        text: str,
        allowed: list[int],
        disallowed: list[int],
        dropout: Optional[tuple[float, int]] = None,
    ) -> bytearray: ...
    def encode_batch(
        self,
        texts: list[str],
        allowed: list[int],
        disallowed: list[int],
        dropout: Optional[tuple[float, int]] = None,
    ) -> list[list[int]]: ...
    def encode_batch_to_buffers(
        self,
        texts: list[str],
        allowed: list[int],
        disallowed: list[int],
        dropout: Optional[tuple[float, int]] = None,
    ) -> tuple[bytearray, bytearray]: ...
    def pretokenize(self, text: str) -> list[str]: ...
    def decode_bytes(self, ids: _Ids) -> bytes: ...
    def token_bytes(self, id: int) -> bytes: ...
    def token_id(self, bytes: bytes) -> Optional[int]: ...
    def n_vocab(self) -> int: ...
    def merges(self) -> tuple[list[tuple[int, int]], list[int]]: ...

@final
class CoreSymbolBPE:
    def __new__(cls, rules: list[tuple[int, int, int]]) -> CoreSymbolBPE: ...
    def encode_words(self, words: list[list[int]]) -> list[list[int]]: ...

# ---- Counting and BPE training ----

@final
class PretokenCounter:
    def __new__(
        cls,
        special_tokens: list[str],
        pretokenizer: str,
        pattern: Optional[str] = None,
        normalize: list[str] = ...,
    ) -> PretokenCounter: ...
    def add_texts(self, texts: list[str]) -> None: ...
    def __len__(self) -> int: ...
    def add_counts(self, counts: list[tuple[bytes, int]]) -> None: ...
    def clear(self) -> None: ...
    def partition_items(self, partition: int, partitions: int) -> list[tuple[bytes, int]]: ...
    def items(self) -> list[tuple[bytes, int]]: ...

@type_check_only
class CheckpointSettings(TypedDict):
    path: _Path
    meta: str  # JSON text, given back by checkpoint_info
    every: float  # seconds between two writes

@type_check_only
class ResumeCheckpointSettings(TypedDict):
    meta: str
    every: float

@type_check_only
class BpeSettings(TypedDict):
    vocab_size: int
    special_tokens: list[str]
    min_frequency: int
    max_token_length: Optional[int]
    checkpoint: Optional[CheckpointSettings]

@type_check_only
class SymbolBpeSettings(TypedDict):
    vocab_size: int
    min_frequency: int
    max_merges: Optional[int]
    largest_ties: bool

@final
class TrainedBPE:
    @property
    def tokens(self) -> list[bytes]: ...
    @property
    def merges(self) -> list[tuple[int, int]]: ...
    @property
    def merge_counts(self) -> list[int]: ...
    @property
    def stop_reason(self) -> str: ...

def train_bpe(
    counter: PretokenCounter,
    settings: BpeSettings,
    progress: Optional[Callable[[int, int], object]] = None,
) -> TrainedBPE: ...
def resume_bpe(
    path: _Path,
    vocab_size: int,
    checkpoint: Optional[ResumeCheckpointSettings] = None,
    progress: Optional[Callable[[int, int], object]] = None,
) -> TrainedBPE: ...
def checkpoint_info(path: _Path, verify: bool = False) -> tuple[str, int]: ...
def train_bpe_symbols(
    words: list[tuple[list[int], int]],
    base: list[bytes],
    settings: SymbolBpeSettings,
    progress: Optional[Callable[[int, int], object]] = None,
) -> TrainedBPE: ...

# ---- Unigram ----

@type_check_only
class UnigramSettings(TypedDict):
    unk_id: Optional[int]
    byte_fallback: bool
    max_piece_length: int
    pretokenizer: str  # "metaspace", a builtin's name, or "regex" for pattern
    pattern: Optional[str]
    normalize: list[str]

@final
class CoreUnigram:
    def __new__(
        cls,
        pieces: list[str],
        scores: list[float],
        kinds: list[str],
        special_tokens: list[tuple[str, int]],
        settings: UnigramSettings,
    ) -> CoreUnigram: ...
    def decode(self, ids: _Ids, raw_bytes: bool) -> bytes: ...
    def encode(self, text: str, allowed: list[int], disallowed: list[int]) -> list[int]: ...
    def encode_to_buffer(
        self, text: str, allowed: list[int], disallowed: list[int]
    ) -> bytearray: ...
    def encode_batch(
        self, texts: list[str], allowed: list[int], disallowed: list[int]
    ) -> list[list[int]]: ...
    def encode_batch_to_buffers(
        self, texts: list[str], allowed: list[int], disallowed: list[int]
    ) -> tuple[bytearray, bytearray]: ...
    def nbest(
        self, text: str, allowed: list[int], disallowed: list[int], k: int
    ) -> list[tuple[list[int], float]]: ...
    def sample(
        self, text: str, allowed: list[int], disallowed: list[int], alpha: float, seed: int
    ) -> list[int]: ...
    def sample_batch(
        self, texts: list[str], allowed: list[int], alpha: float, seed: int
    ) -> list[list[int]]: ...

@type_check_only
class UnigramTrainSettings(TypedDict):
    vocab_size: int
    special_tokens: list[str]
    character_coverage: float
    max_piece_length: int
    seed_size: int
    shrinking_factor: float
    num_sub_iterations: int
    byte_fallback: bool

@final
class UnigramRound:
    @property
    def size_at_start(self) -> int: ...
    @property
    def objectives(self) -> list[float]: ...
    @property
    def size_after_em(self) -> int: ...
    @property
    def size_after_prune(self) -> Optional[int]: ...

@final
class TrainedUnigram:
    @property
    def pieces(self) -> list[str]: ...
    @property
    def scores(self) -> list[float]: ...
    @property
    def kinds(self) -> list[str]: ...
    @property
    def rounds(self) -> list[UnigramRound]: ...

def train_unigram(
    counter: PretokenCounter,
    settings: UnigramTrainSettings,
    progress: Optional[Callable[[str, int], object]] = None,
) -> TrainedUnigram: ...

# ---- Loaded .model and tokenizer.json files ----

@type_check_only
class SentencePieceSettings(TypedDict):
    algorithm: str  # "unigram" or "bpe"
    byte_fallback: bool
    precompiled_charsmap: bytes
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool
    treat_whitespace_as_suffix: bool

@final
class CoreSentencePiece:
    def __new__(
        cls,
        pieces: list[str],
        scores: list[float],
        kinds: list[str],
        settings: SentencePieceSettings,
    ) -> CoreSentencePiece: ...
    def encode(self, text: str) -> list[int]: ...
    def encode_to_buffer(self, text: str) -> bytearray: ...
    def encode_batch(self, texts: list[str]) -> list[list[int]]: ...
    def encode_batch_to_buffers(self, texts: list[str]) -> tuple[bytearray, bytearray]: ...
    def decode(self, ids: _Ids, unk_surface: str, raw_bytes: bool) -> bytes: ...
    def sample(self, text: str, alpha: float, seed: int) -> list[int]: ...
    def sample_batch(self, texts: list[str], alpha: float, seed: int) -> list[list[int]]: ...

@type_check_only
class MetaspaceSettings(TypedDict):
    replacement: str  # one character
    prepend_scheme: str  # "always", "first" or "never"
    split: bool

@type_check_only
class HfUnigramSettings(TypedDict):
    unk_id: Optional[int]
    byte_fallback: bool
    normalizers: list[tuple[str, object]]
    whitespace_split: bool
    metaspace: MetaspaceSettings
    added_tokens: list[tuple[str, int, bool]]  # (content, id, normalized)

@final
class CoreHfUnigram:
    def __new__(
        cls, pieces: list[str], scores: list[float], settings: HfUnigramSettings
    ) -> CoreHfUnigram: ...
    def encode(self, text: str) -> list[int]: ...
    def encode_to_buffer(self, text: str) -> bytearray: ...
    def encode_batch(self, texts: list[str]) -> list[list[int]]: ...
    def encode_batch_to_buffers(self, texts: list[str]) -> tuple[bytearray, bytearray]: ...

@final
class CoreHfDecoder:
    def __new__(
        cls, pieces: list[str], steps: Optional[list[tuple[str, object]]]
    ) -> CoreHfDecoder: ...
    def decode(self, ids: _Ids) -> str: ...

# ---- File formats and tools ----

def parse_rank_file(data: bytes) -> list[Optional[bytes]]: ...

@final
class HfBpeDocument:
    """A byte-level tokenizer.json with model.vocab and model.merges kept in Rust."""

    @property
    def rest(self) -> str: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: str, /) -> bool: ...
    def __getitem__(self, key: str, /) -> int: ...
    def tables(
        self, specials: dict[str, int]
    ) -> Optional[tuple[list[Optional[bytes]], list[tuple[int, int]]]]: ...

def split_hf_bpe(data: bytes) -> Optional[HfBpeDocument]: ...
def format_ids(ids: _Ids, json: bool) -> bytes: ...
def parse_ids(text: str) -> Optional[bytearray]: ...
def gage_compress(data: bytes, progress: Optional[Callable[[int], object]] = None) -> bytes: ...
def gage_decompress(data: bytes) -> bytes: ...
