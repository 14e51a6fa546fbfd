"""Gage's byte pair compression of one block, written to be read: the
oracle of :mod:`bytepair.tools.gage` (whose docstring states the rules and the
container). It recounts every pair before each replacement, so it is slow;
use it on small inputs."""

from __future__ import annotations

from collections import Counter


def _pair_counts(symbols: list[int]) -> Counter[tuple[int, int]]:
    """How many times a left-to-right replacement would find each pair."""
    counts: Counter[tuple[int, int]] = Counter()
    last_start: dict[tuple[int, int], int] = {}
    for i, pair in enumerate(zip(symbols, symbols[1:])):
        if last_start.get(pair) == i - 1:
            continue  # overlaps the occurrence counted just before (x x x)
        counts[pair] += 1
        last_start[pair] = i
    return counts


def _replace(symbols: list[int], pair: tuple[int, int], code: int) -> list[int]:
    out = []
    i = 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(code)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def compress_block(data: bytes) -> tuple[bytes, list[tuple[int, int, int]]]:
    """One block by the rules above, recounting every pair before each
    replacement: (payload, table of (code, left, right) in replacement order).
    Slow; for small inputs (the core cuts input longer than 64 KiB into blocks)."""
    symbols = list(data)
    free = [b for b in range(256) if b not in set(symbols)]
    table = []
    for code in free:
        counts = _pair_counts(symbols)
        if not counts:
            break
        # Highest count first, then the smallest pair.
        pair, count = min(counts.items(), key=lambda item: (-item[1], item[0]))
        if count < 3:  # a table entry costs 3 bytes: replacing a pair seen twice saves only 2
            break
        symbols = _replace(symbols, pair, code)
        table.append((code, *pair))
    return bytes(symbols), table
