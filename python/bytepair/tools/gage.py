"""Philip Gage's byte pair encoding (C Users Journal, 1994): the compression
algorithm BPE tokenizers are named after.

    >>> from bytepair.tools import gage
    >>> packed = gage.compress(b"ABABABCDEF")
    >>> gage.decompress(packed)
    b'ABABABCDEF'
    >>> from bytepair.reference.gage import compress_block
    >>> compress_block(b"ABABABCDEF")
    (b'\\x00\\x00\\x00CDEF', [(0, 65, 66)])

The algorithm: find the most frequent pair of adjacent bytes, replace every
occurrence with a byte value the data does not use, note (code, left, right)
in a table, and repeat until no pair occurs three times (Gage's threshold: a
table entry costs 3 bytes, so a pair seen twice would not pay for itself) or
no byte value is free.
Decompression expands each code back into its pair. Above, ``AB`` occurs 3
times and becomes byte 0: 10 bytes of payload become 7.

The rules that make the output deterministic:

- Input is cut into blocks of 64 KiB, each with its own table (Gage used
  5 KB blocks; 64 KiB compressed our English and Japanese corpora best).
- A pair's count is the number of replacements a left-to-right pass makes:
  a run of n equal bytes holds that pair n // 2 times (``AAA`` once).
- Highest count wins, ties to the smallest (left, right); the code is the
  smallest byte value that is neither in the block's input nor a code yet.

The container (integers little-endian)::

    header  b"GAGE", version (1 byte, = 1), original length (u64)
    block   original length n (u32, 1..65536), pair count k (1 byte),
            k entries (code, left, right) in replacement order,
            payload length m (u32, 1..n), the payload,
            CRC-32 (zlib's) of the block's bytes from n to the payload's end

A table entry may refer only to literal bytes and earlier codes, so expansion
always ends, and its length is checked before anything is written: corrupt or
truncated input is a ValueError naming the problem and its byte offset.

The Rust core does the work (exact incremental pair counts; about 40 ms per
MiB). ``bytepair.reference.gage.compress_block`` is the readable version for
one small block, and the core's output is tested against it.
"""

from __future__ import annotations

from typing import Optional

from .. import _native
from ..training.corpus import progress_bar

__all__ = ["compress", "decompress"]


def _as_bytes(data: object, function: str) -> bytes:
    if isinstance(data, bytes):
        return data
    try:
        view = memoryview(data)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"{function}() takes bytes-like data (bytes, bytearray, memoryview), "
            f"not {type(data).__name__}"
        ) from None
    return view.tobytes()


def compress(data: bytes, *, progress: Optional[bool] = None) -> bytes:
    """``data`` compressed with Gage's byte pair encoding, in the container
    above. ``progress``: a bar in bytes (default: when stderr is a terminal).
    Ctrl-C stops it with KeyboardInterrupt."""
    data = _as_bytes(data, "compress")
    bar = progress_bar(progress, desc="compressing", unit="B", unit_scale=True, total=len(data))
    if bar is None:
        return _native.gage_compress(data)
    try:
        packed = _native.gage_compress(data, lambda done: bar.update(done - bar.n))
        bar.update(len(data) - bar.n)  # the core reports ten times a second, not at the end
        return packed
    finally:
        bar.close()


def decompress(data: bytes) -> bytes:
    """The original of ``compress``'s output; ValueError when ``data`` is corrupt."""
    return _native.gage_decompress(_as_bytes(data, "decompress"))
