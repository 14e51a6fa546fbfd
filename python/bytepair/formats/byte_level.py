"""GPT-2's byte-level alphabet, and the vocabulary tables written with it.

Files of the GPT-2 family (``vocab.json`` + ``merges.txt``, HuggingFace
``tokenizer.json``) store token bytes as text: every byte is one printable
character. The map, from its definition in GPT-2's ``encoder.py``:

* the printable Latin-1 bytes ``!``..``~``, ``¡``..``¬`` and ``®``..``ÿ`` stand
  for themselves (188 bytes);
* the other 68 bytes (controls, space, DEL, NBSP, soft hyphen, ...) become
  ``chr(256 + n)`` for n = 0, 1, 2, ... in increasing byte order, so the space
  0x20 is ``Ġ`` (U+0120) and the newline 0x0A is ``Ċ`` (U+010A).

Because the map works byte by byte, a token's byte-level text never contains a
space and the text of ``left + right`` is the text of ``left`` followed by the
text of ``right``; merges are therefore written as ``"left right"``.

The second half of the module turns a :class:`~bytepair.model.BPEModel` into
such tables and back, with every consistency check the formats share; the
format modules only add where in their file each table lives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Callable, Optional

from ..errors import FormatError
from ..model import BPEModel
from ..pretokenizers import Pretokenizer


def _printable(byte: int) -> bool:
    return (0x21 <= byte <= 0x7E) or (0xA1 <= byte <= 0xAC) or (0xAE <= byte <= 0xFF)


def _build_byte_chars() -> tuple[str, ...]:
    chars = []
    shifted = 0
    for byte in range(256):
        if _printable(byte):
            chars.append(chr(byte))
        else:
            chars.append(chr(256 + shifted))
            shifted += 1
    return tuple(chars)


# BYTE_CHARS[b] is the character that stands for byte b; CHAR_BYTES inverts it.
BYTE_CHARS: tuple[str, ...] = _build_byte_chars()
CHAR_BYTES: dict[str, int] = {char: byte for byte, char in enumerate(BYTE_CHARS)}
# str.translate table from Latin-1 code points (= byte values) to the byte-level characters.
_LATIN1_TO_CHARS = {byte: char for byte, char in enumerate(BYTE_CHARS)}


def bytes_to_unicode() -> dict[int, str]:
    """The map as GPT-2's ``encoder.py`` returns it: byte value -> character."""
    return dict(enumerate(BYTE_CHARS))


def bytes_to_unicode_text(data: bytes) -> str:
    """The byte-level text of ``data``: one character per byte."""
    return data.decode("latin-1").translate(_LATIN1_TO_CHARS)


def unicode_text_to_bytes(text: str) -> bytes:
    """The bytes behind a byte-level text; ValueError naming the first foreign character."""
    try:
        return bytes(CHAR_BYTES[char] for char in text)
    except KeyError:
        for position, char in enumerate(text):
            if char not in CHAR_BYTES:
                raise ValueError(
                    f"character {char!r} (U+{ord(char):04X}) at position {position} "
                    "is not in GPT-2's byte-level alphabet"
                ) from None
        raise  # unreachable: some character was missing


# ---------------------------------------------------------------------------
# Model -> tables (writing)


def model_to_tables(
    model: BPEModel,
    format_name: str,
    merges: Optional[Sequence[tuple[int, int]]] = None,
) -> tuple[dict[str, int], list[str]]:
    """The ``vocab`` (text -> id, in id order) and ``merges`` ("left right") of ``model``.

    ``merges`` replaces the model's own merge list (a model with tiktoken's
    rule has none; the format decides which list encodes like it). A special
    token's key is its raw text, every other token's key its byte-level text;
    unused ids are left out. ValueError when two tokens would get the same key
    (the file's map cannot hold both) or when a merge is repeated (readers that
    keep the last rank would tokenize differently).
    """
    if merges is None:
        if model.merges is None:
            raise ValueError(
                f"cannot write the {format_name} format: the model ranks merges by tiktoken's "
                "rule and no merge list was derived for it"
            )
        merges = model.merges
    special_ids = {token_id: text for text, token_id in model.special_tokens.items()}
    vocab: dict[str, int] = {}
    owner: dict[str, str] = {}  # key -> description of the token that took it, for the error
    for token_id, token in enumerate(model.tokens):
        if token is None:
            continue
        if token_id in special_ids:
            key = special_ids[token_id]
            description = f"special token {key!r} (id {token_id})"
        else:
            key = bytes_to_unicode_text(token)
            description = f"token {token!r} (id {token_id}, byte-level text {key!r})"
        if key in vocab:
            raise ValueError(
                f"cannot write the {format_name} format: {owner[key]} and {description} "
                "would share one key in the vocabulary map"
            )
        vocab[key] = token_id
        owner[key] = description

    texts = {i: bytes_to_unicode_text(t) for i, t in enumerate(model.tokens) if t is not None}
    lines: list[str] = []
    first_rank: dict[tuple[int, int], int] = {}
    for rank, pair in enumerate(merges):
        if pair in first_rank:
            raise ValueError(
                f"cannot write the {format_name} format: merge {rank + 1} repeats merge "
                f"{first_rank[pair] + 1} (ids {pair[0]}, {pair[1]})"
            )
        first_rank[pair] = rank
        lines.append(f"{texts[pair[0]]} {texts[pair[1]]}")
    return vocab, lines


