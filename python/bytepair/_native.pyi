"""Stub of the private Rust extension. Use the public API in bytepair instead."""

from collections.abc import Sequence
from typing import Callable, Optional

GPT2_PATTERN: str
WHITESPACE_PATTERN: str
R50K_PATTERN: str
CL100K_PATTERN: str
O200K_PATTERN: str

class CoreBPE:
    def __init__(
        self,
        tokens: Sequence[Optional[bytes]],
        merges: Optional[Sequence[tuple[int, int]]],
        special_tokens: list[tuple[str, int]],
        pretokenizer: str,
        pattern: Optional[str] = None,
        special_strip: Optional[list[tuple[bool, bool]]] = None,
        normalize: list[str] = ...,
    ) -> None: ...
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
    def decode_bytes(self, ids: list[int]) -> bytes: ...
    def token_bytes(self, id: int) -> bytes: ...
    def token_id(self, bytes: bytes) -> Optional[int]: ...
    def n_vocab(self) -> int: ...
    def merges(self) -> tuple[list[tuple[int, int]], list[int]]: ...

class PretokenCounter:
    def __init__(
        self,
        special_tokens: list[str],
        pretokenizer: str,
        pattern: Optional[str] = None,
        normalize: list[str] = ...,
    ) -> None: ...
    def add_texts(self, texts: list[str]) -> None: ...
    def __len__(self) -> int: ...
    def items(self) -> list[tuple[bytes, int]]: ...
    def add_counts(self, counts: list[tuple[bytes, int]]) -> None: ...
    def clear(self) -> None: ...

def train_bpe(
    counter: PretokenCounter,
    vocab_size: int,
    special_tokens: list[str],
    min_frequency: int,
    progress: Optional[Callable[[int, int], object]] = None,
) -> tuple[list[bytes], list[tuple[int, int]], list[int], str]: ...
def parse_rank_file(data: bytes) -> list[Optional[bytes]]: ...

class HfBpeDocument:
    """A byte-level tokenizer.json with model.vocab and model.merges kept in Rust."""

    @property
    def rest(self) -> str: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: str) -> bool: ...
    def __getitem__(self, key: str) -> int: ...
    def tables(
        self, specials: dict[str, int]
    ) -> Optional[tuple[list[Optional[bytes]], list[tuple[int, int]]]]: ...

def split_hf_bpe(data: bytes) -> Optional[HfBpeDocument]: ...

class CoreUnigram:
    def __init__(
        self,
        pieces: list[str],
        scores: list[float],
        kinds: list[str],
        unk_id: Optional[int],
        byte_fallback: bool,
        max_piece_length: int,
        special_tokens: list[tuple[str, int]],
        pretokenizer: str,
        pattern: Optional[str] = None,
        normalize: list[str] = ...,
    ) -> None: ...
    def decode(self, ids: Sequence[int], raw_bytes: bool) -> bytes: ...
    def encode(self, text: str, allowed: list[int], disallowed: list[int]) -> list[int]: ...
    def encode_to_buffer(
        self, text: str, allowed: list[int], disallowed: list[int]
    ) -> bytearray: ...
    def encode_batch_to_buffers(
        self, texts: list[str], allowed: list[int], disallowed: list[int]
    ) -> tuple[bytearray, bytearray]: ...
    def encode_batch(
        self, texts: list[str], allowed: list[int], disallowed: list[int]
    ) -> list[list[int]]: ...
    def nbest(
        self, text: str, allowed: list[int], disallowed: list[int], k: int
    ) -> list[tuple[list[int], float]]: ...
    def sample(
        self, text: str, allowed: list[int], disallowed: list[int], alpha: float, seed: int
    ) -> list[int]: ...
    def sample_batch(
        self, texts: list[str], allowed: list[int], alpha: float, seed: int
    ) -> list[list[int]]: ...

def train_unigram(
    counter: PretokenCounter,
    vocab_size: int,
    special_tokens: list[str],
    character_coverage: float,
    max_piece_length: int,
    seed_size: int,
    shrinking_factor: float,
    num_sub_iterations: int,
    byte_fallback: bool,
    progress: Optional[Callable[[str, int], None]] = None,
) -> tuple[
    list[str], list[float], list[str], list[tuple[int, list[float], int, Optional[int]]]
]: ...

class CoreSentencePiece:
    def __init__(
        self,
        pieces: list[str],
        scores: list[float],
        kinds: list[str],
        algorithm: str,
        byte_fallback: bool,
        normalizer: tuple[bytes, bool, bool, bool, bool],
    ) -> None: ...
    def encode(self, text: str) -> list[int]: ...
    def encode_to_buffer(self, text: str) -> bytearray: ...
    def encode_batch(self, texts: list[str]) -> list[list[int]]: ...
    def encode_batch_to_buffers(self, texts: list[str]) -> tuple[bytearray, bytearray]: ...
    def decode(self, ids: Sequence[int], unk_surface: str, raw_bytes: bool) -> bytes: ...
    def sample(self, text: str, alpha: float, seed: int) -> list[int]: ...
    def sample_batch(self, texts: list[str], alpha: float, seed: int) -> list[list[int]]: ...

class CoreHfUnigram:
    def __init__(
        self,
        pieces: list[str],
        scores: list[float],
        unk_id: Optional[int],
        byte_fallback: bool,
        normalizers: list[tuple[str, object]],
        whitespace_split: bool,
        metaspace: tuple[str, str, bool],
        added_tokens: list[tuple[str, int, bool]],
    ) -> None: ...
    def encode(self, text: str) -> list[int]: ...
    def encode_to_buffer(self, text: str) -> bytearray: ...
    def encode_batch(self, texts: list[str]) -> list[list[int]]: ...
    def encode_batch_to_buffers(self, texts: list[str]) -> tuple[bytearray, bytearray]: ...

class CoreHfDecoder:
    def __init__(self, pieces: list[str], steps: Optional[list[tuple[str, object]]]) -> None: ...
    def decode(self, ids: Sequence[int]) -> str: ...

def format_ids(ids: Sequence[int], json: bool) -> bytes: ...
def parse_ids(text: str) -> Optional[bytearray]: ...
def gage_compress(data: bytes, progress: Optional[Callable[[int], object]] = None) -> bytes: ...
def gage_decompress(data: bytes) -> bytes: ...
def train_bpe_symbols(
    words: list[tuple[list[int], int]],
    base: list[bytes],
    vocab_size: int,
    min_frequency: int,
    max_merges: Optional[int],
    largest_ties: bool,
    progress: Optional[Callable[[int, int], object]] = None,
) -> tuple[list[bytes], list[tuple[int, int]], list[int], str]: ...

class CoreSymbolBPE:
    def __init__(self, rules: list[tuple[int, int, int]]) -> None: ...
    def encode_words(self, words: list[list[int]]) -> list[list[int]]: ...
