"""Training entry point: reads the corpus, counts pre-tokens in the core (in
parallel, without the GIL), runs the exact trainer, reports progress."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from . import _native
from .errors import NotUtf8Error, decode_utf8, warn
from .model import BPEModel
from .normalization import NormalizeSpec, resolve_normalize
from .pretokenizers import Pretokenizer, PretokenizerSpec, resolve
from .tokenizer import Tokenizer, _reject_surrogates

CorpusItem = Union[str, "os.PathLike[str]"]
# Texts are handed to the core in batches of about this many characters.
BATCH_CHARS = 4 << 20
# Ids are 32-bit in the core (and in numpy's uint32 arrays).
MAX_VOCAB_SIZE = 1 << 32
# Counts and lengths are 64-bit in the core.
MAX_COUNT = (1 << 64) - 1
# Seconds between checkpoint writes, by default.
CHECKPOINT_EVERY = 600.0


@dataclass(frozen=True)
class TrainingReport:
    """How a training run went."""

    merge_counts: tuple[int, ...]  # the count of each merge when it won, in merge order
    stop_reason: str  # "vocab_size", "no_pairs" or "min_frequency"
    vocab_size_requested: int
    distinct_pretokens: int
    seconds: float


def _read_file(path: Path) -> str:
    data = path.read_bytes()  # FileNotFoundError names the path
    try:
        return decode_utf8(data)
    except NotUtf8Error as e:
        raise ValueError(f"{path}: {e}") from None


def _texts(corpus: Union[CorpusItem, Iterable[CorpusItem]]) -> Iterator[tuple[str, Optional[int]]]:
    """Yields (text, size in bytes of its file) for every corpus item; the
    size is None for a str (measured only when a progress bar shows it)."""
    if isinstance(corpus, (str, os.PathLike)):
        corpus = [corpus]
    elif isinstance(corpus, (bytes, bytearray)):
        raise TypeError("corpus must be text (str), paths, or an iterable of those, not bytes")
    for index, item in enumerate(corpus):
        if isinstance(item, str):
            yield item, None
        elif isinstance(item, os.PathLike):
            path = Path(item)
            yield _read_file(path), path.stat().st_size
        else:
            raise TypeError(
                f"corpus item {index} is {type(item).__name__}; "
                "expected str (a text) or a path (os.PathLike, e.g. pathlib.Path)"
            )


def _utf8_size(text: str) -> int:
    # isascii() is O(1); other texts are encoded (a lone surrogate is reported by the core).
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def check_size(name: str, value: object, low: int, high: int) -> int:
    """``value`` if it is an int in [low, high], else a TypeError / ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be at least {low}, not {value}")
    if value > high:
        raise ValueError(f"{name} must be at most {high}, not {value}")
    return value


def _check_special_tokens(special_tokens: Sequence[str]) -> list[str]:
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a sequence of strings, not one string")
    if isinstance(special_tokens, (AbstractSet, Mapping)):
        # A set iterates in hash order (PYTHONHASHSEED), a dict's values would be ignored.
        raise ValueError(
            f"special_tokens is a {type(special_tokens).__name__}: special tokens get ids "
            "0, 1, ... in the order given, so pass a list or tuple"
        )
    tokens = list(special_tokens)
    for i, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(f"special token {i} is {type(token).__name__}, not str")
        if token == "":
            raise ValueError(f"special token {i} is empty")
        if tokens.index(token) != i:
            raise ValueError(f"special token {token!r} is given twice")
        try:
            token.encode("utf-8")
        except UnicodeEncodeError as e:
            raise _reject_surrogates(e, f"special token {i} {token!r}") from None
    return tokens


def progress_bar(enabled: Optional[bool], **kwargs):
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(file=sys.stderr, **kwargs)


def add_texts(
    counter: _native.PretokenCounter,
    texts: Iterable[tuple[str, Optional[int]]],
    progress: Optional[bool],
) -> None:
    """Counts the pre-tokens of every text in the core, in batches (a
    progress bar in bytes: of the files, and of the texts in UTF-8)."""
    bar = progress_bar(progress, desc="counting", unit="B", unit_scale=True)
    batch: list[str] = []
    batch_chars = first = 0
    try:
        for text, size in texts:
            batch.append(text)
            batch_chars += len(text)
            if bar is not None:
                bar.update(_utf8_size(text) if size is None else size)
            if batch_chars >= BATCH_CHARS:
                add_batch(counter, batch, first, "corpus text")
                first += len(batch)
                batch, batch_chars = [], 0
        add_batch(counter, batch, first, "corpus text")
    finally:
        if bar is not None:
            bar.close()


