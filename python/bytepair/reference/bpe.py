"""Byte-level BPE, written to be read: the oracle every fast path is tested against.

What it follows:
- The training rule (docs/design/training.md), literally: special tokens are cut out of the text,
  every remaining piece is pre-tokenized, distinct pre-tokens are counted with
  their multiplicity, and each iteration recounts *all* adjacent pairs from
  scratch. The winner is the most frequent pair; ties go to the smallest
  ``(left_bytes, right_bytes)`` tuple. Symbols are identified by their bytes, so
  two merges that make the same bytes share one id.
- The encoding rule (docs/design/encoding.md), literally: each pre-token starts as its bytes and
  the adjacent pair of lowest merge rank (leftmost first) is merged until no
  pair has a rank. Allowed special tokens are split out first, and so are the
  non-special added tokens (HuggingFace's ``"special": false``), always.
- The normalization, literally: NFC or NFKC (Python's
  ``unicodedata``), then lowercase one character at a time, applied to the
  text between the special tokens (found in the text as given).
- The habits of karpathy/minbpe: one short function per idea, plain lists and
  dicts, no cleverness.

What it leaves out, on purpose:
- Speed. Training is O(merges x corpus) and encoding is quadratic in the length
  of a pre-token. That is the price of being obviously right; the Rust core is
  the fast path and must return the same answers.
- The tiktoken ``disallowed_special`` check, files, progress
  bars and file formats: those belong to ``bytepair.tokenizers`` and
  ``bytepair.formats``. Here a special token that is not allowed is plain text.

Validation raises ``ValueError`` (bad value) or ``TypeError`` (bad type) with a
message naming the offending input; it never uses ``assert``.
"""

from __future__ import annotations

import functools
import operator
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import regex

from bytepair.pretokenizers import Pretokenizer, resolve

N_BYTES = 256  # every byte value is always a token of its own

STOP_VOCAB_SIZE = "vocab_size"
STOP_NO_PAIRS = "no_pairs"
STOP_MIN_FREQUENCY = "min_frequency"


# ---------------------------------------------------------------------------
# Text -> pieces
# ---------------------------------------------------------------------------


def utf8_bytes(text: str, what: str) -> bytes:
    """UTF-8 bytes of ``text``; a lone surrogate is a clear ValueError, not a crash."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        char = text[err.start]
        raise ValueError(
            f"{what} contains the lone surrogate U+{ord(char):04X} at character {err.start}; "
            "it is not valid Unicode text and has no UTF-8 bytes"
        ) from None


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str):  # -> regex.Pattern | user_regex.CompiledUserRegex
    """What cuts text for ``pattern``: ``.finditer(text)`` gives its matches."""
    from bytepair import user_regex
    from bytepair.pretokenizers import BUILTIN_PATTERNS

    if pattern in BUILTIN_PATTERNS.values():
        # As published, in the `regex` module (not `re`: they need \p{L} / \p{N}).
        return regex.compile(pattern)
    # A user pattern is fancy-regex syntax, the core's engine, which `regex`
    # reads differently in places ($, \Z, (?i), [[:alpha:]], ...): user_regex
    # translates it and steps through its matches as fancy-regex does.
    return user_regex.compile(pattern)


def pretokenize(text: str, pretokenizer: str | Pretokenizer | object = "gpt2") -> list[str]:
    """Cut ``text`` into pre-tokens; their concatenation is always ``text``.

    ``"none"``: the whole text is one pre-token (``""`` gives none).
    A pattern: every non-empty match is a pre-token and the text between two
    matches is a pre-token of its own, so no character is ever dropped.
    Empty matches are ignored.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    pretok = resolve(pretokenizer)
    if pretok.pattern is None:
        return [text] if text else []

    pieces = []
    end_of_last = 0
    for match in _compiled(pretok.pattern).finditer(text):
        start, end = match.span()
        if start == end:
            continue
        if start > end_of_last:
            pieces.append(text[end_of_last:start])  # a gap the pattern did not match
        pieces.append(text[start:end])
        end_of_last = end
    if end_of_last < len(text):
        pieces.append(text[end_of_last:])
    return pieces


