"""The exceptions bytepair raises; all derive from ValueError where the input was at fault."""

from __future__ import annotations

from typing import Optional


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