MODELS = ("bpe", "unigram", "char-bpe")
_UNIGRAM_DEFAULTS = {
    "character_coverage": 0.9995,
    "max_piece_length": 16,
    "seed_size": 1_000_000,
    "shrinking_factor": 0.75,
    "num_sub_iterations": 2,
    "byte_fallback": False,
}


def train(
    corpus: Union[CorpusItem, Iterable[CorpusItem]],
    vocab_size: int,
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
    **unigram_options,
):
    """Trains a tokenizer and returns it.

    corpus: a text, a path, or an iterable of texts (str) and files
        (os.PathLike; each file is read as one UTF-8 text).
    vocab_size: target size, everything included (bytes, special tokens).
    model: "bpe" (byte-level BPE, SPEC §1; returns a :class:`Tokenizer`),
        "unigram" (the unigram language model, docs/unigram.md; returns a
        :class:`SentencePieceTokenizer`) or "char-bpe" (classic BPE over
        characters, subword-nmt style; returns a :class:`CharBPE`; options
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
        before it is cut, in training and in every encoding with the tokenizer
        (SPEC §4).
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
        from .char_bpe import train_char_bpe

        if special_tokens or pretokenizer is not None:
            raise ValueError(
                "char-bpe cuts words at spaces (as subword-nmt) and has no special tokens; "
                "drop special_tokens / pretokenizer"
            )
        options = dict(unigram_options)
        return train_char_bpe(
            corpus,
            vocab_size=vocab_size,
            min_frequency=1 if min_frequency is None else min_frequency,
            progress=progress,
            **options,
        )
    check_size("vocab_size", vocab_size, 1, MAX_VOCAB_SIZE)
    specials = _check_special_tokens(special_tokens)
    if model == "unigram":
        from .unigram_training import train_unigram

        if min_frequency is not None:
            raise TypeError("min_frequency is a BPE option; the unigram model has none")
        unknown = unigram_options.keys() - _UNIGRAM_DEFAULTS.keys()
        if unknown:
            raise TypeError(
                f"unknown unigram option(s) {sorted(unknown)}: use {sorted(_UNIGRAM_DEFAULTS)}"
            )
        for name in ("max_piece_length", "seed_size", "num_sub_iterations"):
            if name in unigram_options:  # the core takes them as 64-bit
                check_size(name, unigram_options[name], 1, MAX_COUNT)
        return train_unigram(
            _texts(corpus),
            vocab_size,
            special_tokens=specials,
            pretokenizer="metaspace" if pretokenizer is None else pretokenizer,
            normalize=resolve_normalize(normalize),
            progress=progress,
            **{**_UNIGRAM_DEFAULTS, **unigram_options},
        )
    if unigram_options:
        raise TypeError(
            f"{sorted(unigram_options)} are unigram options; pass model='unigram' to use them"
        )
    pre = resolve("gpt2" if pretokenizer is None else pretokenizer)
    options = BpeOptions(
        vocab_size,
        specials,
        1 if min_frequency is None else min_frequency,
        max_token_length,
        None if checkpoint is None else Path(checkpoint),
        checkpoint_every,
        resolve_normalize(normalize),
    )
    started = time.perf_counter()
    counter = _native.PretokenCounter(
        specials, pre.kind, pre.pattern if pre.kind == "regex" else None, list(options.normalize)
    )
    add_texts(counter, _texts(corpus), progress)
    return merge_counted(counter, pre, options, progress, started)


@dataclass(frozen=True)
class BpeOptions:
    """The settings of the merging step of byte-level BPE training, checked."""

    vocab_size: int
    special_tokens: list[str]
    min_frequency: int = 1
    max_token_length: Optional[int] = None
    checkpoint: Optional[Path] = None
    # None: the default interval, which only a checkpoint uses.
    checkpoint_every: Optional[float] = None
    normalize: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        specials = self.special_tokens
        check_size("vocab_size", self.vocab_size, 1, MAX_VOCAB_SIZE)
        if self.vocab_size < 256 + len(specials):
            raise ValueError(
                f"vocab_size {self.vocab_size} is below the 256 single bytes + {len(specials)} "
                f"special tokens = {256 + len(specials)}"
            )
        check_size("min_frequency", self.min_frequency, 1, MAX_COUNT)
        if self.max_token_length is not None:
            check_size("max_token_length", self.max_token_length, 1, MAX_COUNT)
        every = self.checkpoint_every
        if every is not None:
            check_checkpoint_every(every)
            if self.checkpoint is None:
                raise ValueError(
                    "checkpoint_every goes with checkpoint: without a checkpoint file "
                    "nothing is written"
                )
        if self.checkpoint is not None:
            check_checkpoint_path(self.checkpoint)


def check_checkpoint_every(every: object) -> None:
    if isinstance(every, bool) or not isinstance(every, (int, float)) or not every > 0:
        raise ValueError(f"checkpoint_every must be a positive number of seconds, not {every!r}")


def check_checkpoint_path(path: Path, what: str = "checkpoint") -> None:
    """Errors writing the checkpoint ``path`` would meet only after counting:
    it exists (it is never overwritten), or its directory does not."""
    if path.is_dir():
        raise IsADirectoryError(f"{what} {path} is a directory; give the file to write")
    if path.exists():
        raise FileExistsError(
            f"{path} exists: go on from it with bytepair.resume_training("
            f"{str(path)!r}) (CLI: bytepair train --resume), or remove it"
        )
    parent = path.absolute().parent
    if not parent.is_dir():
        why = "is not a directory" if parent.exists() else "does not exist"
        raise FileNotFoundError(f"{what} {path}: the directory {parent} {why}")


CHECKPOINT_FORMAT = "bytepair-bpe-checkpoint"


def memory_bound(distinct_pretokens: int) -> int:
    """The peak memory (bytes) byte-level BPE training needs, by the formula
    the README states: 100 MiB (interpreter, one batch of text and its tables)
    + 1 KiB per distinct pre-token (the counting table, the trainer's words,
    symbols, pair table and heap). It does not grow with the corpus itself;
    ``bench/`` (suite ``scale``) checks it on 1 GB."""
    return (100 << 20) + 1024 * distinct_pretokens


def _merge_bar(progress: Optional[bool], options: BpeOptions, done: int = 0):
    """A progress bar in tokens added, and the core's callback that moves it."""
    base = 256 + len(options.special_tokens)
    bar = progress_bar(
        progress, desc="merging", total=options.vocab_size - base, initial=done, unit="merge"
    )
    if bar is None:
        return None, None

    def report(merges_done: int, vocab_len: int) -> None:
        bar.n = vocab_len - base
        bar.set_postfix(merges=merges_done, refresh=False)
        bar.refresh()

    return bar, report


