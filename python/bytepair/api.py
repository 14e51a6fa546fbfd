"""The entry points: :func:`train` and :func:`resume_training` make a
tokenizer; :func:`load`, :func:`load_tiktoken` and :func:`get_encoding` read
one. They dispatch to the trainers (``bytepair.training``) and the readers
(``bytepair.formats``); nothing in the package imports this module but the
command line, the tools and the package's front door."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional, Union, overload

from .errors import FormatError
from .formats import tiktoken as tiktoken_format
from .normalization import NormalizeSpec, resolve_normalize
from .pretokenizers import PretokenizerSpec, resolve
from .registry import ALIASES, ENCODINGS, encoding_path, list_encoding_names
from .tokenizers.bpe import Tokenizer
from .tokenizers.unigram import SentencePieceTokenizer
from .training.bpe import CHECKPOINT_EVERY, BpeOptions, resume_bpe, train_bpe
from .training.corpus import MAX_COUNT, MAX_VOCAB_SIZE, Corpus, check_size, check_special_tokens

if TYPE_CHECKING:
    from .tokenizers.char_bpe import CharBPE

MODELS = ("bpe", "unigram", "char-bpe")
UNIGRAM_DEFAULTS = {
    "character_coverage": 0.9995,
    "max_piece_length": 16,
    "seed_size": 1_000_000,
    "shrinking_factor": 0.75,
    "num_sub_iterations": 2,
    "byte_fallback": False,
}


@overload
def train(
    corpus: Corpus,
    vocab_size: int,
    *,
    model: Literal["bpe"] = "bpe",
    special_tokens: Sequence[str] = (),
    pretokenizer: Optional[PretokenizerSpec] = None,
    min_frequency: Optional[int] = None,
    max_token_length: Optional[int] = None,
    checkpoint: Union[str, os.PathLike[str], None] = None,
    checkpoint_every: Optional[float] = None,
    normalize: NormalizeSpec = None,
    progress: Optional[bool] = None,
) -> Tokenizer: ...


@overload
def train(
    corpus: Corpus,
    vocab_size: int,
    *,
    model: Literal["unigram"],
    special_tokens: Sequence[str] = (),
    pretokenizer: Optional[PretokenizerSpec] = None,
    normalize: NormalizeSpec = None,
    progress: Optional[bool] = None,
    **unigram_options: Any,
) -> SentencePieceTokenizer: ...


@overload
def train(
    corpus: Corpus,
    vocab_size: Optional[int],
    *,
    model: Literal["char-bpe"],
    min_frequency: Optional[int] = None,
    progress: Optional[bool] = None,
    **char_bpe_options: Any,
) -> CharBPE: ...


@overload
def train(
    corpus: Corpus,
    vocab_size: Optional[int],
    *,
    model: str = "bpe",
    special_tokens: Sequence[str] = (),
    pretokenizer: Optional[PretokenizerSpec] = None,
    min_frequency: Optional[int] = None,
    max_token_length: Optional[int] = None,
    checkpoint: Union[str, os.PathLike[str], None] = None,
    checkpoint_every: Optional[float] = None,
    normalize: NormalizeSpec = None,
    progress: Optional[bool] = None,
    **options: Any,
) -> Union[Tokenizer, SentencePieceTokenizer, CharBPE]: ...


def train(
    corpus: Corpus,
    vocab_size: Optional[int],
    *,
    model: str = "bpe",
    special_tokens: Sequence[str] = (),
    pretokenizer: Optional[PretokenizerSpec] = None,
    min_frequency: Optional[int] = None,
    max_token_length: Optional[int] = None,
    checkpoint: Union[str, os.PathLike[str], None] = None,
    checkpoint_every: Optional[float] = None,
    normalize: NormalizeSpec = None,
    progress: Optional[bool] = None,
    **options: Any,
) -> Union[Tokenizer, SentencePieceTokenizer, CharBPE]:
    """Trains a tokenizer and returns it.

    corpus: a text (``str``), a path (``os.PathLike``), or an iterable of
        texts and paths. A ``str`` is one document, as given; a path is read
        streamed, as :func:`bytepair.read_documents` reads it (which says
        which files it names, their formats, and what ends a document), so
        the memory training takes grows with the number of distinct
        pre-tokens, not with the size of the files. Pass
        ``read_documents(paths, field=...)`` to read another field of JSON
        lines or Parquet than ``"text"``.
    vocab_size: target size, everything included (bytes, special tokens).
    model: "bpe" (byte-level BPE; returns a :class:`Tokenizer`), "unigram"
        (the unigram language model, as SentencePiece trains it; returns a
        :class:`SentencePieceTokenizer`) or "char-bpe" (classic BPE over
        characters, subword-nmt style; returns a CharBPE; options
        ``num_merges``, ``end_of_word``, ``tie_rule``; ``vocab_size`` may be None
        when ``num_merges`` is given).
    pretokenizer: BPE: "gpt2" (default), "whitespace", "none", tiktoken's
        names, or a compiled regex. Unigram: "metaspace" (default,
        SentencePiece's words: spaces as ▁) or any of those.
    min_frequency (BPE): stop when the best pair occurs fewer times than this.
    max_token_length (BPE): no token longer than this many bytes is made.
    checkpoint (BPE): a file to keep the trainer's state in: written once the
        corpus is counted, every ``checkpoint_every`` seconds (default 600; only
        with a checkpoint), on Ctrl-C and at the end; :func:`resume_training`
        goes on from it to the same merges. An existing file is never
        overwritten (FileExistsError).
    normalize (BPE and unigram): ``"nfc"`` or ``"nfkc"`` and/or ``"lowercase"``
        (one name or several): the text between special tokens is normalized
        before it is cut, in training and in every encoding with the tokenizer.
    progress: show progress bars (default: when stderr is a terminal).
    unigram options (SentencePiece's names and defaults): character_coverage
        (0.9995), max_piece_length (16 characters), seed_size (1,000,000),
        shrinking_factor (0.75), num_sub_iterations (2), byte_fallback
        (False: characters left out become <unk>; True: their UTF-8 bytes).

    Ctrl-C stops training with KeyboardInterrupt. BPE stopping before
    ``vocab_size`` (no pair left, or min_frequency) is not an error: a
    warning says so and ``tokenizer.training.stop_reason`` tells why.
    """
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}: use one of {', '.join(MODELS)}")
    if model != "bpe" and (
        max_token_length is not None or checkpoint is not None or checkpoint_every is not None
    ):
        raise TypeError(
            "max_token_length, checkpoint and checkpoint_every are byte-level BPE options"
        )
    if model == "char-bpe" and normalize is not None:
        raise TypeError(
            "normalize is an option of bpe and unigram; char-bpe reads words as given "
            "(subword-nmt's codes file could not record a normalization)"
        )
    if model == "char-bpe":
        from .training.char_bpe import train_char_bpe

        if special_tokens or pretokenizer is not None:
            raise ValueError(
                "char-bpe cuts words at spaces (as subword-nmt) and has no special tokens; "
                "drop special_tokens / pretokenizer"
            )
        return train_char_bpe(
            corpus,
            vocab_size=vocab_size,
            min_frequency=1 if min_frequency is None else min_frequency,
            progress=progress,
            **options,
        )
    vocab_size = check_size("vocab_size", vocab_size, 1, MAX_VOCAB_SIZE)
    specials = check_special_tokens(special_tokens)
    if model == "unigram":
        from .training.unigram import train_unigram

        if min_frequency is not None:
            raise TypeError("min_frequency is a BPE option; the unigram model has none")
        unknown = options.keys() - UNIGRAM_DEFAULTS.keys()
        if unknown:
            raise TypeError(
                f"unknown unigram option(s) {sorted(unknown)}: use {sorted(UNIGRAM_DEFAULTS)}"
            )
        for name in ("max_piece_length", "seed_size", "num_sub_iterations"):
            if name in options:  # the core takes them as 64-bit
                check_size(name, options[name], 1, MAX_COUNT)
        return train_unigram(
            corpus,
            vocab_size,
            special_tokens=specials,
            pretokenizer="metaspace" if pretokenizer is None else pretokenizer,
            normalize=resolve_normalize(normalize),
            progress=progress,
            **{**UNIGRAM_DEFAULTS, **options},
        )
    if options:
        raise TypeError(f"{sorted(options)} are unigram options; pass model='unigram' to use them")
    pre = resolve("gpt2" if pretokenizer is None else pretokenizer)
    bpe_options = BpeOptions(
        vocab_size,
        specials,
        1 if min_frequency is None else min_frequency,
        max_token_length,
        None if checkpoint is None else Path(checkpoint),
        checkpoint_every,
        resolve_normalize(normalize),
    )
    return train_bpe(corpus, pre, bpe_options, progress)


def resume_training(
    checkpoint: Union[str, os.PathLike[str]],
    vocab_size: Optional[int] = None,
    *,
    checkpoint_every: float = CHECKPOINT_EVERY,
    progress: Optional[bool] = None,
) -> Tokenizer:
    """Goes on with the byte-level BPE training whose state ``checkpoint``
    holds (see :func:`train`'s ``checkpoint``), to the merges the run would
    have made uninterrupted. ``vocab_size`` defaults to the run's; a larger
    one extends a finished run. Checkpoints go on being written to the file.
    A damaged file is a FormatError naming the byte."""
    return resume_bpe(checkpoint, vocab_size, checkpoint_every=checkpoint_every, progress=progress)


# ---------------------------------------------------------------------------
# Loading

AnyTokenizer = Union[Tokenizer, SentencePieceTokenizer]


def _sniff(path: Path) -> Optional[str]:
    """What a file holds, for :func:`load`: "sentencepiece" (a ``.model``
    file, or a serialized ModelProto under another name such as
    ``tokenizer.model.v3`` or ``spiece.bin``: it starts with field 1, the
    pieces, as bytes 0x0A), "tiktoken" (lines of base64, a space and a rank,
    under a name other than ``.json``), or None (JSON, by the loader's rules)."""
    if path.suffix == ".model":
        return "sentencepiece"
    if path.suffix in (".json", ".tiktoken"):
        return None
    with open(path, "rb") as file:
        head = file.read(256)
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return None
    if head[:1] == b"\x0a":
        return "sentencepiece"
    if re.match(rb"[A-Za-z0-9+/]+=* [0-9]+\r?\n", head):
        return "tiktoken"
    return None


def load(path: Union[str, os.PathLike[str]]) -> AnyTokenizer:
    """Loads a tokenizer: a ``tokenizer.json`` file (byte-level BPE, or
    Unigram: a :class:`SentencePieceTokenizer` with tokenizers' ids), a
    SentencePiece ``.model`` file (a :class:`SentencePieceTokenizer` with
    sentencepiece's ids), a ``.tiktoken`` file, or a directory holding
    ``tokenizer.json`` or GPT-2's ``vocab.json`` + ``merges.txt``. A file
    named otherwise (``tokenizer.model.v3``, ``spiece.bin``) is known by its
    content."""
    from .formats import hf_unigram, load_model
    from .formats import sentencepiece as sentencepiece_format
    from .formats.huggingface import UnigramFile
    from .tokenizers.loaded import SentencePieceFileTokenizer, from_tokenizers_file

    path = Path(path)
    kind = _sniff(path) if path.is_file() else None
    if kind == "tiktoken":
        model = tiktoken_format.load_model(path)
        try:
            return Tokenizer(model)
        except ValueError as e:
            raise FormatError(path, str(e)) from None
    if kind == "sentencepiece":
        proto = sentencepiece_format.load_proto(path)
        pieces = sentencepiece_format.model_from_proto(proto, str(path))
        unk_surface = sentencepiece_format.unk_surface(proto)
        try:
            return SentencePieceFileTokenizer(pieces, extra=unk_surface)
        except ValueError as e:
            # The core checks the charsmap's whole trie; its error does not know the file.
            where = None
            if str(e).startswith("corrupt precompiled charsmap"):
                offset = proto.normalizer_spec.offsets[2]
                where = f"byte {offset}, ModelProto.normalizer_spec.precompiled_charsmap"
            raise FormatError(path, str(e), where) from None
    try:
        model = load_model(path)
    except UnigramFile as found:
        found_model, pipeline = hf_unigram.load(found.source)
        try:
            return from_tokenizers_file(found_model, pipeline)
        except ValueError as e:  # the core's checks (the charsmap's trie) do not know the file
            raise FormatError(found.source, str(e)) from None
    try:
        return Tokenizer(model)
    except ValueError as e:
        raise FormatError(path, str(e)) from None


def load_tiktoken(
    path: Union[str, os.PathLike[str]],
    pattern: object = None,
    special_tokens: Optional[Mapping[str, int]] = None,
) -> Tokenizer:
    """A tokenizer from a ``.tiktoken`` rank file, encoding with tiktoken's rule.

    ``pattern``: a pre-tokenizer name (``"cl100k"``, ``"o200k"``, ...) or a
    compiled regex; ``special_tokens``: text -> id. Either may be left out
    when the file has a sidecar ``path + ".json"`` (written by
    :func:`bytepair.save_tiktoken`) or is named after one of OpenAI's
    encodings (``cl100k_base.tiktoken``, ...); when ``pattern`` is given and
    neither applies, there are no special tokens.
    """
    model = tiktoken_format.load_model(path, pattern, special_tokens)
    try:
        return Tokenizer(model)
    except ValueError as e:
        raise FormatError(path, str(e)) from None


_cache: dict[tuple, Tokenizer] = {}
_cache_lock = threading.Lock()


def get_encoding(name: str) -> Tokenizer:
    """OpenAI's encoding ``name`` (``r50k_base``, ``p50k_base``, ``cl100k_base``,
    ``o200k_base``; ``gpt2``, as in tiktoken, is r50k_base) from
    ``$BYTEPAIR_TIKTOKEN_DIR/<name>.tiktoken``, with its published pattern and
    special tokens; ids equal tiktoken's. The file's sha256 must be OpenAI's.
    Loaded once per process (per file version)."""
    name = ALIASES.get(name, name)
    path = encoding_path(name)
    stat = path.stat()
    key = (name, str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None:
        return cached
    model = tiktoken_format.load_known(path, ENCODINGS[name])  # checks the sha256
    tokenizer = Tokenizer(model)
    with _cache_lock:
        for old in [k for k in _cache if k[0] == name]:
            del _cache[old]  # one version of each file is enough
        _cache[key] = tokenizer
    return tokenizer


def load_any(spec: Union[str, os.PathLike[str]]) -> AnyTokenizer:
    """The tokenizer ``spec`` names: a path (anything :func:`bytepair.load`
    reads, or a ``.tiktoken`` file), else one of OpenAI's encodings by name."""
    path = Path(spec)
    if not path.exists():
        if str(spec) in ENCODINGS or str(spec) in ALIASES:
            return get_encoding(str(spec))  # a clear error when the file is not there
        raise FileNotFoundError(
            f"{spec}: no such file or directory, and not an encoding name "
            f"({', '.join(list_encoding_names())})"
        )
    if path.is_file() and path.name.endswith(".tiktoken"):
        return load_tiktoken(path)
    return load(path)  # FormatError names the file and what is wrong in it
