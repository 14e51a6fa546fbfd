"""The exceptions bytepair raises (all derive from ValueError where the input
was at fault), and its warnings."""

from __future__ import annotations

import os
import sys
import warnings
from typing import Optional

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` attributed to the first frame outside bytepair (the
    user's call), however deep in the package the warning is raised: a fixed
    ``stacklevel`` names a line of bytepair on some paths, and Python then
    shows a repeated warning only once for all of them."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level + 1)


def reject_surrogates(error: UnicodeEncodeError, what: str) -> ValueError:
    """The ValueError for text holding a lone surrogate (``error``, from
    encoding it as UTF-8), naming it and where; ``what`` names the text."""
    char = error.object[error.start] if isinstance(error.object, str) else "?"
    return ValueError(
        f"{what} contains the lone surrogate {char!r} at position {error.start}: "
        "it is not valid Unicode text and has no UTF-8 bytes to encode"
    )


def check_utf8(text: str, what: str) -> str:
    """``text`` if it has UTF-8 bytes, else :func:`reject_surrogates`' error."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise reject_surrogates(e, what) from None
    return text


class FormatError(ValueError):
    """A tokenizer file is corrupt or inconsistent. Names the file and where."""

    def __init__(self, path: object, problem: str, where: Optional[str] = None) -> None:
        self.path = str(path)
        self.problem = problem
        self.where = where
        location = f" ({where})" if where else ""
        super().__init__(f"{self.path}{location}: {problem}")

    def __reduce__(self):
        # Rebuild from the fields, so the error crosses processes (Ray tasks, process pools).
        return type(self), (self.path, self.problem, self.where)


class DisallowedSpecialError(ValueError):
    """Text contains a special token that the call did not allow.

    ``token`` is the special token's text, ``position`` the character index
    where it starts in the text.
    """

    def __init__(self, message: str, token: Optional[str] = None, position: Optional[int] = None):
        super().__init__(message)
        self.token = token
        self.position = position

    def __reduce__(self):
        return type(self), (self.args[0], self.token, self.position)


class NotUtf8Error(ValueError):
    """Bytes that should be UTF-8 text are not; says where they stop being it."""

    def __init__(self, offset: int, line: int, byte: int) -> None:
        self.offset = offset
        self.line = line
        self.byte = byte
        super().__init__(f"not UTF-8 text (byte 0x{byte:02X} at offset {offset}, line {line})")

    def __reduce__(self):
        return type(self), (self.offset, self.line, self.byte)


def decode_utf8(data: bytes) -> str:
    """``data`` as text, or :class:`NotUtf8Error` naming the first bad byte and its line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise NotUtf8Error(e.start, line, data[e.start]) from None
