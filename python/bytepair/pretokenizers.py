"""Pre-tokenizers: how text is cut into pieces before BPE sees it.

A pre-tokenizer is named (``none``, ``whitespace``, ``gpt2``, and tiktoken's
``r50k``, ``p50k``, ``cl100k``, ``o200k``) or is a user
regex given as a compiled pattern (``re.compile(...)`` or ``regex.compile``);
its IGNORECASE, MULTILINE, DOTALL and VERBOSE flags are written into the
pattern as ``(?i)``, ``(?m)``, ``(?s)``, ``(?x)``, and any other flag is an error.
Names and patterns never mix: an unknown name is an error, not a regex, so a
typo cannot silently change the tokenizer.

A pattern is read with the syntax of Rust's ``fancy-regex``, the core's
engine. Python code (the reference, a tokenizer.json's regex decoder) runs
it in Python's ``regex`` through a translation (:mod:`bytepair.user_regex`)
that keeps fancy-regex's meaning where the
two differ (``$``, ``\\Z``, ``(?i)``, ``[[:alpha:]]``, ...); the few
constructs it cannot reproduce exactly (``\\G``, conditionals, subroutine
calls, case-insensitive backreferences, ...) are a ValueError here.

Cutting rule for patterns: every non-empty match is a piece; text between
matches (which a builtin pattern never leaves) is a piece of its own, so no
byte is ever dropped. Empty matches are ignored.
"""

from __future__ import annotations

import re
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


def kind_and_pattern_problem(kind: object, pattern: object) -> Optional[tuple[str, str]]:
    """What makes (``kind``, ``pattern``) not a pre-tokenizer, as (the part at
    fault, "kind" or "pattern"; why), or None. A builtin kind comes with its own
    pattern only: the core runs the builtin, and the formats write the pattern."""
    if kind == "regex":
        if not isinstance(pattern, str) or not pattern:
            return "pattern", f"a regex pre-tokenizer needs a pattern, not {pattern!r}"
        return None
    if not isinstance(kind, str) or kind not in BUILTIN_PATTERNS:
        return "kind", f"unknown kind {kind!r} (known: {', '.join(BUILTIN_PATTERNS)}, regex)"
    if pattern != BUILTIN_PATTERNS[kind]:
        return "pattern", (
            f"{pattern!r} is not the pattern of the {kind} pre-tokenizer "
            f"({BUILTIN_PATTERNS[kind]!r}; bytepair.pretokenizers.resolve({kind!r}) gives it)"
        )
    return None


# Flags of a compiled pattern that the core's engine (fancy-regex) reads as the
# same inline flag; the `regex` module numbers its flags like `re` for these four.
_INLINE_FLAGS = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s", re.VERBOSE: "x"}
# Global inline flags at the start of a pattern, e.g. "(?i)" or "(?ix)".
_LEADING_FLAGS = re.compile(r"(?:\(\?[a-zA-Z]+\))*")


def _with_inline_flags(spec: object, pattern: str) -> str:
    """``pattern`` with the flags ``spec`` was compiled with written into it.

    ValueError naming a flag the core cannot honour, rather than dropping it.
    """
    flags = getattr(spec, "flags", 0)
    if isinstance(spec, re.Pattern):
        module, default = re, re.UNICODE  # set on every str pattern
    elif type(spec).__module__ == "_regex":
        import regex

        module, default = regex, regex.UNICODE | regex.VERSION0
    elif flags:
        raise ValueError(
            f"cannot read the flags of a {type(spec).__name__} pattern: compile it with re "
            "or regex, or write the flags into the pattern, as (?i)"
        )
    else:
        return pattern
    other = flags & ~default & ~sum(_INLINE_FLAGS)
    if other:
        names: dict[int, str] = {}  # each flag by its longest alias: ASCII, not A
        for name, value in vars(module).items():
            if isinstance(value, module.RegexFlag) and value & other:
                names[value] = max(names.get(value, ""), name, key=len)
        listed = ", ".join(f"{module.__name__}.{names[bit]}" for bit in sorted(names))
        raise ValueError(
            f"pre-tokenizer regex {pattern!r} is compiled with {listed}, which bytepair's "
            "regex engine does not support; supported flags: IGNORECASE, MULTILINE, DOTALL, "
            "VERBOSE"
        )
    inline = _LEADING_FLAGS.match(pattern).group()  # type: ignore[union-attr]
    missing = "".join(
        letter for flag, letter in _INLINE_FLAGS.items() if flags & flag and letter not in inline
    )
    return f"(?{missing}){pattern}" if missing else pattern


def _check_user_regex(pattern: str) -> None:
    """ValueError for a construct of a user pattern (fancy-regex syntax) that the
    reference, which runs it in Python's `regex`, cannot reproduce exactly."""
    from . import user_regex

    user_regex.check(pattern)


def resolve(spec: PretokenizerSpec) -> Pretokenizer:
    """Turn a user's pre-tokenizer argument into a :class:`Pretokenizer`."""
    if isinstance(spec, Pretokenizer):
        if spec.kind == "regex" and spec.pattern is not None:
            _check_user_regex(spec.pattern)
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
        pattern = _with_inline_flags(spec, pattern)
        for name, builtin in BUILTIN_PATTERNS.items():
            if builtin == pattern:
                return Pretokenizer(name, builtin)
        _check_user_regex(pattern)
        return Pretokenizer("regex", pattern)
    raise TypeError(
        f"pretokenizer must be a name ({', '.join(BUILTIN_PATTERNS)}) or a compiled regex, "
        f"not {type(spec).__name__}"
    )
