"""GPT-2's own files: ``vocab.json`` (``encoder.json``) and ``merges.txt`` (``vocab.bpe``).

``vocab.json`` maps each token's byte-level text to its id; ``merges.txt``
starts with ``#version: 0.2`` and then holds one merge per line, ``left right``
in byte-level text, in rank order. OpenAI published them as ``encoder.json``
and ``vocab.bpe``; a directory may hold either pair of names.

The pair records neither a pre-tokenizer (readers assume GPT-2's pattern) nor
which tokens are special. So only models with the ``gpt2`` pre-tokenizer (or
``r50k`` / ``p50k``, tiktoken's spelling of the same cut) are written, and on reading, a token that is neither a single byte nor the result
of some merge is special, written as its raw text: this is how GPT-2's
``<|endoftext|>`` (id 50256) is found. A truncated merges file, or one made
for another vocabulary, would turn thousands of ordinary tokens into specials
that way; so such a token is special only when its id is above those of all
bytes and merged tokens and its text is not two lower tokens joined (what a
missing merge leaves), or when its id is below them all (bytepair's own
layout, specials first). Anything else is a FormatError, and ``save`` refuses
a model that would read back as one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Optional, cast

from ..errors import FormatError
from ..model import BPEModel
from ..pretokenizers import BUILTIN_PATTERNS, Pretokenizer
from .byte_level import CHAR_BYTES, model_from_tables, model_to_tables
from .files import (
    GPT2_MERGES_FILE,
    GPT2_PAIRS,
    GPT2_VOCAB_FILE,
    PathLike,
    parse_json,
    read_text,
    write_texts_atomic,
)
from .merge_rules import natural_merges

FORMAT_NAME = "GPT-2 (vocab.json + merges.txt)"
# The pre-tokenizers readers of these files apply: GPT-2's pattern, and r50k's and
# p50k's (tiktoken's spelling of it, which cuts every text the same way).
PRETOKENIZER_KINDS = ("gpt2", "r50k", "p50k")
VERSION_LINE = "#version: 0.2"


def save(model: BPEModel, directory: PathLike) -> None:
    """Write ``directory/vocab.json`` and ``directory/merges.txt`` (each atomically).

    A model with tiktoken's rule (``merges`` None) is written as the merge
    list that encodes like it, which is exact when merging makes every token
    (true of OpenAI's vocabularies). ValueError, before anything is written,
    when the files could not give the model back: non-special added tokens, a
    normalization, another
    pre-tokenizer than ``gpt2``, a special token whose text is another token's byte-level text, a
    repeated merge, a token that is neither a byte, a merge result nor
    special (it would read back as special, and under tiktoken's rule only a
    whole-piece lookup, which the format has no way to ask for, gives it), or a
    special token that would read back as a missing merge (see the module
    docstring).
    """
    if model.added_tokens:
        raise ValueError(
            f"the GPT-2 format cannot record the non-special added tokens "
            f"{list(model.added_tokens)!r} (always cut out of the text; its readers would "
            "read them as special tokens): save it in the huggingface format"
        )
    stripping = sorted(text for text, strip in model.special_token_strip.items() if any(strip))
    if stripping:
        raise ValueError(
            f"the GPT-2 format cannot record that the special tokens {stripping!r} swallow the "
            "whitespace beside them (lstrip/rstrip): save it in the huggingface format"
        )
    if model.normalize:
        raise ValueError(
            f"the GPT-2 format cannot record the normalization {' + '.join(model.normalize)!r}: "
            "save it in the huggingface format"
        )
    if model.pretokenizer.kind not in PRETOKENIZER_KINDS:
        raise ValueError(
            f"the GPT-2 format cannot record the pre-tokenizer {model.pretokenizer.name!r} "
            "(readers always apply GPT-2's pattern); save with format='huggingface' instead"
        )
    merge_ids: Optional[Sequence[tuple[int, int]]] = model.merges
    if merge_ids is None:
        merge_ids, _ = natural_merges(model.tokens, model.special_tokens.values())
    vocab, merges = model_to_tables(model, FORMAT_NAME, merge_ids)
    made = {model.tokens[left] + model.tokens[right] for left, right in merge_ids}  # type: ignore[operator]
    special_ids = set(model.special_tokens.values())
    for token_id, token in enumerate(model.tokens):
        if token is None:
            continue
        if token_id not in special_ids and len(token) != 1 and token not in made:
            raise ValueError(
                f"cannot write the {FORMAT_NAME} format: token {token!r} (id {token_id}) is "
                "neither a single byte nor the result of a merge, and would read back as a "
                "special token; save with format='huggingface' instead"
            )
    made_keys = {line.replace(" ", "") for line in merges}  # byte-level text has no spaces
    wrong = _not_special(vocab, _unmade(vocab, made_keys))
    if wrong:
        key, token_id, reason = wrong[0]
        raise ValueError(
            f"cannot write the {FORMAT_NAME} format: special token {key!r} (id {token_id}) "
            f"would read back as a merge missing from merges.txt ({reason}); save with "
            "format='huggingface' instead"
        )
    vocab_text = json.dumps(vocab, ensure_ascii=False) + "\n"
    merges_text = "\n".join([VERSION_LINE, *merges]) + "\n"

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_texts_atomic(
        {directory / GPT2_VOCAB_FILE: vocab_text, directory / GPT2_MERGES_FILE: merges_text}
    )


def _read_merges(path: Path) -> tuple[list[tuple[str, str]], list[int]]:
    """The merges of ``merges.txt`` and the 1-based line number of each."""
    lines = read_text(path).split("\n")
    while lines and lines[-1].rstrip("\r") == "":
        lines.pop()  # the final newline, and any blank lines after the last merge
    pairs: list[tuple[str, str]] = []
    line_numbers: list[int] = []
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r")
        if number == 1 and line.startswith("#version"):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise FormatError(
                path,
                f"expected a merge, two tokens separated by one space; got {line!r}",
                f"line {number}",
            )
        pairs.append((parts[0], parts[1]))
        line_numbers.append(number)
    return pairs, line_numbers


def _unmade(vocab: Mapping[str, object], made: set[str]) -> dict[str, object]:
    """The tokens of ``vocab`` that are neither a single byte nor made by a merge."""
    return {
        key: token_id
        for key, token_id in vocab.items()
        if not (len(key) == 1 and key in CHAR_BYTES) and key not in made
    }


def _not_special(
    vocab: Mapping[str, object], unmade: Mapping[str, object]
) -> list[tuple[str, int, str]]:
    """(key, id, why) of each token of ``unmade`` that is no special token but a
    missing merge: its id lies among the merged tokens', or above them all while
    it joins two tokens of lower id. Ids that are not integers are skipped (the
    table check names them)."""
    ids = {
        key: value
        for key, value in vocab.items()
        if isinstance(value, int) and not isinstance(value, bool)
    }
    ordinary = [token_id for key, token_id in ids.items() if key not in unmade]
    if not ordinary:
        return []
    low, high = min(ordinary), max(ordinary)
    # A cut is tried only where both parts have the length of some key, so a
    # very long key costs no slicing at each of its characters.
    lengths = {len(key) for key in ids}
    found = []
    for key in unmade:
        token_id = ids.get(key)
        if token_id is None:
            continue
        if low < token_id < high:
            found.append((key, token_id, "its id lies among those of merged tokens"))
        elif token_id > high:
            for cut in range(1, len(key)):
                if cut not in lengths or len(key) - cut not in lengths:
                    continue
                left, right = ids.get(key[:cut]), ids.get(key[cut:])
                if left is not None and right is not None and max(left, right) < token_id:
                    joined = f"it joins {key[:cut]!r} and {key[cut:]!r} as a merge would"
                    found.append((key, token_id, joined))
                    break
    return found


def file_pair(directory: PathLike) -> tuple[Path, Path] | None:
    """The (vocabulary, merges) files in ``directory``: ``vocab.json`` + ``merges.txt``,
    else ``encoder.json`` + ``vocab.bpe``; None when neither pair is complete."""
    directory = Path(directory)
    for vocab_name, merges_name in GPT2_PAIRS:
        if (directory / vocab_name).is_file() and (directory / merges_name).is_file():
            return directory / vocab_name, directory / merges_name
    return None


def load(directory: PathLike) -> BPEModel:
    """Read ``directory/vocab.json`` and ``directory/merges.txt`` (or OpenAI's names
    for them, ``encoder.json`` and ``vocab.bpe``); pre-tokenizer ``gpt2``."""
    directory = Path(directory)
    vocab_path, merges_path = file_pair(directory) or (
        directory / GPT2_VOCAB_FILE,
        directory / GPT2_MERGES_FILE,
    )
    vocab = parse_json(read_text(vocab_path), str(vocab_path))
    if not isinstance(vocab, dict):
        raise FormatError(vocab_path, "expected a JSON object mapping tokens to ids", "top level")
    merges, line_numbers = _read_merges(merges_path)

    specials = _unmade(vocab, {left + right for left, right in merges})
    # A merge operand must itself be a byte or a merge result; said here in GPT-2's
    # terms rather than as "names a special token".
    for index, (left, right) in enumerate(merges):
        for part in (left, right):
            if part in specials:
                raise FormatError(
                    merges_path,
                    f"token {part!r} is neither a single byte nor the result of any merge",
                    f"line {line_numbers[index]}",
                )

    def vocab_error(problem: str, key: str | None) -> FormatError:
        return FormatError(vocab_path, problem, None if key is None else f"key {key!r}")

    def merge_error(problem: str, index: int) -> FormatError:
        return FormatError(merges_path, problem, f"line {line_numbers[index]}")

    model = model_from_tables(
        vocab,
        merges,
        cast("dict[str, int]", specials),  # ids as the vocabulary holds them, checked there
        Pretokenizer("gpt2", BUILTIN_PATTERNS["gpt2"]),
        vocab_error=vocab_error,
        merge_error=merge_error,
    )
    # After the table checks, which name a line or key when one is at fault.
    wrong = _not_special(vocab, specials)
    if wrong:
        key, token_id, reason = wrong[0]
        raise FormatError(
            merges_path,
            f"no merge makes {len(specials)} token{'s' * (len(specials) != 1)} of "
            f"{vocab_path.name}, and {len(wrong)} of them cannot be special tokens, e.g. "
            f"{key!r} (id {token_id}): {reason}; the "
            f"file's {len(merges)} merges look incomplete or made for another vocabulary",
        )
    return model
