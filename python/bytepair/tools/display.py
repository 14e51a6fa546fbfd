"""Bytes shown to people: a token as readable quoted text, a merge as a
line. ``inspect``, ``steps``, the page and the demo all show tokens this way."""

from __future__ import annotations

import re

# An escape in repr's output that is not itself escaped (preceded by an even
# number of backslashes): \xNN for a character U+0080..U+00FF (which could be
# mistaken for a raw byte), \udcNN for a byte surrogateescape could not decode.
_CHAR_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\x([89a-f][0-9a-f])")
_BYTE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\udc([89a-f][0-9a-f])")


def readable(token: bytes) -> str:
    """``token`` as a quoted string the way ``repr`` shows text, where each byte
    that is not part of valid UTF-8 (a token may end inside a character) is
    ``\\xNN``: ``b"th"`` -> ``'th'``, ``b"\\xe6\\x9d\\xb1"`` -> ``'東'``,
    ``b"\\xe6\\x9d"`` -> ``'\\xe6\\x9d'``. A character that repr would also
    write as ``\\xNN`` (a control character U+0080..U+009F, U+00A0, U+00AD)
    becomes ``\\u00NN``, so the two never look alike."""
    text = repr(token.decode("utf-8", errors="surrogateescape"))
    text = _CHAR_ESCAPE.sub(r"\1\\u00\2", text)
    return _BYTE_ESCAPE.sub(r"\1\\x\2", text)


def format_merge(rank: int, left: bytes, right: bytes) -> str:
    """One merge as a class reads it aloud: ``merge   1: ('t', 'h') -> 'th'``
    (``rank`` counts from 1, the way the merges are read aloud)."""
    return f"merge {rank:>3}: ({readable(left)}, {readable(right)}) -> {readable(left + right)}"