def merge_counted(
    counter: _native.PretokenCounter,
    pre,
    options: BpeOptions,
    progress: Optional[bool],
    started: float,
) -> Tokenizer:
    """The merging step of byte-level BPE training on counted pre-tokens."""
    checkpoint: Optional[_native.CheckpointSettings] = None
    if options.checkpoint is not None:
        meta = {
            "format": CHECKPOINT_FORMAT,
            "pretokenizer": pre.kind,
            "pattern": pre.pattern,
            "special_tokens": options.special_tokens,
            "vocab_size": options.vocab_size,
            "min_frequency": options.min_frequency,
            "max_token_length": options.max_token_length,
            "normalize": list(options.normalize),
            "distinct_pretokens": len(counter),
        }
        every = options.checkpoint_every
        checkpoint = {
            "path": options.checkpoint,
            "meta": json.dumps(meta),
            "every": float(CHECKPOINT_EVERY if every is None else every),
        }
    bar, report = _merge_bar(progress, options)
    try:
        trained = _native.train_bpe(
            counter,
            {
                "vocab_size": options.vocab_size,
                "special_tokens": options.special_tokens,
                "min_frequency": options.min_frequency,
                "max_token_length": options.max_token_length,
                "checkpoint": checkpoint,
            },
            report,
        )
    finally:
        if bar is not None:
            bar.close()
    return _trained(trained, pre, options, len(counter), started)


