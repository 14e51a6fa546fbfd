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


class DisallowedSpecialError(ValueError):
    """Text contains a special token that the call did not allow.

    ``token`` is the special token's text, ``position`` the character index
    where it starts in the text.
    """

    def __init__(self, message: str, token: Optional[str] = None, position: Optional[int] = None):
        super().__init__(message)
        self.token = token
        self.position = position
