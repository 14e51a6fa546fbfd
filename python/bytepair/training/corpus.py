"""What every trainer shares: the corpus as texts, the checks of sizes and
special tokens, progress bars, and counting pre-tokens in the core.

A corpus is a text (``str``), a path (``os.PathLike``), or an iterable of
those. A ``str`` is one document, as given. A path is read as
:func:`bytepair.corpus.sources.read_documents` reads it (the one rule every
command and the Python API follow: streamed, cut into documents where that
function's docstring says), so a file is never held whole in memory.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, Optional, TypeVar, Union

from .. import _native
from ..corpus.sources import Documents, OnRead, read_documents
from ..errors import reject_surrogates

CorpusItem = Union[str, "os.PathLike[str]"]
Corpus = Union[CorpusItem, Iterable[CorpusItem]]
# Texts are handed to the core in batches of about this many characters.
BATCH_CHARS = 4 << 20
# Ids are 32-bit in the core (and in numpy's uint32 arrays).
MAX_VOCAB_SIZE = 1 << 32
# Counts and lengths are 64-bit in the core.
MAX_COUNT = (1 << 64) - 1


def corpus_texts(corpus: Corpus, on_read: OnRead = None) -> Iterator[str]:
    """The documents of a corpus, streamed: a ``str`` item is one document;
    paths give the documents :func:`~bytepair.corpus.sources.read_documents`
    reads from them (paths in a row are read as one input list, so a file
    named twice in a row is read once, as on the command line).
    ``on_read(n)`` is told of the bytes read: a file's as stored, a ``str``'s
    size in UTF-8."""
    if isinstance(corpus, (str, os.PathLike)):
        corpus = [corpus]
    elif isinstance(corpus, (bytes, bytearray)):
        raise TypeError("corpus must be text (str), paths, or an iterable of those, not bytes")
    return _documents(corpus, on_read)


def _documents(corpus: Iterable[CorpusItem], on_read: OnRead) -> Iterator[str]:
    paths: list[Path] = []
    for index, item in enumerate(corpus):
        if isinstance(item, os.PathLike):
            paths.append(Path(item))
            continue
        if paths:
            yield from read_documents(paths, on_read=on_read)
            paths = []
        if not isinstance(item, str):
            raise TypeError(
                f"corpus item {index} is {type(item).__name__}; "
                "expected str (a text) or a path (os.PathLike, e.g. pathlib.Path)"
            )
        if on_read is not None:
            on_read(utf8_size(item))
        yield item
    if paths:
        yield from read_documents(paths, on_read=on_read)


def utf8_size(text: str) -> int:
    """The UTF-8 size of ``text`` in bytes, cheaply."""
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


def check_special_tokens(special_tokens: Sequence[str]) -> list[str]:
    """The special tokens as a list, checked: texts, non-empty, each once, UTF-8."""
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
            raise reject_surrogates(e, f"special token {i} {token!r}") from None
    return tokens


def progress_bar(enabled: Optional[bool], **kwargs: Any) -> Any:
    """A tqdm bar on stderr (``enabled`` None: when stderr is a terminal), else None."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(file=sys.stderr, **kwargs)


def text_batches(texts: Iterable[str], batch_chars: int) -> Generator[list[str], None, None]:
    """``texts`` in lists of at least ``batch_chars`` characters (the last one
    shorter), as the core counts them."""
    batch: list[str] = []
    size = 0
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= batch_chars:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


T = TypeVar("T")
_END = object()


def read_ahead(items: Iterator[T], depth: int = 2) -> Generator[T, None, None]:
    """The items of ``items``, made by a thread that keeps up to ``depth`` of
    them ready: files are read and cut while the core counts the batch before
    (it releases the GIL). An error in ``items`` is raised here, as raised;
    closing this iterator (or an error here) stops the thread."""
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: tuple[object, Any]) -> bool:
        while not stop.is_set():
            try:
                ready.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((None, item)):
                    return
            put((_END, None))
        except BaseException as error:  # handed to the consumer, raised there
            put((error, None))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="bytepair-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            error, item = ready.get()
            if error is _END:
                return
            if error is not None:
                raise error
            yield item
    finally:
        stop.set()
        # It stops at its next item; one waiting on a pipe that stays silent
        # (train /dev/stdin, then Ctrl-C) is left behind (a daemon) rather
        # than holding the error up.
        thread.join(timeout=1.0)


def reads_files(corpus: object) -> bool:
    """Whether reading ``corpus`` reads files: then :func:`read_ahead` is worth
    its thread (texts already in memory are batched faster without one)."""
    if isinstance(corpus, (os.PathLike, Documents)):
        return True
    # A str is no path, and much faster to tell (os.PathLike is an ABC).
    return isinstance(corpus, (list, tuple)) and any(
        not isinstance(item, str) and isinstance(item, (os.PathLike, Documents)) for item in corpus
    )


def batches_of(
    corpus: Corpus, batch_chars: int, on_read: OnRead = None
) -> Generator[list[str], None, None]:
    """The documents of ``corpus`` in batches (:func:`text_batches`), read
    ahead in a thread when they come from files."""
    if on_read is None and isinstance(corpus, (list, tuple)):
        if all(isinstance(item, str) for item in corpus):  # texts in memory, as they are
            return text_batches(corpus, batch_chars)
    batches = text_batches(corpus_texts(corpus, on_read), batch_chars)
    return read_ahead(batches) if reads_files(corpus) else batches


def add_texts(counter: _native.PretokenCounter, corpus: Corpus, progress: Optional[bool]) -> None:
    """Counts the pre-tokens of every document of ``corpus`` in the core, in
    batches (:func:`batches_of`); a progress bar in bytes: of the files as
    stored, of the texts in UTF-8."""
    bar = progress_bar(progress, desc="counting", unit="B", unit_scale=True)
    first = 0
    try:
        on_read = None if bar is None else bar.update
        with contextlib.closing(batches_of(corpus, BATCH_CHARS, on_read)) as batches:
            for batch in batches:
                add_batch(counter, batch, first, "corpus text")
                first += len(batch)
    finally:
        if bar is not None:
            bar.close()


def add_batch(counter: _native.PretokenCounter, batch: list[str], first: int, what: str) -> None:
    """``counter.add_texts(batch)``; a lone surrogate is a ValueError naming
    the text (``what`` and its index, ``first`` being batch[0]'s) and position."""
    if not batch:
        return
    try:
        counter.add_texts(batch)
    except UnicodeEncodeError as e:
        index = next(i for i, t in enumerate(batch) if t is e.object or t == e.object)
        raise reject_surrogates(e, f"{what} {first + index}") from None
