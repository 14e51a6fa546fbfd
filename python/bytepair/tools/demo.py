"""`bytepair demo`: train on a bundled novel, watch the first merges, tokenize unseen text.

The corpus is Natsume Sōseki's "Botchan" (English translation, Project
Gutenberg, public domain), shipped in ``bytepair/data/botchan.txt``. The demo
trains on the story only: the Gutenberg header and licence are not part of it,
the BOM is dropped and CRLF line ends become ``\\n`` (otherwise ``('\\r', '\\n')``
would be among the first merges shown, which teaches nothing). The last
``HELD_OUT_LINES`` lines of the story are kept out of training, so the
sentences tokenized at the end are text the tokenizer has never seen.

Tokens are shown with :mod:`bytepair.tools.display`, as ``inspect``, ``steps``
and the page show them.
"""

from __future__ import annotations

import importlib.resources
import re
import shlex
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, TextIO, Union

from ..api import train
from ..tokenizers.bpe import Tokenizer
from ..training.bpe import BpeOptions
from .display import format_merge, readable

CORPUS_FILE = "botchan.txt"
STORY_START = "*** START OF THIS PROJECT GUTENBERG EBOOK"
STORY_END = "--(THE END)--"
HELD_OUT_LINES = 20
SHOWN_MERGES = 15
SHOWN_SENTENCES = 3
DEFAULT_VOCAB_SIZE = 1000
DEFAULT_DIR = "bytepair-demo"
TOKENIZER_FILE = "tokenizer.json"

# A sentence ends at . ! or ? (perhaps followed by a closing quote), then space,
# then a capital or an opening quote; good enough for a translated novel, not a
# general sentence splitter.
_SENTENCE_END = re.compile(r"""(?:(?<=[.!?])|(?<=[.!?]["']))\s+(?=["'A-Z])""")


# ---- Showing tokens ----


def show_tokens(tokenizer: Tokenizer, ids: Sequence[int]) -> str:
    """The tokens of ``ids`` joined by ``|``: where the tokenizer cut the text."""
    return "|".join(readable(tokenizer.decode_single_token_bytes(i))[1:-1] for i in ids)


# ---- The corpus ----


def load_story() -> tuple[list[str], list[str]]:
    """The lines of Botchan: (training lines, held-out lines)."""
    resource = importlib.resources.files("bytepair") / "data" / CORPUS_FILE
    text = resource.read_bytes().decode("utf-8-sig").replace("\r\n", "\n")
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(STORY_START)) + 1
    end = next(i for i, line in enumerate(lines) if line.strip() == STORY_END)
    story = lines[start:end]
    return story[:-HELD_OUT_LINES], story[-HELD_OUT_LINES:]


def held_out_sentences(lines: Sequence[str], count: int = SHOWN_SENTENCES) -> list[str]:
    """``count`` sentences of moderate length from the held-out lines, spread over them."""
    paragraph = " ".join(line.strip() for line in lines if line.strip())
    sentences = [s for s in _SENTENCE_END.split(paragraph) if 30 <= len(s) <= 120]
    if len(sentences) <= count:
        return sentences
    step = (len(sentences) - 1) / (count - 1) if count > 1 else 0
    return [sentences[round(i * step)] for i in range(count)]


# ---- Where to write ----


def output_path(directory: Union[str, Path], force: bool) -> Path:
    """``directory/tokenizer.json``; when that exists and not ``force``, the first
    free ``tokenizer-2.json``, ``tokenizer-3.json``, ... so a second run never
    overwrites the first."""
    directory = Path(directory)
    path = directory / TOKENIZER_FILE
    if force or not path.exists():
        return path
    stem, suffix = path.stem, path.suffix
    n = 2
    while (directory / f"{stem}-{n}{suffix}").exists():
        n += 1
    return directory / f"{stem}-{n}{suffix}"


