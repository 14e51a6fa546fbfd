"""Pre-tokenizers: how text is cut into pieces before BPE sees it.

A pre-tokenizer is named (``none``, ``whitespace``, ``gpt2``, and tiktoken's
``r50k``, ``p50k``, ``cl100k``, ``o200k``) or is a user
regex given as a compiled pattern (``re.compile(...)`` or ``regex.compile``).
Names and patterns never mix: an unknown name is an error, not a regex, so a
typo cannot silently change the tokenizer.

Cutting rule for patterns: every non-empty match is a piece; text between
matches (which a builtin pattern never leaves) is a piece of its own, so no
byte is ever dropped. Empty matches are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

# GPT-2's published pattern (openai/gpt-2 encoder.py; tiktoken's "gpt2").
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# tiktoken's patterns (tiktoken_ext.openai_public), byte for byte.
R50K_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
# A word is its non-whitespace run with the whitespace before it at its front;
# whitespace at the very end of a text is a piece of its own.
WHITESPACE_PATTERN = r"\s*\S+|\s+"

BUILTIN_PATTERNS: dict[str, Optional[str]] = {
    "none": None,
    "whitespace": WHITESPACE_PATTERN,
    "gpt2": GPT2_PATTERN,
    "r50k": R50K_PATTERN,
    "p50k": R50K_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
}


@dataclass(frozen=True)
class Pretokenizer:
    """``kind`` is a builtin name or ``"regex"``; ``pattern`` is the regex (None for ``none``)."""

    kind: str
    pattern: Optional[str]

    @property
    def name(self) -> str:
        """What the user passes back to get this pre-tokenizer (the name or the pattern)."""
        return self.kind if self.kind != "regex" else f"regex:{self.pattern}"


PretokenizerSpec = Union[str, "Pretokenizer", object]


def resolve(spec: PretokenizerSpec) -> Pretokenizer:
    """Turn a user's pre-tokenizer argument into a :class:`Pretokenizer`."""
    if isinstance(spec, Pretokenizer):
        return spec
    if isinstance(spec, str):
        if spec in BUILTIN_PATTERNS:
            return Pretokenizer(spec, BUILTIN_PATTERNS[spec])
        names = ", ".join(sorted(BUILTIN_PATTERNS))
        raise ValueError(
            f"unknown pre-tokenizer {spec!r}: use one of {names}, "
            "or pass a compiled pattern such as re.compile(r'\\w+|\\W+') for a custom regex"
        )
    pattern = getattr(spec, "pattern", None)
    if isinstance(pattern, str):
        if pattern == "":
            raise ValueError("a pre-tokenizer regex must not be empty")
        for name, builtin in BUILTIN_PATTERNS.items():
            if builtin == pattern:
                return Pretokenizer(name, builtin)
        return Pretokenizer("regex", pattern)
    raise TypeError(
        f"pretokenizer must be a name ({', '.join(BUILTIN_PATTERNS)}) or a compiled regex, "
        f"not {type(spec).__name__}"
    )
