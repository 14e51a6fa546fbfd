"""Optional normalization of text before pre-tokenization: NFC or
NFKC, then lowercase, for byte-level BPE.

It applies to the text between special tokens: those are found in the text as
given (as HuggingFace tokenizers treats added tokens that are not normalized),
and normalized text is never searched for them again. The core does the work,
as tokenizers' normalizers of those names do (so an exported ``tokenizer.json``
gives the same ids): lowercase maps each character on its own, with no context
rule, so a final Σ becomes σ where Python's ``str.lower()`` gives ς.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Union

FORMS = ("nfc", "nfkc")
NORMALIZATIONS = (*FORMS, "lowercase")

NormalizeSpec = Union[None, str, Iterable[str]]


def resolve_normalize(spec: NormalizeSpec) -> tuple[str, ...]:
    """``spec`` (None, one name, or names) as the canonical tuple: the form
    first, then ``"lowercase"``; ValueError naming what is wrong."""
    if spec is None:
        return ()
    if not isinstance(spec, str) and not isinstance(spec, Iterable):
        raise TypeError(
            f"normalize takes a name or names (str), not {type(spec).__name__}: use "
            f"{', '.join(NORMALIZATIONS)}"
        )
    names = [spec] if isinstance(spec, str) else list(spec)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"normalize takes names (str), not {type(name).__name__}")
        if name not in NORMALIZATIONS:
            raise ValueError(
                f"unknown normalization {name!r}: use {', '.join(NORMALIZATIONS)} "
                "(a form and lowercase may be combined)"
            )
    forms = [name for name in names if name in FORMS]
    if len(set(forms)) > 1:
        raise ValueError(f"normalize takes at most one of nfc and nfkc, not {forms}")
    return (*dict.fromkeys(forms), *(("lowercase",) if "lowercase" in names else ()))


def check_normalize_field(names: object, field: str) -> None:
    """A model's ``normalize`` (``field`` names it in errors): a tuple of
    names in the canonical order :func:`resolve_normalize` gives."""
    if not isinstance(names, tuple):
        raise TypeError(f"{field} must be a tuple, not {type(names).__name__}")
    try:
        canonical = resolve_normalize(names)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{field}: {error}") from None
    if canonical != names:
        raise ValueError(f"{field} must be {canonical!r} (the form first), not {names!r}")
