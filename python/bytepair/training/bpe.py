"""Byte-level BPE training: pre-tokens counted in the core (in parallel,
without the GIL), then the core's exact trainer, with progress bars and
checkpoints that a run resumes from to the same merges."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from .. import _native
from ..errors import FormatError, warn
from ..model import BPEModel
from ..normalization import resolve_normalize
from ..pretokenizers import Pretokenizer
from ..tokenizers.bpe import Tokenizer, TrainingReport
from .corpus import MAX_COUNT, MAX_VOCAB_SIZE, Corpus, add_texts, check_size, progress_bar

# Seconds between checkpoint writes, by default.
CHECKPOINT_EVERY = 600.0


def train_bpe(
    corpus: Corpus, pretokenizer: Pretokenizer, options: BpeOptions, progress: Optional[bool]
) -> Tokenizer:
    """Counts the pre-tokens of ``corpus`` (see :mod:`bytepair.training.corpus`)
    and trains byte-level BPE on them with ``options``."""
    started = time.perf_counter()
    pre = pretokenizer
    counter = _native.PretokenCounter(
        options.special_tokens,
        pre.kind,
        pre.pattern if pre.kind == "regex" else None,
        list(options.normalize),
    )
    add_texts(counter, corpus, progress)
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


def resume_bpe(
    checkpoint: Union[str, os.PathLike[str]],
    vocab_size: Optional[int] = None,
    *,
    checkpoint_every: float = CHECKPOINT_EVERY,
    progress: Optional[bool] = None,
) -> Tokenizer:
    """See :func:`bytepair.resume_training`."""
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
