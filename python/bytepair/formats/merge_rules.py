"""How two ways of ranking merges relate, for files that must encode exactly.

bytepair knows two ranking rules (see :class:`~bytepair.model.BPEModel`):
an explicit merge list (HuggingFace, GPT-2, our training), and tiktoken's rule
(``merges=None``: any adjacent pair whose bytes form a token merges, the
lowest token id first, and a piece that is itself a token is that token).
HuggingFace ``tokenizers`` has only merge lists, plus ``ignore_merges``
(look a whole piece up in the vocabulary first). This module decides when a
merge list encodes exactly like tiktoken's rule and when ``ignore_merges``
changes nothing, so that files are written and read exactly or refused.

The fact everything rests on: under any rule that merges the lowest-ranked
adjacent pair first (leftmost among equals), the merges inside the span that
finally becomes token ``t`` see only the bytes of ``t``; they are the merges of
encoding ``t``'s bytes alone. So ``t`` is only ever made by one pair, the last
merge of encoding its own bytes without the whole-piece lookup (its *natural
pair*), or never, if that encoding does not end in ``t``. Consequently a merge
list encodes exactly like tiktoken's rule (with ``ignore_merges``) when it
holds every natural pair and its ranks follow the ids of the merged tokens
(the proof is in tests/test_hf_real_files.py's docstring, and the tests run
both libraries on real vocabularies).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Optional

Tokens = Sequence[Optional[bytes]]


def _ordinary(tokens: Tokens, special_ids: Iterable[int]) -> dict[bytes, int]:
    """bytes -> id for the tokens that are not special (and not unused ids)."""
    special = set(special_ids)
    return {t: i for i, t in enumerate(tokens) if t is not None and i not in special}


def _encode_by_id_rank(token: bytes, ids: Mapping[bytes, int]):
    """tiktoken's merging of ``token``'s bytes without the whole-piece lookup:
    the parts it ends with, and the last pair merged (as ids; None if none)."""
    parts = [token[i : i + 1] for i in range(len(token))]
    last = None
    while len(parts) > 1:
        best = None
        for k in range(len(parts) - 1):
            rank = ids.get(parts[k] + parts[k + 1])
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, k)
        if best is None:
            break
        k = best[1]
        last = (ids[parts[k]], ids[parts[k + 1]])
        parts[k : k + 2] = [parts[k] + parts[k + 1]]
    return parts, last


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
        "none",
        None,
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
    missing = []
    for token, token_id in ids.items():
        if len(token) < 2:
            continue
        parts = [byte_ids[b] for b in token]
        while len(parts) > 1:
            best = None
            for k in range(len(parts) - 1):
                rule = rules.get((parts[k], parts[k + 1]))
                if rule is not None and (best is None or rule[0] < best[0]):
                    best = (rule[0], k, rule[1])
            if best is None:
                break
            parts[best[1] : best[1] + 2] = [best[2]]
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


__all__ = ["follows_tiktoken_rule", "natural_merges", "not_made_by_merges"]
