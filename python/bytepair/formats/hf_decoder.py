"""tokenizers' decoders, as a Unigram ``tokenizer.json`` names them: what each
:data:`~bytepair.formats.hf_unigram.DecoderStep` (read by
:func:`~bytepair.formats.hf_unigram.decoder_steps`) does to the tokens, in
tokenizers' order (each decoder's ``decode_chain`` in turn).

The core ports these steps for the usual decoders; this module runs the ones
it does not (a ``Replace`` with a regex) and the decodes that keep invalid
UTF-8 (``errors`` other than U+FFFD), and is the reading
:mod:`bytepair.reference.hf_unigram` decodes with.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Optional

from .. import user_regex
from .hf_regex import from_tokenizers
from .hf_unigram import (
    BYTE_FALLBACK,
    FUSE,
    DecoderStep,
    MetaspaceDecoder,
    Replace,
    StripDecoder,
)


def apply_replace(step: Replace, text: str) -> str:
    """A ``Replace`` step (normalizer or decoder) on ``text``."""
    if not step.regex:
        return text.replace(step.pattern, step.content)
    # The core runs the pattern with fancy-regex (replacing every match, as
    # its find_iter steps), so the reference runs fancy-regex's meaning too.
    pieces, end = [], 0
    for match in user_regex.compile(from_tokenizers(step.pattern)).finditer(text):
        pieces += [text[end : match.start()], step.content]
        end = match.end()
    return "".join(pieces) + text[end:]


# What ByteFallback reads as a byte: "<0x" + two bytes + ">", the two parsed as
# Rust's u8::from_str_radix(_, 16) does (an optional "+", then hex digits).
_BYTE_TOKEN = re.compile(r"<0x(\+?[0-9A-Fa-f]{1,2})>", re.ASCII)


def _byte_of_token(token: str) -> Optional[int]:
    if len(token.encode("utf-8")) != 6:
        return None
    found = _BYTE_TOKEN.fullmatch(token)
    return None if found is None else int(found.group(1), 16)


def _byte_fallback(tokens: list[str], errors: Optional[str]) -> list[str]:
    """A run of byte tokens becomes its text as one token when it is valid
    UTF-8, else one U+FFFD token per byte (``errors`` given: each byte its
    own token, decoded with ``errors``)."""
    out: list[str] = []
    run = bytearray()

    def flush() -> None:
        if not run:
            return
        try:
            out.append(run.decode("utf-8"))
        except UnicodeDecodeError:
            if errors is None:
                out.extend("\ufffd" * len(run))
            else:
                out.extend(bytes([byte]).decode("utf-8", errors=errors) for byte in run)
        run.clear()

    for token in tokens:
        byte = _byte_of_token(token)
        if byte is None:
            flush()
            out.append(token)
        else:
            run.append(byte)
    flush()
    return out


def _strip(step: StripDecoder, token: str) -> str:
    """tokenizers' Strip decoder, which panics (index out of bounds) when the
    token is shorter than ``stop`` and every character is ``content``, or
    when the ends it cuts overlap."""
    start_cut = 0
    for index, char in enumerate(token[: step.start]):
        if char != step.content:
            break
        start_cut = index + 1
    stop_cut = len(token)
    for back in range(step.stop):
        index = len(token) - back - 1
        if index < 0:
            raise ValueError(
                f"tokenizers' Strip decoder (stop={step.stop}) panics on the token {token!r}: "
                "it reads before its start"
            )
        if token[index] != step.content:
            break
        stop_cut = index
    if start_cut > stop_cut:
        raise ValueError(
            f"tokenizers' Strip decoder (start={step.start}, stop={step.stop}) panics on the "
            f"token {token!r}: the cuts of both ends overlap"
        )
    return token[start_cut:stop_cut]


def decode_chain(
    steps: Iterable[DecoderStep], tokens: list[str], errors: Optional[str]
) -> list[str]:
    """Each decoder's ``decode_chain`` in turn (tokens in, tokens out)."""
    for step in steps:
        if step == BYTE_FALLBACK:
            tokens = _byte_fallback(tokens, errors)
        elif step == FUSE:
            tokens = ["".join(tokens)]
        elif isinstance(step, MetaspaceDecoder):
            tokens = [
                token.replace(step.replacement, "" if n == 0 and step.prepend else " ")
                for n, token in enumerate(tokens)
            ]
        elif isinstance(step, Replace):
            tokens = [apply_replace(step, token) for token in tokens]
        elif isinstance(step, StripDecoder):
            tokens = [_strip(step, token) for token in tokens]
        else:
            raise ValueError(f"unknown decoder step {step!r}")
    return tokens


def decode_tokens(
    steps: Optional[list[DecoderStep]], tokens: list[str], errors: Optional[str] = None
) -> str:
    """:func:`decode` of the tokens, given the steps of the file's decoder
    (``formats.hf_unigram.decoder_steps``; None for none: the tokens joined
    by spaces)."""
    if steps is None:
        return " ".join(tokens)
    return "".join(decode_chain(steps, tokens, errors))


__all__ = ["apply_replace", "decode_chain", "decode_tokens"]