def _trained(trained, pre, options: BpeOptions, distinct: int, started: float) -> Tokenizer:
    tokens, merges, counts = trained.tokens, trained.merges, trained.merge_counts
    stop_reason = trained.stop_reason
    specials = options.special_tokens
    bpe_model = BPEModel(
        tokens=tuple(tokens),
        merges=tuple(merges),
        special_tokens={t: i for i, t in enumerate(specials)},
        pretokenizer=pre,
        normalize=options.normalize,
    )
    report = TrainingReport(
        merge_counts=tuple(counts),
        stop_reason=stop_reason,
        vocab_size_requested=options.vocab_size,
        distinct_pretokens=distinct,
        seconds=time.perf_counter() - started,
    )
    if stop_reason != "vocab_size":
        why = (
            "no pair of tokens is left"
            if stop_reason == "no_pairs"
            else (f"the best pair occurs fewer than min_frequency={options.min_frequency} times")
        )
        warn(
            f"training stopped at {len(tokens)} tokens of the {options.vocab_size} requested: "
            f"{why}",
        )
    return Tokenizer(bpe_model, training=report)


@dataclass(frozen=True)
class CheckpointSettings:
    """What a checkpoint's head says about its run."""

    meta: dict
    pretokenizer: Pretokenizer
    options: BpeOptions  # the run's own (its vocab_size the last target)
    merges_done: int


def read_checkpoint(checkpoint: Union[str, os.PathLike[str]]) -> CheckpointSettings:
    """The settings of the byte-level BPE training whose state ``checkpoint``
    holds, read from its head. A file that is not one is a FormatError
    (naming the byte when it is damaged)."""
    from .errors import FormatError

    path = Path(checkpoint)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such checkpoint file")
    meta_text, merges_done = _native.checkpoint_info(path)
    try:
        meta = json.loads(meta_text)
        if meta.get("format") != CHECKPOINT_FORMAT or not isinstance(
            meta["distinct_pretokens"], int
        ):
            raise ValueError
        pre = Pretokenizer(meta["pretokenizer"], meta["pattern"])
        options = BpeOptions(
            meta["vocab_size"],
            list(meta["special_tokens"]),
            meta["min_frequency"],
            meta["max_token_length"],
            # Checkpoints from before normalization existed have none.
            normalize=resolve_normalize(meta.get("normalize", ())),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        _native.checkpoint_info(path, True)  # a damaged file: the error names the byte
        raise FormatError(path, "not a byte-level BPE training checkpoint of bytepair") from None
    return CheckpointSettings(meta, pre, options, merges_done)


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
    path = Path(checkpoint)
    check_checkpoint_every(checkpoint_every)
    settings = read_checkpoint(path)
    run = settings.options
    vocab_size = run.vocab_size if vocab_size is None else vocab_size
    options = BpeOptions(
        vocab_size,
        run.special_tokens,
        run.min_frequency,
        run.max_token_length,
        normalize=run.normalize,
    )
    started = time.perf_counter()
    bar, report = _merge_bar(progress, options, settings.merges_done)
    try:
        meta = {**settings.meta, "vocab_size": vocab_size}  # the new target, for the next resume
        trained = _native.resume_bpe(
            path, vocab_size, {"meta": json.dumps(meta), "every": float(checkpoint_every)}, report
        )
    finally:
        if bar is not None:
            bar.close()
    return _trained(trained, settings.pretokenizer, options, meta["distinct_pretokens"], started)


def add_batch(counter: _native.PretokenCounter, batch: list[str], first: int, what: str) -> None:
    """``counter.add_texts(batch)``; a lone surrogate is a ValueError naming
    the text (``what`` and its index, ``first`` being batch[0]'s) and position."""
    if not batch:
        return
    try:
        counter.add_texts(batch)
    except UnicodeEncodeError as e:
        index = next(i for i, t in enumerate(batch) if t is e.object or t == e.object)
        raise _reject_surrogates(e, f"{what} {first + index}") from None