def _check_directory(directory: Path) -> None:
    """The errors saving into ``directory`` would meet after training: it, or
    a directory of its path, is a file, or the directory it goes into is
    missing (only ``directory`` itself is made, never its parents)."""
    if directory.exists():
        if not directory.is_dir():
            raise NotADirectoryError(
                f"{directory} is a file; the demo saves tokenizer.json into a directory"
            )
        return
    if directory.absolute().parent.is_dir():
        return
    found = next(p for p in directory.parents if p.exists())
    if not found.is_dir():
        raise NotADirectoryError(f"{directory}: {found} is a file, not a directory")
    raise FileNotFoundError(
        f"{directory}: the directory {directory.parent} does not exist; create it first, "
        "or give a directory inside an existing one"
    )


# ---- The demo ----


@dataclass(frozen=True)
class DemoResult:
    tokenizer: Tokenizer
    path: Path  # where the tokenizer was saved
    sentences: tuple[str, ...]  # the held-out sentences shown


def run_demo(
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    out_dir: Union[str, Path] = DEFAULT_DIR,
    *,
    force: bool = False,
    out: Optional[TextIO] = None,
) -> DemoResult:
    """Trains on Botchan, prints the first merges and three held-out sentences
    cut into tokens, saves the tokenizer under ``out_dir`` (never replacing an
    earlier one unless ``force``) and returns what it did."""
    out = out if out is not None else sys.stdout
    # Bad arguments are reported before the banner and the training, not after.
    BpeOptions(vocab_size, [])
    _check_directory(Path(out_dir))

    def say(line: str = "") -> None:
        print(line, file=out)

    training_lines, held_out = load_story()
    corpus = "\n".join(training_lines) + "\n"
    say(
        f"Training byte-level BPE on Botchan by Natsume Sōseki: {len(training_lines)} lines, "
        f"{len(corpus.encode('utf-8')):,} bytes (the last {len(held_out)} lines held out)."
    )
    say(f"Target vocabulary: {vocab_size} tokens = 256 single bytes + merges; pre-tokenizer gpt2.")
    started = time.perf_counter()
    with warnings.catch_warnings():
        # Stopping early is reported below from tokenizer.training; no warning text needed.
        warnings.simplefilter("ignore")
        tokenizer = train(corpus, vocab_size, progress=False)
    seconds = time.perf_counter() - started
    report = tokenizer.training
    merges = tokenizer.merges
    say(f"Learned {len(merges)} merges in {seconds:.2f} s.")
    if report is not None and report.stop_reason != "vocab_size":
        say(f"(Stopped before {vocab_size} tokens: {report.stop_reason}.)")

    say()
    say(f"The first {min(SHOWN_MERGES, len(merges))} merges: the most frequent adjacent pair")
    say("wins (ties: the smaller pair of bytes), every occurrence is replaced, repeat.")
    shown = [format_merge(rank, left, right) for rank, (left, right) in enumerate(merges, 1)]
    shown = shown[:SHOWN_MERGES]
    width = max((len(line) for line in shown), default=0)
    counts = report.merge_counts if report is not None else ()
    for line, count in zip(shown, counts):
        say(f"  {line:<{width}}  count {count}")

    sentences = held_out_sentences(held_out)
    say()
    say("Held-out sentences (never seen in training), cut into tokens:")
    for sentence in sentences:
        ids = tokenizer.encode(sentence)
        say()
        say(f"  text:   {sentence}")
        say(f"  tokens: {show_tokens(tokenizer, ids)}")
        say(f"  ids:    {' '.join(map(str, ids))}")
        say(
            f"  {len(ids)} tokens for {len(sentence.encode('utf-8'))} bytes "
            f"({len(sentence.encode('utf-8')) / max(len(ids), 1):.1f} bytes per token)"
        )

    path = output_path(out_dir, force)
    path.parent.mkdir(exist_ok=True)  # out_dir: its parent was checked first
    tokenizer.save(path, overwrite=force)
    say()
    say(f"Saved the tokenizer to {path}")
    shell_path = shlex.quote(str(path))
    say(f'Next: bytepair encode --tokenizer {shell_path} "Hello, Botchan!"')
    say(f"      bytepair inspect {shell_path}")
    return DemoResult(tokenizer=tokenizer, path=path, sentences=tuple(sentences))
