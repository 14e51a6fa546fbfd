"""How two ways of ranking merges relate, for files that must encode exactly.

bytepair knows two ranking rules (see :class:`~bytepair.model.BPEModel`):
an explicit merge list (HuggingFace, GPT-2, our training), and tiktoken's rule
(``merges=None``: any adjacent pair whose bytes form a token merges, the
lowest token id first, and a piece that is itself a token is that token).
HuggingFace ``tokenizers`` has only merge lists, plus ``ignore_merges``
(look a whole piece up in the vocabulary first). This module decides when a
merge list encodes exactly like tiktoken's rule and when ``ignore_merges``
changes nothing, so that files are written and read exactly or refused.

Why it works. Both libraries merge, in one piece, the adjacent pair of lowest
rank, the leftmost among equals (tiktoken ranks a pair by the id of the token
it makes; a merge list by its position). Call a token's *natural pair* the
last merge of encoding the token's own bytes alone by tiktoken's rule without
the whole-piece lookup, if that encoding ends in the token.

1. In any piece, the span that finally becomes token ``t`` only ever saw
   merges among its own bytes, chosen in the same order as when those bytes
   are encoded alone (a pair outside the span never changes which pair inside
   it is lowest, and a pair across its edge is never merged, or the span would
   not end as one token). The order is deterministic, so ``t`` is made by its
   natural pair or not at all, by any rule of this kind.
2. Let a merge list hold every natural pair, with ranks following the ids of
   the tokens made (several pairs making the same token may sit in any
   order). At every step tiktoken's rule merges some natural pair (by 1); that
   pair is in the list and its rank is the lowest there too, since the list's
   pairs are a subset of tiktoken's ranked the same way; among equal ranks
   both take the leftmost natural pair (a pair of the same rank that is not
   natural is never merged, by 1 applied to the list's own rule and induction
   on the token's length). So both make the same merges in the same order and
   stop together; with ``ignore_merges`` both also start with the same
   whole-piece lookup.

So :func:`natural_merges` (with ``ignore_merges``) is written for a model with
tiktoken's rule, and a file with ``ignore_merges`` whose list passes
:func:`follows_tiktoken_rule` is read as tiktoken's rule. The Rust core's
derived merges (``Tokenizer.merge_ids``) are the natural pairs of the tokens
made with ranks below their own; a token made only after higher-ranked merges
(``abc`` below ``ab``) needs the full encoding here. Tests run both libraries
on OpenAI's vocabularies and on such a case.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Optional

from ..model import BPEModel

Tokens = Sequence[Optional[bytes]]


def _ordinary(tokens: Tokens, special_ids: Iterable[int]) -> dict[bytes, int]:
    """bytes -> id for the tokens that are not special (and not unused ids)."""
    special = set(special_ids)
    return {t: i for i, t in enumerate(tokens) if t is not None and i not in special}


Rule = Callable[[Any, Any], Optional[tuple[int, Any]]]

# Tokens of more parts than this merge with a heap: the scan is quadratic, and
# one token of 36 KB in a file took a minute to check.
_SCAN_PARTS = 64


def _merge_by_rank(parts: list, rule: Rule) -> tuple[list, Optional[tuple[Any, Any]]]:
    """Merges the adjacent pair of lowest rank, leftmost first, until no pair
    has a rule (``rule(left, right)``: (rank, merged part) or None). Returns
    the parts it ends with and the last pair merged (None if none)."""
    if len(parts) > _SCAN_PARTS:
        return _merge_by_heap(parts, rule)
    return _merge_by_scan(parts, rule)


def _merge_by_scan(parts: list, rule: Rule) -> tuple[list, Optional[tuple[Any, Any]]]:
    parts = list(parts)
    last = None
    while len(parts) > 1:
        best = None
        for k in range(len(parts) - 1):
            found = rule(parts[k], parts[k + 1])
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], k, found[1])
        if best is None:
            break
        k = best[1]
        last = (parts[k], parts[k + 1])
        parts[k : k + 2] = [best[2]]
    return parts, last


def _merge_by_heap(parts: list, rule: Rule) -> tuple[list, Optional[tuple[Any, Any]]]:
    """:func:`_merge_by_scan` in O(n log n): candidate pairs in a heap by (rank,
    start of the left part), each checked against the parts when taken (a part
    keeps its start, so the heap's order is the scan's leftmost-first)."""
    parts = list(parts)
    after = list(range(1, len(parts))) + [-1]
    before = list(range(-1, len(parts) - 1))
    heap: list = []

    def push(i: int) -> None:
        j = after[i]
        if j != -1:
            found = rule(parts[i], parts[j])
            if found is not None:
                heapq.heappush(heap, (found[0], i, parts[i], parts[j], found[1]))

    for i in range(len(parts) - 1):
        push(i)
    last = None
    alive = [True] * len(parts)
    while heap:
        _, i, left, right, merged = heapq.heappop(heap)
        j = after[i]
        if not alive[i] or j == -1 or parts[i] != left or parts[j] != right:
            continue  # a pair a merge beside it has changed
        last = (left, right)
        parts[i], alive[j] = merged, False
        after[i] = after[j]
        if after[j] != -1:
            before[after[j]] = i
        if before[i] != -1:
            push(before[i])
        push(i)
    return [part for part, kept in zip(parts, alive) if kept], last


def _encode_by_id_rank(token: bytes, ids: Mapping[bytes, int]):
    """tiktoken's merging of ``token``'s bytes without the whole-piece lookup:
    the parts it ends with, and the last pair merged (as ids; None if none)."""

    def rule(left: bytes, right: bytes) -> Optional[tuple[int, bytes]]:
        joined = left + right
        rank = ids.get(joined)
        return None if rank is None else (rank, joined)

    parts, last = _merge_by_rank([token[i : i + 1] for i in range(len(token))], rule)
    return parts, None if last is None else (ids[last[0]], ids[last[1]])


def natural_merges(
    tokens: Tokens, special_ids: Iterable[int]
) -> tuple[list[tuple[int, int]], list[int]]:
    """For tiktoken's rule: the natural pair of every token that merging makes,
    sorted by the id of the token made, and the ids of the tokens (of two or
    more bytes) that merging never makes (only the whole-piece lookup gives them).

    The Rust core derives most pairs quickly (encoding each token's bytes with
    the ranks below its own); a token it cannot make that way may still be
    made after merges of higher rank, so those few are encoded here in full.
    """
    from .. import _native

    special_ids = list(special_ids)
    ids = _ordinary(tokens, special_ids)
    core = _native.CoreBPE(
        list(tokens),
        None,
        [(tokens[i].decode("utf-8"), i) for i in special_ids],  # type: ignore[union-attr]
        {"pretokenizer": "none", "pattern": None, "special_strip": None, "normalize": []},
    )
    derived, stuck = core.merges()
    pairs = {tokens[left] + tokens[right]: (left, right) for left, right in derived}  # type: ignore[operator]
    unreachable = []
    for token_id in stuck:
        token = tokens[token_id]
        assert token is not None
        parts, last = _encode_by_id_rank(token, ids)
        if len(parts) == 1 and last is not None:
            # Made, but only after merges ranked above it: the last merge made it.
            pairs[token] = last
        else:
            unreachable.append(token_id)
    merges = sorted(pairs.values(), key=lambda pair: ids[tokens[pair[0]] + tokens[pair[1]]])  # type: ignore[operator]
    return merges, unreachable


def rank_merges(model: BPEModel) -> tuple[list[tuple[int, int]], list[int]]:
    """For a model with tiktoken's rule (``merges=None``): for each token in
    id order, the last merge that makes it from its own bytes (the core's
    derivation), and the ids of the tokens no merge of lower rank makes."""
    from .. import _native

    core = _native.CoreBPE(
        list(model.tokens),
        None,
        list(model.special_tokens.items()),
        {"pretokenizer": "none", "pattern": None, "special_strip": None, "normalize": []},
    )
    return core.merges()


def not_made_by_merges(
    tokens: Tokens, special_ids: Iterable[int], merges: Sequence[tuple[int, int]]
) -> list[int]:
    """Ids of the tokens (two or more bytes) that merging their own bytes with
    ``merges`` does not turn into themselves. When there are none, looking a
    whole piece up first (HF's ``ignore_merges``) never changes a result."""
    ids = _ordinary(tokens, special_ids)
    rules: dict[tuple[int, int], tuple[int, int]] = {}
    for rank, (left, right) in enumerate(merges):
        result = ids[tokens[left] + tokens[right]]  # type: ignore[operator]
        rules.setdefault((left, right), (rank, result))
    byte_ids = [ids[bytes([b])] for b in range(256)]

    def rule(left: int, right: int) -> Optional[tuple[int, int]]:
        return rules.get((left, right))

    missing = []
    for token, token_id in ids.items():
        if len(token) < 2:
            continue
        parts, _ = _merge_by_rank([byte_ids[b] for b in token], rule)
        if parts != [token_id]:
            missing.append(token_id)
    return sorted(missing)


def follows_tiktoken_rule(
    tokens: Tokens, special_ids: Iterable[int], merges: Sequence[tuple[int, int]]
) -> Optional[str]:
    """None when ``merges`` (with a whole-piece lookup first) encodes exactly
    like tiktoken's rule on ``tokens``; else why not, naming a token."""
    special_ids = list(special_ids)
    ids = _ordinary(tokens, special_ids)
    previous = -1
    for rank, (left, right) in enumerate(merges):
        result = ids[tokens[left] + tokens[right]]  # type: ignore[operator]
        if result < previous:
            return (
                f"merge {rank + 1} makes id {result} after a merge that made id {previous}: "
                "tiktoken's rule ranks merges by the id of the token they make"
            )
        previous = result
    needed, _ = natural_merges(tokens, special_ids)
    present = set(merges)
    for left, right in needed:
        if (left, right) not in present:
            token = tokens[left] + tokens[right]  # type: ignore[operator]
            return (
                f"token {token!r} (id {ids[token]}) is made by merging ids {left} and {right} "
                "under tiktoken's rule, a merge the file does not list"
            )
    return None


__all__ = ["follows_tiktoken_rule", "natural_merges", "not_made_by_merges", "rank_merges"]
