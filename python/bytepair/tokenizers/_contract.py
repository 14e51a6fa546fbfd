"""What every tokenizer class of bytepair promises, written once: the
special-token policy (tiktoken's reading of ``allowed_special`` and
``disallowed_special``), the checks of ids and of batches, the errors for
text that is not valid Unicode (lone surrogates), and batch decoding.

Internal to :mod:`bytepair.tokenizers`: the classes there import these
names; users meet them only through the classes' methods.
"""

from __future__ import annotations

import functools
import json
import operator
import re
from collections.abc import Collection, Iterable, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Literal, Optional, Protocol, SupportsIndex, TypeVar, Union, cast

from ..errors import DisallowedSpecialError, reject_surrogates

SpecialSet = Union[Literal["all"], AbstractSet[str], Collection[str]]


def on_text(native_call, text: str, *args):
    """Calls the core on one text: TypeError when it is not a str, ValueError
    naming the lone surrogate that keeps it from being UTF-8."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    try:
        return native_call(text, *args)
    except UnicodeEncodeError as e:
        raise reject_surrogates(e, "text") from None


def batch_surrogate_error(error: UnicodeEncodeError, texts: list[str]) -> ValueError:
    """The core's UnicodeEncodeError for a batch as the ValueError naming
    the text (its index) and the lone surrogate in it."""
    index = next(i for i, t in enumerate(texts) if t is error.object or t == error.object)
    return reject_surrogates(error, f"text {index} of the batch")


def on_batch(native_call, texts: list[str], *args):
    """Calls the core on a checked batch (:func:`checked_batch`): ValueError
    naming the text (its index) and the lone surrogate that keeps it from
    being UTF-8."""
    try:
        return native_call(texts, *args)
    except UnicodeEncodeError as e:
        raise batch_surrogate_error(e, texts) from None


def checked_ids(ids: Iterable[object], n_vocab: int) -> list[int]:
    """``ids`` as a list of ints (anything ``operator.index`` takes, as the
    core does), or a ValueError naming the first bad id and its position."""
    if not isinstance(ids, Iterable) or isinstance(
        ids, (bytes, bytearray, str, dict, set, frozenset)
    ):
        # bytes would pass as its byte values (text given by mistake), a set or a
        # dict's keys in an order that means nothing.
        raise TypeError(f"ids must be an iterable of ints, not {type(ids).__name__}")
    checked = []
    for position, token in enumerate(ids):
        try:
            value = operator.index(cast(SupportsIndex, token))
        except TypeError:
            raise ValueError(f"id at position {position} is {token!r}, not an int") from None
        if not 0 <= value < n_vocab:
            raise _not_in_vocabulary(f"token id {value} at position {position}", n_vocab)
        checked.append(value)
    return checked


def checked_id(token: object, n_vocab: int) -> int:
    """One id, read as :func:`checked_ids` reads each (no position to name)."""
    try:
        value = operator.index(cast(SupportsIndex, token))
    except TypeError:
        raise ValueError(f"token id {token!r} is not an int") from None
    if not 0 <= value < n_vocab:
        raise _not_in_vocabulary(f"token id {value}", n_vocab)
    return value


def _not_in_vocabulary(what: str, n_vocab: int) -> ValueError:
    return ValueError(f"{what} is not in the vocabulary (it has {n_vocab} ids, 0 to {n_vocab - 1})")


def special_texts(chosen: object, name: str) -> set[str]:
    """``allowed_special`` / ``disallowed_special`` (other than ``"all"``) as a set
    of texts. A single string is refused: tiktoken would read it as its characters."""
    if isinstance(chosen, str):
        raise TypeError(
            f"{name} must be 'all' or a collection of strings, not the string {chosen!r} "
            f"(for one special token write {name}={{{chosen!r}}})"
        )
    if not isinstance(chosen, Iterable):
        raise TypeError(
            f"{name} must be 'all' or a collection of strings, not {type(chosen).__name__}"
        )
    texts = set()
    for text in chosen:
        if not isinstance(text, str):
            raise TypeError(f"{name} holds {text!r}, which is {type(text).__name__}, not str")
        texts.add(text)
    return texts


@functools.lru_cache(maxsize=64)
def special_finder(strings: frozenset[str]) -> re.Pattern[str]:
    """Finds the leftmost of ``strings``, the longest where several start there
    (as the core finds special tokens)."""
    return re.compile("|".join(map(re.escape, sorted(strings, key=len, reverse=True))))


def _disallowed_error(prefix: str, token: str, position: int, special: bool) -> ValueError:
    shown = json.dumps(token, ensure_ascii=False)
    if special:  # the core's message
        advice = (
            "If you want this text to be encoded as a special token, pass it to "
            f"`allowed_special`, e.g. `allowed_special={{{shown}, ...}}`.\n"
            "If you want this text to be encoded as normal text, disable the check for this "
            f"token by passing `disallowed_special=(enc.special_tokens_set - {{{shown}}})`.\n"
        )
        what = "special token"
    else:
        advice = (
            f"{shown} is not a special token of this tokenizer, but `disallowed_special` names "
            "it, so text holding it is refused (as tiktoken does); remove it from "
            "`disallowed_special` to encode this text.\n"
        )
        what = "string"
    return DisallowedSpecialError(
        f"{prefix}Encountered text corresponding to disallowed {what} {shown} at character "
        f"{position}.\n{advice}To disable this check for all special tokens, pass "
        "`disallowed_special=()`.",
        token,
        position,
    )


def select_specials(
    index: Collection[str],
    allowed_special: SpecialSet,
    disallowed_special: SpecialSet,
    texts: Sequence[object],
    batch: bool,
) -> tuple[set[str], set[str]]:
    """The (allowed, disallowed) special tokens among ``index``, as tiktoken
    reads the two arguments: names in ``allowed_special`` that are no special
    token are ignored; a string in ``disallowed_special`` that is none raises
    DisallowedSpecialError when it occurs in one of ``texts`` (checked here;
    the special tokens are left to the caller)."""
    known = set(index)
    if allowed_special == "all":
        allowed = known
    else:
        allowed = special_texts(allowed_special, "allowed_special") & known
    foreign: set[str] = set()
    if disallowed_special == "all":
        disallowed = known - allowed
    else:
        disallowed = special_texts(disallowed_special, "disallowed_special")
        foreign = disallowed - known
        disallowed -= foreign
    if foreign:
        # Leftmost of all the disallowed strings, as tiktoken searches them.
        finder = special_finder(frozenset(disallowed | foreign))
        for n, text in enumerate(texts):
            found = finder.search(text) if isinstance(text, str) else None
            if found is not None:
                token, prefix = found.group(), f"text {n} of the batch: " if batch else ""
                raise _disallowed_error(prefix, token, found.start(), token in index)
    return allowed, disallowed


def default_choice(allowed_special: SpecialSet, disallowed_special: SpecialSet) -> Optional[str]:
    """ "none" or "all" for the two argument pairs most calls pass (nothing or
    everything allowed, the rest disallowed), whose outcome depends on no
    text and can be kept; None for any other."""
    if type(disallowed_special) is not str or disallowed_special != "all":
        return None
    if type(allowed_special) is str and allowed_special == "all":
        return "all"
    if type(allowed_special) in (frozenset, set, tuple, list) and not allowed_special:
        return "none"
    return None


def checked_batch(texts: Iterable[str]) -> list[str]:
    """``texts`` as a list of str, or a TypeError naming the first that is none."""
    if isinstance(texts, (str, bytes, bytearray)):
        # list() of a str would be a batch of its characters.
        raise TypeError(
            f"a batch is an iterable of str, not one {type(texts).__name__} "
            "(for one text, call encode)"
        )
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"text {i} of the batch is {type(text).__name__}, not str")
    return texts


T = TypeVar("T")

# Below this many ids in all, a batch is decoded on the calling thread:
# starting a pool costs more than the decoding (a few ns an id in the core).
POOL_MIN_IDS = 1 << 16


def decode_each(decode: Callable[[Any], T], batch: object, num_threads: int) -> list[T]:
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


class Decodes(Protocol):
    """A tokenizer's two decodes, which the batch decodes call."""

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str: ...

    def decode_bytes(self, ids: Iterable[int]) -> bytes: ...


class BatchDecoding:
    """``decode_batch`` and ``decode_bytes_batch`` over a class's own
    ``decode`` and ``decode_bytes``."""

    __slots__ = ()

    def decode_batch(
        self: Decodes,
        batch: Iterable[Iterable[int]],
        *,
        errors: str = "replace",
        num_threads: int = 8,
    ) -> list[str]:
        """:meth:`decode` of each list of ids, in order (a large batch on up to
        ``num_threads`` threads, as tiktoken's)."""
        return decode_each(functools.partial(self.decode, errors=errors), batch, num_threads)

    def decode_bytes_batch(
        self: Decodes, batch: Iterable[Iterable[int]], *, num_threads: int = 8
    ) -> list[bytes]:
        """:meth:`decode_bytes` of each list of ids, in order."""
        return decode_each(self.decode_bytes, batch, num_threads)