# ---------------------------------------------------------------------------
# Tables -> model (reading)

# A table holds a slot for every id up to the largest, so one id of 4e9 would
# allocate gigabytes. Unused ids are real but few (tiktoken's files: a few dozen
# below their specials): allowing as many as the entries, plus ID_SLACK for small
# files, keeps a table within 3 slots an entry. The core's rank_file::id_limit
# is the same bound.
ID_SLACK = 1 << 16


def id_limit(entries: int) -> int:
    """The ids of a table of ``entries`` tokens must be below this."""
    return 2 * entries + ID_SLACK


# Raise a FormatError located in the file: (problem, key or None) for the vocabulary,
# (problem, 0-based merge index) for the merges. Each format says how it names places.
VocabError = Callable[[str, Optional[str]], FormatError]
MergeError = Callable[[str, int], FormatError]


def _check_text(key: str, vocab_error: VocabError) -> None:
    """A FormatError naming ``key`` when it holds a lone surrogate (JSON's
    ``"\\ud800"`` escape reads as one): such text has no UTF-8 bytes."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise vocab_error(
            f"the text holds the lone surrogate {key[exc.start]!r} at position {exc.start}, "
            "which is not Unicode text and has no UTF-8 bytes",
            key,
        ) from None


def model_from_tables(
    vocab: Mapping[str, object],
    merges: Sequence[tuple[str, str]],
    special_tokens: Mapping[str, int],
    pretokenizer: Pretokenizer,
    *,
    vocab_error: VocabError,
    merge_error: MergeError,
) -> BPEModel:
    """Build and check a model from byte-level tables.

    ``special_tokens`` (raw text -> id) must all be keys of ``vocab`` with that
    id; the format resolves specials that live outside its vocabulary map
    before calling. Checks: ids are non-negative integers, distinct and below
    :func:`id_limit` of the entries (unused ids between them are allowed: they
    read as None); no key holds a lone surrogate; non-special keys are
    byte-level text; every single byte is present; every merge names two
    non-special tokens whose concatenation is a non-special token; no merge is
    repeated.
    """
    tokens_by_id: dict[int, bytes] = {}
    key_by_id: dict[int, str] = {}
    id_by_text: dict[str, int] = {}  # byte-level text -> id, non-special tokens only
    limit = id_limit(len(vocab))
    for key, token_id in vocab.items():
        _check_text(key, vocab_error)
        if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
            raise vocab_error(f"id {token_id!r} is not a non-negative integer", key)
        if token_id >= limit:
            raise vocab_error(
                f"id {token_id} is far beyond the {len(vocab)} entries (ids must be below "
                f"{limit}: twice the entries + {ID_SLACK}, room for unused ids)",
                key,
            )
        if token_id in key_by_id:
            raise vocab_error(
                f"id {token_id} is given to both {key_by_id[token_id]!r} and {key!r}", key
            )
        key_by_id[token_id] = key
        if key in special_tokens:
            if special_tokens[key] != token_id:
                raise vocab_error(
                    f"special token {key!r} has id {special_tokens[key]} in the added tokens "
                    f"but id {token_id} in the vocabulary",
                    key,
                )
            tokens_by_id[token_id] = key.encode("utf-8")
            continue
        if key == "":
            raise vocab_error("a token is empty", key)
        try:
            tokens_by_id[token_id] = unicode_text_to_bytes(key)
        except ValueError as exc:
            raise vocab_error(f"{exc}; a token must be byte-level text", key) from None
        id_by_text[key] = token_id

    for byte, char in enumerate(BYTE_CHARS):
        if char not in id_by_text:
            raise vocab_error(
                f"single byte 0x{byte:02X} (byte-level {char!r}) is missing; "
                "a byte-level vocabulary holds all 256 bytes",
                None,
            )

    merge_ids: list[tuple[int, int]] = []
    first_index: dict[tuple[int, int], int] = {}
    for index, (left, right) in enumerate(merges):
        for part in (left, right):
            if part in special_tokens:
                raise merge_error(f"merge names the special token {part!r}", index)
            if part not in id_by_text:
                raise merge_error(f"token {part!r} is not in the vocabulary", index)
        result = left + right
        if result in special_tokens:
            raise merge_error(f"merge result {result!r} is a special token", index)
        if result not in id_by_text:
            raise merge_error(
                f"merge result {result!r} ({left!r} + {right!r}) is not in the vocabulary", index
            )
        pair = (id_by_text[left], id_by_text[right])
        if pair in first_index:
            raise merge_error(
                f"merge {left!r} {right!r} repeats merge {first_index[pair] + 1}", index
            )
        first_index[pair] = index
        merge_ids.append(pair)

    specials = dict(sorted(special_tokens.items(), key=lambda item: item[1]))
    return BPEModel(
        tokens=tuple(tokens_by_id.get(i) for i in range(max(tokens_by_id) + 1)),
        merges=tuple(merge_ids),
        special_tokens=specials,
        pretokenizer=pretokenizer,
    )