def check_specials(specials: Iterable[str], what: str = "special_tokens") -> list[str]:
    if isinstance(specials, str):
        raise TypeError(f"{what} must be a collection of str, not a single str: use [{specials!r}]")
    checked: list[str] = []
    for index, special in enumerate(specials):
        if not isinstance(special, str):
            raise TypeError(f"{what}[{index}] must be str, not {type(special).__name__}")
        if special == "":
            raise ValueError(
                f"{what}[{index}] is empty; a special token needs at least one character"
            )
        if special in checked:
            raise ValueError(
                f"{what}[{index}] {special!r} is a duplicate; special tokens must be distinct"
            )
        utf8_bytes(special, f"{what}[{index}]")
        checked.append(special)
    return checked


def split_special(text: str, specials: Iterable[str]) -> list[tuple[str, bool]]:
    """Cut the special tokens out of ``text``: a list of ``(piece, is_special)``.

    Scanning left to right, the occurrence that starts earliest wins; among
    occurrences starting at the same position, the longest wins. Empty
    ordinary pieces are dropped; joining all pieces gives back ``text``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    specials = check_specials(specials, "specials")

    pieces: list[tuple[str, bool]] = []
    position = 0
    while True:
        # Find the earliest start of any special from here; on a tie, the longest special.
        best_start, best_special = -1, ""
        for special in specials:
            start = text.find(special, position)
            if start == -1:
                continue
            if (
                best_start == -1
                or start < best_start
                or (start == best_start and len(special) > len(best_special))
            ):
                best_start, best_special = start, special
        if best_start == -1:
            break
        if best_start > position:
            pieces.append((text[position:best_start], False))
        pieces.append((best_special, True))
        position = best_start + len(best_special)
    if position < len(text):
        pieces.append((text[position:], False))
    return pieces


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ReferenceResult:
    """What training produced.

    tokens: ``tokens[i]`` is the bytes of id ``i``: the specials (UTF-8), then
        the 256 single bytes, then the merged tokens.
    merges: the winning pairs of bytes, in rank order.
    merge_ids: the same pairs as ids (``merge_ids[r]`` are the ids of ``merges[r]``).
    counts: the weighted count of each merge when it won.
    stop_reason: ``"vocab_size"``, ``"no_pairs"`` or ``"min_frequency"``.
    """

    tokens: list[bytes]
    merges: list[tuple[bytes, bytes]]
    merge_ids: list[tuple[int, int]]
    counts: list[int]
    stop_reason: str


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be int, not {type(value).__name__}")
    return value


def checked_texts(texts: Iterable[str] | str) -> Iterator[str]:
    """The texts of a corpus (a single ``str`` is one text), each checked to
    be a str with UTF-8 bytes (TypeError / ValueError naming its index)."""
    if isinstance(texts, str):
        texts = [texts]
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{index}] must be str, not {type(text).__name__}")
        utf8_bytes(text, f"texts[{index}]")
        yield text


def normalize(text: str, forms: Iterable[str] = ()) -> str:
    """The normalization: ``text`` with each of ``forms`` applied in order:
    ``"nfc"`` / ``"nfkc"`` (Unicode normalization forms), ``"lowercase"``
    (each character lowercased on its own, with no context rule: a final
    capital sigma becomes σ, as HuggingFace tokenizers' Lowercase does)."""
    for form in forms:
        if form in ("nfc", "nfkc"):
            text = unicodedata.normalize(form.upper(), text)  # type: ignore[arg-type]
        elif form == "lowercase":
            text = "".join(char.lower() for char in text)
        else:
            raise ValueError(f"unknown normalization {form!r}: use nfc, nfkc, lowercase")
    return text


def count_pretokens(
    texts: Iterable[str],
    specials: Iterable[str],
    pretokenizer: str | Pretokenizer | object,
    normalization: Iterable[str] = (),
) -> Counter:
    """Distinct pre-tokens (as bytes) of a corpus with their multiplicity.

    Specials are cut out first and never counted; the text between them is
    normalized. A single ``str`` is one text.
    """
    specials = check_specials(specials)
    normalization = list(normalization)
    pretok = resolve(pretokenizer)
    pretoken_counts: Counter = Counter()
    for text in checked_texts(texts):
        for piece, is_special in split_special(text, specials):
            if is_special:
                continue
            for pretoken in pretokenize(normalize(piece, normalization), pretok):
                pretoken_counts[pretoken.encode("utf-8")] += 1
    return pretoken_counts


def _count_pairs(words: list[list[bytes]], weights: list[int]) -> Counter:
    """Every adjacent pair in every word, weighted; overlapping pairs all count."""
    pair_counts: Counter = Counter()
    for symbols, weight in zip(words, weights):
        for left, right in zip(symbols, symbols[1:]):
            pair_counts[(left, right)] += weight
    return pair_counts


def merge_pair(symbols: list, pair: tuple) -> list:
    """Replace occurrences of ``pair`` left to right, without overlap (a a a -> aa a).
    Symbols are bytes here, or str for character BPE (``bytepair.reference.charbpe``)."""
    merged = []
    i = 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            merged.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            merged.append(symbols[i])
            i += 1
    return merged


def _add_token(new_token: bytes, tokens: list[bytes], token_id: dict[bytes, int]) -> int:
    """Id of the merged token ``new_token``, appending it to ``tokens`` only if it is new.

    The training rule identifies symbols by their bytes: were two merges ever to make
    the same bytes ((a, bc), later (ab, c)), the second reuses the id and the
    vocabulary does not grow. This trainer cannot actually reach that case: a
    symbol's span always evolves exactly as the same bytes would in isolation,
    so the bytes of a token fix the merge that made it. The rule is kept because
    it is the specification, and loaded vocabularies may still have such merges.
    """
    if new_token not in token_id:
        token_id[new_token] = len(tokens)
        tokens.append(new_token)
    return token_id[new_token]


def train(
    texts: Iterable[str],
    vocab_size: int,
    *,
    special_tokens: Iterable[str] = (),
    pretokenizer: str | Pretokenizer | object = "gpt2",
    min_frequency: int = 1,
    max_token_length: int | None = None,
    normalization: Iterable[str] = (),
) -> ReferenceResult:
    """Train byte-level BPE on ``texts`` (an iterable of str; a single str is one text).

    Stops when the vocabulary (specials included) has ``vocab_size`` tokens,
    when no pair is left, or when the best count is below ``min_frequency``.
    With ``max_token_length``, a pair whose merge would be longer than that
    many bytes is never a candidate (as if it were not there).
    """
    specials = check_specials(special_tokens)
    vocab_size = _check_int("vocab_size", vocab_size)
    min_frequency = _check_int("min_frequency", min_frequency)
    if min_frequency < 1:
        raise ValueError(f"min_frequency must be at least 1, got {min_frequency}")
    if max_token_length is not None and _check_int("max_token_length", max_token_length) < 1:
        raise ValueError(f"max_token_length must be at least 1, got {max_token_length}")
    smallest = len(specials) + N_BYTES
    if vocab_size < smallest:
        raise ValueError(
            f"vocab_size {vocab_size} is too small: the {len(specials)} special tokens and the "
            f"{N_BYTES} single bytes already take {smallest} ids"
        )

    # Ids 0..|S|-1 are the specials, then the 256 bytes in byte order.
    tokens = [special.encode("utf-8") for special in specials]
    tokens += [bytes([b]) for b in range(N_BYTES)]
    # bytes -> id of the ordinary (non-special) token; merges never produce a special.
    token_id = {bytes([b]): len(specials) + b for b in range(N_BYTES)}

    # Each distinct pre-token is a list of symbols (bytes), weighted by how often it occurs.
    pretoken_counts = count_pretokens(texts, specials, pretokenizer, normalization)
    words = [[bytes([b]) for b in pretoken] for pretoken in pretoken_counts]
    weights = list(pretoken_counts.values())

    merges: list[tuple[bytes, bytes]] = []
    merge_ids: list[tuple[int, int]] = []
    counts: list[int] = []
    while True:
        if len(tokens) >= vocab_size:
            stop_reason = STOP_VOCAB_SIZE
            break
        # Recount everything from scratch: slow, and obviously right.
        pair_counts = _count_pairs(words, weights)
        if max_token_length is not None:
            pair_counts = Counter(
                {p: c for p, c in pair_counts.items() if len(p[0]) + len(p[1]) <= max_token_length}
            )
        if not pair_counts:
            stop_reason = STOP_NO_PAIRS
            break
        # Highest count; ties go to the smallest (left_bytes, right_bytes).
        pair = min(pair_counts, key=lambda p: (-pair_counts[p], p))
        count = pair_counts[pair]
        if count < min_frequency:
            stop_reason = STOP_MIN_FREQUENCY
            break

        words = [merge_pair(symbols, pair) for symbols in words]
        left, right = pair
        _add_token(left + right, tokens, token_id)
        merges.append(pair)
        merge_ids.append((token_id[left], token_id[right]))
        counts.append(count)

    return ReferenceResult(tokens, merges, merge_ids, counts, stop_reason)


# ---------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------


def _check_special_ids(special_tokens: Mapping[str, int], tokens: list[bytes]) -> None:
    for special, special_id in special_tokens.items():
        if not isinstance(special, str) or special == "":
            raise TypeError(f"special_tokens keys must be non-empty str, got {special!r}")
        utf8_bytes(special, f"special token {special!r}")
        _check_int(f"special_tokens[{special!r}]", special_id)
        if not 0 <= special_id < len(tokens):
            raise ValueError(
                f"special token {special!r} has id {special_id}, outside the vocabulary "
                f"(ids are 0..{len(tokens) - 1})"
            )
        if tokens[special_id] != special.encode("utf-8"):
            raise ValueError(
                f"special token {special!r} has id {special_id}, but tokens[{special_id}] is "
                f"{tokens[special_id]!r}, not its UTF-8 text"
            )


def _ordinary_token_ids(tokens: list[bytes], special_ids: set[int]) -> dict[bytes, int]:
    """bytes -> id for every non-special token; the bytes must be unique."""
    token_id: dict[bytes, int] = {}
    for index, token in enumerate(tokens):
        if index in special_ids:
            continue
        if not isinstance(token, bytes):
            raise TypeError(f"tokens[{index}] must be bytes, not {type(token).__name__}")
        if token in token_id:
            raise ValueError(
                f"tokens[{index}] and tokens[{token_id[token]}] are both {token!r}; "
                "ordinary tokens must be distinct"
            )
        token_id[token] = index
    for b in range(N_BYTES):
        if bytes([b]) not in token_id:
            raise ValueError(
                f"no token for the byte 0x{b:02x}; every byte must be in the vocabulary"
            )
    return token_id


def _merge_table(
    tokens: list[bytes], merge_ids: Iterable[tuple[int, int]], token_id: dict[bytes, int]
) -> tuple[dict[tuple[int, int], int], list[int]]:
    """(pair of ids -> rank, result id of each rank).

    A pair listed twice keeps its lowest rank; the later copy can never apply.
    """
    merge_rank: dict[tuple[int, int], int] = {}
    merge_result: list[int] = []
    for rank, pair in enumerate(merge_ids):
        left, right = pair
        for side in (left, right):
            _check_int(f"merge_ids[{rank}]", side)
            if not 0 <= side < len(tokens):
                raise ValueError(
                    f"merge rank {rank} ({left}, {right}) uses id {side}, outside the "
                    f"vocabulary (ids are 0..{len(tokens) - 1})"
                )
        made = tokens[left] + tokens[right]
        if made not in token_id:
            raise ValueError(
                f"merge rank {rank} ({left}, {right}) makes {made!r}, which is not an "
                "ordinary token of the vocabulary"
            )
        merge_rank.setdefault((left, right), rank)
        merge_result.append(token_id[made])
    return merge_rank, merge_result


def _encode_pretoken(
    data: bytes,
    token_id: dict[bytes, int],
    merge_rank: dict[tuple[int, int], int],
    merge_result: list[int],
) -> list[int]:
    """Start from the bytes; merge the lowest-rank adjacent pair (leftmost first) until none has a rank."""
    ids = [token_id[bytes([b])] for b in data]
    while len(ids) >= 2:
        best_rank, best_at = None, -1
        for at in range(len(ids) - 1):
            rank = merge_rank.get((ids[at], ids[at + 1]))
            # Strictly lower: among equal ranks the leftmost occurrence stays the best.
            if rank is not None and (best_rank is None or rank < best_rank):
                best_rank, best_at = rank, at
        if best_rank is None:
            break
        ids[best_at : best_at + 2] = [merge_result[best_rank]]
    return ids


def encode(
    text: str,
    tokens: list[bytes],
    merge_ids: Iterable[tuple[int, int]],
    *,
    special_tokens: Mapping[str, int] | None = None,
    pretokenizer: str | Pretokenizer | object = "gpt2",
    allowed_special: str | Iterable[str] = (),
    normalization: Iterable[str] = (),
    added_tokens: Iterable[str] = (),
) -> list[int]:
    """Token ids of ``text``.

    ``tokens`` and ``merge_ids`` are as in :class:`ReferenceResult`;
    ``special_tokens`` maps special text -> id. Only the ``allowed_special``
    ones (or ``"all"``) are split out and emitted as their ids; any other
    special text is encoded as ordinary text. ``added_tokens`` names entries
    of ``special_tokens`` that are non-special added tokens: they are always
    split out, whatever ``allowed_special`` says. The text between them is
    normalized with ``normalization`` first.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    utf8_bytes(text, "text")
    special_tokens = dict(special_tokens or {})
    _check_special_ids(special_tokens, tokens)

    if allowed_special == "all":
        allowed = list(special_tokens)
    else:
        # As tiktoken: a name that is no special token is ignored.
        allowed = [
            special
            for special in check_specials(allowed_special, "allowed_special")
            if special in special_tokens
        ]
    for added in check_specials(added_tokens, "added_tokens"):
        if added not in special_tokens:
            raise ValueError(f"added token {added!r} is not a key of special_tokens")
        if added not in allowed:
            allowed.append(added)

    token_id = _ordinary_token_ids(tokens, set(special_tokens.values()))
    merge_rank, merge_result = _merge_table(tokens, merge_ids, token_id)
    pretok = resolve(pretokenizer)

    ids: list[int] = []
    for piece, is_special in split_special(text, allowed):
        if is_special:
            ids.append(special_tokens[piece])
            continue
        for pretoken in pretokenize(normalize(piece, normalization), pretok):
            ids.extend(
                _encode_pretoken(pretoken.encode("utf-8"), token_id, merge_rank, merge_result)
            )
    return ids


# ---------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------


def decode_bytes(ids: Iterable[int], tokens: list[bytes]) -> bytes:
    """The concatenated bytes of ``ids``; an unknown id is an error naming it and its position."""
    out = bytearray()
    for position, value in enumerate(ids):
        try:
            index = operator.index(value)
        except TypeError:
            raise TypeError(
                f"id at position {position} must be an int, not {type(value).__name__}"
            ) from None
        if not 0 <= index < len(tokens):
            raise ValueError(
                f"id {index} at position {position} is not in the vocabulary "
                f"(ids are 0..{len(tokens) - 1})"
            )
        out += tokens[index]
    return bytes(out)


def decode(ids: Iterable[int], tokens: list[bytes], errors: str = "replace") -> str:
    """The text of ``ids``: :func:`decode_bytes` as UTF-8, invalid bytes
    handled by ``errors`` (``"replace"`` by default)."""
    return decode_bytes(ids, tokens).decode("utf-8", errors=errors)
