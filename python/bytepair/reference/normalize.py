"""SentencePiece's normalizer, literally (normalizer.cc of sentencepiece 0.2.x).

Two parts:

1. The precompiled charsmap: a blob holding a 4-byte little-endian size, a
   darts-clone double-array trie of that many bytes (uint32 units, little
   endian), then the replacement strings, each ended by a NUL byte. The trie
   maps UTF-8 byte strings to the offset of their replacement.
2. :func:`normalize`: at each position of the UTF-8 input, the longest
   user-defined piece that starts there is copied as is; otherwise the
   longest trie key that starts there is replaced; otherwise one character
   is copied (a byte that does not start a valid UTF-8 character becomes
   U+FFFD, one byte at a time). Then the whitespace rules, exactly in
   sentencepiece's order (see :func:`normalize`).

:func:`apply_charsmap_tokenizers` is the other reading of the same blob, the
one HuggingFace ``tokenizers`` ``Precompiled`` normalizer does: grapheme
clusters, and the *shortest* match.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Optional, Union

from ..model import SentencePieceNormalizer

SPACE_SYMBOL = "\u2581"  # ▁, what an escaped space is written as
_SPACE_SYMBOL_BYTES = SPACE_SYMBOL.encode("utf-8")
_REPLACEMENT_CHARACTER = "\ufffd".encode("utf-8")


class CorruptCharsmap(ValueError):
    """A precompiled charsmap whose trie points outside itself."""


# ---------------------------------------------------------------------------
# darts-clone double-array trie


def _has_leaf(unit: int) -> bool:
    return (unit >> 8) & 1 == 1


def _value(unit: int) -> int:
    return unit & 0x7FFFFFFF


def _label(unit: int) -> int:
    # A leaf unit has bit 31 set, so its label never equals a byte.
    return unit & 0x800000FF


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


class DoubleArray:
    """A darts-clone double-array trie (read only)."""

    def __init__(self, units: list[int]) -> None:
        self.units = units

    def _unit(self, position: int) -> int:
        if position >= len(self.units):
            raise CorruptCharsmap(
                f"the trie refers to unit {position} but has {len(self.units)} units"
            )
        return self.units[position]

    def common_prefix_search(
        self, key: bytes, start: int = 0, end: Optional[int] = None
    ) -> list[tuple[int, int]]:
        """Every key of the trie that is a prefix of ``key[start:end]``, shortest first.

        Returns (length in bytes, value) pairs. Like darts-clone given an
        explicit length, a NUL byte in ``key`` is an ordinary byte (no trie key
        contains one, so matching stops there).
        """
        if end is None:
            end = len(key)
        results = []
        position = _offset(self._unit(0))
        for index in range(start, end):
            byte = key[index]
            position ^= byte
            unit = self._unit(position)
            if _label(unit) != byte:
                break
            position ^= _offset(unit)
            if _has_leaf(unit):
                results.append((index + 1 - start, _value(self._unit(position))))
        return results


class Charsmap:
    """A precompiled charsmap: the trie and the replacement strings."""

    def __init__(self, blob: bytes) -> None:
        if len(blob) <= 4:
            raise CorruptCharsmap(f"a charsmap of {len(blob)} bytes")
        (trie_size,) = struct.unpack_from("<I", blob, 0)
        if trie_size % 4 or 4 + trie_size > len(blob):
            raise CorruptCharsmap(f"trie size {trie_size} does not fit a blob of {len(blob)} bytes")
        count = trie_size // 4
        self.trie = DoubleArray(list(struct.unpack_from(f"<{count}I", blob, 4)))
        self.replacements = blob[4 + trie_size :]

    def replacement(self, value: int) -> bytes:
        """The replacement string stored at offset ``value`` (up to its NUL byte)."""
        if value > len(self.replacements):
            raise CorruptCharsmap(
                f"replacement offset {value} beyond the {len(self.replacements)} bytes of strings"
            )
        stop = self.replacements.find(b"\0", value)
        if stop < 0:
            stop = len(self.replacements)
        return self.replacements[value:stop]

    def longest_match(self, data: bytes, start: int) -> Optional[tuple[bytes, int]]:
        """(replacement, bytes consumed) for the longest rule at ``data[start:]``, or None.

        sentencepiece keeps the first of equally long results, and the trie
        never gives two results of the same length, so "longest" is exact.
        """
        best: Optional[tuple[bytes, int]] = None
        for length, value in self.trie.common_prefix_search(data, start):
            if best is None or length > best[1]:
                best = (self.replacement(value), length)
        return best

    def shortest_match(self, data: bytes) -> Optional[bytes]:
        """The replacement of the shortest rule that is a prefix of ``data`` (tokenizers' reading).

        tokenizers' trie walk stops at a NUL byte.
        """
        end = data.find(b"\0")
        results = self.trie.common_prefix_search(data, 0, len(data) if end < 0 else end)
        if not results:
            return None
        return self.replacement(results[0][1])


_charsmaps: dict[bytes, Charsmap] = {}


def charsmap_of(blob: bytes) -> Optional[Charsmap]:
    """The parsed charsmap of ``blob`` (cached), or None for the empty blob (no rules)."""
    if not blob:
        return None
    charsmap = _charsmaps.get(blob)
    if charsmap is None:
        charsmap = Charsmap(blob)
        if len(_charsmaps) > 16:
            _charsmaps.clear()
        _charsmaps[blob] = charsmap
    return charsmap


# ---------------------------------------------------------------------------
# UTF-8 as sentencepiece reads it


def _is_trail(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def utf8_char_length(data: bytes, start: int) -> Optional[int]:
    """The length of the valid UTF-8 character at ``data[start]``, or None if it is not one.

    sentencepiece's DecodeUTF8: shortest form only, no surrogates, at most
    U+10FFFF. (A literal U+FFFD is valid.)
    """
    first = data[start]
    left = len(data) - start
    if first < 0x80:
        return 1
    if left >= 2 and first & 0xE0 == 0xC0:
        code = ((first & 0x1F) << 6) | (data[start + 1] & 0x3F)
        if _is_trail(data[start + 1]) and code >= 0x80:
            return 2
    elif left >= 3 and first & 0xF0 == 0xE0:
        code = ((first & 0x0F) << 12) | ((data[start + 1] & 0x3F) << 6) | (data[start + 2] & 0x3F)
        if (
            _is_trail(data[start + 1])
            and _is_trail(data[start + 2])
            and code >= 0x800
            and not 0xD800 <= code <= 0xDFFF
        ):
            return 3
    elif left >= 4 and first & 0xF8 == 0xF0:
        code = (
            ((first & 0x07) << 18)
            | ((data[start + 1] & 0x3F) << 12)
            | ((data[start + 2] & 0x3F) << 6)
            | (data[start + 3] & 0x3F)
        )
        if (
            _is_trail(data[start + 1])
            and _is_trail(data[start + 2])
            and _is_trail(data[start + 3])
            and 0x10000 <= code <= 0x10FFFF
        ):
            return 4
    return None


def decode_utf8_like_sentencepiece(data: bytes) -> str:
    """``data`` as text, each byte that does not start a valid character becoming U+FFFD.

    Unlike Python's ``errors="replace"`` (one U+FFFD per maximal invalid
    subsequence), sentencepiece replaces byte by byte: ``b"\\xe2\\x82"`` is two
    U+FFFD.
    """
    out = []
    position = 0
    while position < len(data):
        length = utf8_char_length(data, position)
        if length is None:
            out.append("\ufffd")
            position += 1
        else:
            out.append(data[position : position + length].decode("utf-8"))
            position += length
    return "".join(out)


# ---------------------------------------------------------------------------
# The normalizer


class _PrefixMatcher:
    """The longest user-defined piece at a position (sentencepiece's PrefixMatcher)."""

    def __init__(self, pieces: Iterable[str]) -> None:
        self.pieces = {piece.encode("utf-8") for piece in pieces if piece}
        self.lengths = sorted({len(piece) for piece in self.pieces}, reverse=True)

    def match(self, data: bytes, start: int) -> int:
        """Length in bytes of the longest piece at ``data[start:]``, or 0."""
        for length in self.lengths:
            if data[start : start + length] in self.pieces:
                return length
        return 0


def _prefix(
    data: bytes, start: int, matcher: _PrefixMatcher, charsmap: Optional[Charsmap]
) -> tuple[bytes, int]:
    """sentencepiece's NormalizePrefix: (normalized bytes, input bytes consumed) at ``start``."""
    length: Optional[int] = matcher.match(data, start)
    if length:
        return data[start : start + length], length
    if charsmap is not None:
        match = charsmap.longest_match(data, start)
        if match is not None:
            return match
    length = utf8_char_length(data, start)
    if length is None:
        return _REPLACEMENT_CHARACTER, 1
    return data[start : start + length], length


def normalize(
    text: Union[str, bytes],
    normalizer: SentencePieceNormalizer,
    user_defined: Iterable[str] = (),
) -> str:
    """``text`` as sentencepiece's Normalizer::Normalize returns it.

    ``user_defined``: the model's user-defined pieces (copied as they are,
    never normalized). Steps, as sentencepiece does them:

    1. remove_extra_whitespaces: drop leading units that normalize to exactly
       one space. Nothing left -> "".
    2. add_dummy_prefix (and not treat_whitespace_as_suffix): start with one
       ``▁`` (a space when not escape_whitespaces).
    3. For each unit (see the module doc): with remove_extra_whitespaces and
       the previous unit ending in a space (or nothing written yet), drop the
       unit's leading spaces; write the rest, each space as ``▁`` when
       escape_whitespaces.
    4. remove_extra_whitespaces: drop trailing ``▁`` (or spaces) - also
       ``▁`` characters that were in the text itself.
    5. add_dummy_prefix with treat_whitespace_as_suffix: end with one ``▁``.
    """
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    if not data:
        return ""
    charsmap = charsmap_of(normalizer.precompiled_charsmap)
    matcher = _PrefixMatcher(user_defined)
    remove_extra = normalizer.remove_extra_whitespaces
    space = _SPACE_SYMBOL_BYTES if normalizer.escape_whitespaces else b" "

    position = 0
    if remove_extra:
        while position < len(data):
            piece, consumed = _prefix(data, position, matcher, charsmap)
            if piece != b" ":
                break
            position += consumed
    if position == len(data):
        return ""

    out = bytearray()
    if normalizer.add_dummy_prefix and not normalizer.treat_whitespace_as_suffix:
        out += space
    is_previous_space = remove_extra
    while position < len(data):
        piece, consumed = _prefix(data, position, matcher, charsmap)
        if is_previous_space:
            piece = piece.lstrip(b" ")
        if piece:
            for byte in piece:
                if byte == 0x20 and normalizer.escape_whitespaces:
                    out += _SPACE_SYMBOL_BYTES
                else:
                    out.append(byte)
            is_previous_space = piece.endswith(b" ")
        position += consumed
        if not remove_extra:
            is_previous_space = False

    if remove_extra:
        while out.endswith(space):
            del out[-len(space) :]
    if normalizer.add_dummy_prefix and normalizer.treat_whitespace_as_suffix:
        out += space
    return _to_text(bytes(out))


def _to_text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptCharsmap(f"a replacement string is not UTF-8: {exc}") from None


# ---------------------------------------------------------------------------
# tokenizers' reading of the charsmap


def apply_charsmap_tokenizers(text: str, blob: bytes) -> str:
    """``text`` through HuggingFace tokenizers' ``Precompiled`` normalizer.

    tokenizers walks extended grapheme clusters. A cluster shorter than 6
    UTF-8 bytes that *starts* with a rule is replaced whole by the shortest
    such rule's replacement (the rest of the cluster is dropped). Otherwise
    each character is looked up alone (shortest rule that is a prefix of it)
    and replaced, or kept. No whitespace handling: that is the pre-tokenizer's.
    """
    import regex  # the grapheme clusters (\\X); a dependency of bytepair

    charsmap = charsmap_of(blob)
    if charsmap is None:
        return text
    out = []
    for cluster in regex.findall(r"\X", text):
        encoded = cluster.encode("utf-8")
        if len(encoded) < 6:
            replacement = charsmap.shortest_match(encoded)
            if replacement is not None:
                out.append(_to_text(replacement))
                continue
        for char in cluster:
            replacement = charsmap.shortest_match(char.encode("utf-8"))
            out.append(char if replacement is None else _to_text(replacement))
    return "".join(out)


__all__ = [
    "SPACE_SYMBOL",
    "Charsmap",
    "CorruptCharsmap",
    "DoubleArray",
    "apply_charsmap_tokenizers",
    "charsmap_of",
    "decode_utf8_like_sentencepiece",
    "normalize",
    "utf8_char_length",
]
