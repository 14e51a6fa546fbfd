"""subword-nmt's codes files, which its ``learn-bpe`` writes and
``apply-bpe`` reads: a ``#version: 0.2`` line, then one ``left right``
merge a line, in rank order.

A file of version 0.1 (or without the version line, which subword-nmt reads
as 0.1) keeps the end-of-word marker a symbol of its own; 0.2 attaches it to
a word's last character. Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (text
mode). A symbol with a space or a line break, or an empty one, could not be
read back, so it is refused on writing.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import FormatError, NotUtf8Error, check_utf8, decode_utf8
from .files import PathLike

CODES_VERSIONS = ("0.1", "0.2")
# A codes file holds one "left right" merge a line (subword-nmt strips spaces
# and \r\n from a line's ends): a symbol with one of these is read back as
# other merges, or not at all.
CODES_BREAKS = {" ": "a space", "\r": "a line break ('\\r')", "\n": "a line break ('\\n')"}

Merges = list[tuple[str, str]]


def codes_version(line: str, path: Path) -> str:
    """The version a codes file's first line gives, as subword-nmt reads it
    (trailing ``.0`` parts dropped); none is 0.1."""
    if not line.startswith("#version:"):
        return "0.1"
    given = line.split()[-1] if line.split() else ""
    version = given
    while version.endswith(".0") and version.count(".") > 1:
        version = version[:-2]
    if version not in CODES_VERSIONS:
        raise FormatError(
            path,
            f"codes version {given!r}: subword-nmt and bytepair read versions "
            f"{' and '.join(CODES_VERSIONS)}",
            "line 1",
        )
    return version


def _universal_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_codes(path: Path) -> str:
    """A codes file's text, its lines ended by \\n (\\r\\n and \\r too, as in
    text mode); FormatError naming the line and byte where it is not UTF-8."""
    data = path.read_bytes()  # FileNotFoundError names the path
    try:
        return _universal_newlines(decode_utf8(data))
    except NotUtf8Error as e:
        line = _universal_newlines(data[: e.offset].decode("utf-8")).count("\n") + 1
        raise FormatError(
            path, f"not UTF-8 text (byte 0x{e.byte:02X} at offset {e.offset})", f"line {line}"
        ) from None


def load(path: PathLike) -> tuple[Merges, str]:
    """The merges and the version of the codes file ``path``."""
    path = Path(path)
    merges = []
    text = _read_codes(path)
    if not text.strip():  # subword-nmt refuses it too; no writer makes one
        raise FormatError(path, "empty: a codes file holds a #version line or merges")
    version = codes_version(text.split("\n", 1)[0], path)
    for number, line in enumerate(text.split("\n"), start=1):
        if not line or (number == 1 and line.startswith("#version:")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise FormatError(path, f"expected 'left right', got {line!r}", f"line {number}")
        merges.append((parts[0], parts[1]))
    return merges, version


def dumps(merges: Merges, version: str) -> str:
    """The codes file of ``merges``; ValueError naming a merge it could not hold."""
    for index, merge in enumerate(merges):  # a hand-built CharBPE may have any
        for symbol in merge:
            check_utf8(symbol, f"merges[{index}] {merge!r}")
            problem = "an empty symbol" if not symbol else None
            for char, name in CODES_BREAKS.items():
                if problem is None and char in symbol:
                    problem = f"{name} in {symbol!r}"
            if problem:
                raise ValueError(
                    f"merges[{index}] {merge!r} has {problem}: a codes file holds one "
                    "'left right' merge a line, so it could not be read back"
                )
    lines = [f"#version: {version}"] + [f"{a} {b}" for a, b in merges]
    return "\n".join(lines) + "\n"


def save(merges: Merges, version: str, path: PathLike) -> None:
    """Writes the codes file of ``merges`` (nothing when one cannot be held)."""
    Path(path).write_bytes(dumps(merges, version).encode("utf-8"))


__all__ = ["CODES_BREAKS", "CODES_VERSIONS", "codes_version", "dumps", "load", "save"]
