"""Decoding many lists of ids in one call (``decode_batch``,
``decode_bytes_batch``), for :class:`~bytepair.Tokenizer` and
:class:`~bytepair.SentencePieceTokenizer` alike."""

from __future__ import annotations

import operator
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

T = TypeVar("T")

# Below this many ids in all, a batch is decoded on the calling thread:
# starting a pool costs more than the decoding (a few ns an id in the core).
POOL_MIN_IDS = 1 << 16


def decode_each(decode: Callable[[object], T], batch: object, num_threads: int) -> list[T]:
    """``decode`` of each list of ids in ``batch``, in order. A large batch
    is shared among up to ``num_threads`` threads (the core releases the GIL
    while it decodes). A bad id is named with its list's index in the batch."""
    if isinstance(batch, (str, bytes, bytearray)) or not isinstance(batch, Iterable):
        raise TypeError(f"batch must be an iterable of lists of ids, not {type(batch).__name__}")
    try:
        threads = operator.index(num_threads)
    except TypeError:
        raise TypeError(f"num_threads must be an int, not {type(num_threads).__name__}") from None
    if threads < 1:
        raise ValueError(f"num_threads must be at least 1, not {threads}")
    items = list(batch)

    def decode_item(index: int) -> T:
        try:
            return decode(items[index])
        except (TypeError, ValueError) as e:
            if type(e) not in (TypeError, ValueError):
                raise  # UnicodeDecodeError (errors="strict") takes no message of ours
            raise type(e)(f"batch[{index}]: {e}") from None

    total = sum(len(ids) if hasattr(ids, "__len__") else POOL_MIN_IDS for ids in items)
    if threads == 1 or len(items) < 2 or total < POOL_MIN_IDS:
        return [decode_item(i) for i in range(len(items))]
    with ThreadPoolExecutor(min(threads, len(items))) as pool:
        return list(pool.map(decode_item, range(len(items))))
