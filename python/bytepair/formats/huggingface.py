"""HuggingFace ``tokenizer.json`` for byte-level BPE.

What we write is the file ``tokenizers`` itself writes for a GPT-2 style
tokenizer: no normalizer, a ByteLevel pre-tokenizer (preceded by a regex Split
when the pre-tokenizer is not GPT-2's), a BPE model over byte-level strings,
the special tokens as added tokens, and a ByteLevel decoder. Each special also
sits in the model vocabulary under its raw text, because ``tokenizers`` keeps a
special's id only when the model vocabulary holds it.

What we read is exactly that family. A component that would make
``tokenizers`` produce other ids than ours (a normalizer, a post-processor
that adds tokens, BPE-dropout, word prefixes/suffixes, ``add_prefix_space``,
non-special added tokens, ...) is a FormatError naming it: a file is read
exactly or not at all. Not yet read: Unigram models (SPEC §5).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..errors import FormatError
from ..model import BPEModel
from ..pretokenizers import BUILTIN_PATTERNS, Pretokenizer
from . import PathLike, parse_json, read_text, write_text_atomic
from .byte_level import model_from_tables, model_to_tables

FORMAT_NAME = "HuggingFace tokenizer.json"


# ---------------------------------------------------------------------------
# Writing


def _byte_level(use_regex: bool) -> dict[str, object]:
    return {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": use_regex,
    }


def _pretokenizer_to_json(pretokenizer: Pretokenizer) -> dict[str, object]:
    # ByteLevel's own regex is GPT-2's pattern; any other pattern is a Split in
    # front of a ByteLevel that only maps bytes to characters.
    if pretokenizer.kind == "gpt2":
        return _byte_level(use_regex=True)
    if pretokenizer.kind == "none":
        return _byte_level(use_regex=False)
    if not pretokenizer.pattern:
        raise ValueError(f"pre-tokenizer {pretokenizer.kind!r} has no pattern to write")
    split = {
        "type": "Split",
        "pattern": {"Regex": pretokenizer.pattern},
        "behavior": "Isolated",
        "invert": False,
    }
    return {"type": "Sequence", "pretokenizers": [split, _byte_level(use_regex=False)]}


def dumps(model: BPEModel) -> str:
    """The ``tokenizer.json`` text of ``model``.

    ValueError when the file cannot hold the model exactly: a special token's
    text equal to another token's byte-level text, or a repeated merge.
    """
    vocab, merges = model_to_tables(model, FORMAT_NAME)
    added_tokens = [
        {
            "id": token_id,
            "content": text,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for text, token_id in sorted(model.special_tokens.items(), key=lambda item: item[1])
    ]
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added_tokens,
        "normalizer": None,
        "pre_tokenizer": _pretokenizer_to_json(model.pretokenizer),
        "post_processor": None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": merges,
        },
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def save(model: BPEModel, path: PathLike) -> None:
    """Write ``model`` to the file ``path`` (atomically; the caller decides about overwriting)."""
    write_text_atomic(path, dumps(model))


# ---------------------------------------------------------------------------
# Reading


def _show(value: object) -> str:
    """A JSON value as it appears in the file, shortened for an error message."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


class _Reader:
    """Checks one document; every error names ``source`` and the JSON place."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, problem: str, where: str | None) -> FormatError:
        return FormatError(self.source, problem, where)

    def unsupported(self, where: str, value: object, why: str) -> FormatError:
        return self.error(f"{where} {_show(value)} is not supported: {why}", where)

    def object_at(self, value: object, where: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(f"expected a JSON object, got {_show(value)}", where)
        return value

    def require(self, obj: Mapping[str, object], key: str, where: str) -> object:
        if key not in obj:
            raise self.error(f"missing key {key!r}", where)
        return obj[key]

    # -- components that must be absent or inert ---------------------------

    def check_top_level(self, document: Mapping[str, object]) -> None:
        version = document.get("version", "1.0")
        if version != "1.0":
            raise self.unsupported("version", version, 'only version "1.0" is known')
        for key in ("truncation", "padding"):
            if document.get(key) is not None:
                raise self.unsupported(key, document[key], "it changes the ids encode returns")
        if document.get("normalizer") is not None:
            raise self.unsupported(
                "normalizer", document["normalizer"], "bytepair reads byte-level BPE without one"
            )
        post_processor = document.get("post_processor")
        # ByteLevel post-processing only trims offsets; any other adds or moves tokens.
        if post_processor is not None and not (
            isinstance(post_processor, dict) and post_processor.get("type") == "ByteLevel"
        ):
            raise self.unsupported(
                "post_processor", post_processor, "it adds tokens that bytepair's encode does not"
            )
        decoder = document.get("decoder")
        if decoder is not None and not (
            isinstance(decoder, dict) and decoder.get("type") == "ByteLevel"
        ):
            raise self.unsupported(
                "decoder", decoder, "byte-level BPE decodes by joining token bytes (ByteLevel)"
            )

    def byte_level_uses_regex(self, step: Mapping[str, object], where: str) -> bool:
        add_prefix_space = self.require(step, "add_prefix_space", where)
        if add_prefix_space is not False:
            raise self.unsupported(
                f"{where}.add_prefix_space",
                add_prefix_space,
                "bytepair never inserts a space in front of the text",
            )
        use_regex = step.get("use_regex", True)  # older files omit it; tokenizers' default
        if not isinstance(use_regex, bool):
            raise self.error(
                f"expected true or false, got {_show(use_regex)}", f"{where}.use_regex"
            )
        return use_regex

    def pretokenizer(self, value: object) -> Pretokenizer:
        where = "pre_tokenizer"
        if value is None:
            raise self.unsupported(where, value, "byte-level BPE needs a ByteLevel pre-tokenizer")
        step = self.object_at(value, where)
        kind = step.get("type")
        if kind == "ByteLevel":
            if self.byte_level_uses_regex(step, where):
                return Pretokenizer("gpt2", BUILTIN_PATTERNS["gpt2"])
            return Pretokenizer("none", None)
        steps = step.get("pretokenizers")
        if not (
            kind == "Sequence"
            and isinstance(steps, list)
            and len(steps) == 2
            and all(isinstance(s, dict) for s in steps)
            and steps[0].get("type") == "Split"
            and steps[1].get("type") == "ByteLevel"
        ):
            raise self.unsupported(
                where,
                value,
                "bytepair reads ByteLevel, or a Sequence of a regex Split then ByteLevel",
            )
        split, byte_level = steps
        split_where = f"{where}.pretokenizers[0]"
        pattern = split.get("pattern")
        if not (
            isinstance(pattern, dict)
            and list(pattern) == ["Regex"]
            and isinstance(pattern["Regex"], str)
            and pattern["Regex"]
        ):
            raise self.unsupported(
                f"{split_where}.pattern", pattern, 'expected {"Regex": "<non-empty pattern>"}'
            )
        if split.get("behavior") != "Isolated":
            raise self.unsupported(
                f"{split_where}.behavior",
                split.get("behavior"),
                'bytepair keeps every match and every gap as a piece ("Isolated")',
            )
        if split.get("invert", False) is not False:
            raise self.unsupported(f"{split_where}.invert", split.get("invert"), "expected false")
        if self.byte_level_uses_regex(byte_level, f"{where}.pretokenizers[1]"):
            raise self.unsupported(
                f"{where}.pretokenizers[1].use_regex",
                True,
                "a second regex after the Split would cut pieces again",
            )
        regex = pattern["Regex"]
        for name, builtin in BUILTIN_PATTERNS.items():
            if builtin == regex:
                return Pretokenizer(name, builtin)
        return Pretokenizer("regex", regex)

    def check_model_options(self, model: Mapping[str, object]) -> None:
        kind = model.get("type", "BPE")  # files written by older tokenizers omit it
        if kind != "BPE":
            raise self.unsupported("model.type", kind, "bytepair reads BPE models")
        if model.get("dropout") is not None:
            raise self.unsupported("model.dropout", model["dropout"], "BPE-dropout is not read")
        # Empty strings are how older files say "no prefix / suffix".
        for key in ("continuing_subword_prefix", "end_of_word_suffix"):
            if model.get(key) not in (None, ""):
                raise self.unsupported(f"model.{key}", model[key], "byte-level BPE has none")
        for key in ("byte_fallback", "ignore_merges"):
            if model.get(key, False) is not False:
                raise self.unsupported(f"model.{key}", model[key], "expected false")
        # unk_token and fuse_unk are inert: every byte is in the vocabulary (checked
        # below), so a byte-level model never meets an unknown symbol.

    # -- the vocabulary ----------------------------------------------------

    def special_tokens(self, value: object) -> dict[str, int]:
        if not isinstance(value, list):
            raise self.error(f"expected a list, got {_show(value)}", "added_tokens")
        specials: dict[str, int] = {}
        ids: set[int] = set()
        for index, entry in enumerate(value):
            where = f"added_tokens[{index}]"
            entry = self.object_at(entry, where)
            token_id = self.require(entry, "id", where)
            content = self.require(entry, "content", where)
            if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
                raise self.error(f"id {_show(token_id)} is not a non-negative integer", where)
            if not isinstance(content, str) or not content:
                raise self.error(f"content {_show(content)} is not a non-empty string", where)
            label = f"added token {content!r} (id {token_id})"
            if entry.get("special", False) is not True:
                raise self.error(
                    f"{label} is not special; bytepair reads only special added tokens",
                    f"{where}.special",
                )
            for option in ("single_word", "lstrip", "rstrip"):
                if entry.get(option, False) is not False:
                    raise self.error(
                        f"{label} has {option} {_show(entry[option])}, which is not supported: "
                        "bytepair matches special tokens exactly",
                        f"{where}.{option}",
                    )
            # "normalized" is inert: there is no normalizer.
            if content in specials:
                raise self.error(f"special token {content!r} is listed twice", where)
            if token_id in ids:
                raise self.error(f"id {token_id} is given to two added tokens", where)
            specials[content] = token_id
            ids.add(token_id)
        return specials

    def merges(self, value: object) -> list[tuple[str, str]]:
        if not isinstance(value, list):
            raise self.error(f"expected a list, got {_show(value)}", "model.merges")
        pairs = []
        for index, merge in enumerate(value):
            parts = merge.split(" ") if isinstance(merge, str) else merge
            if not (
                isinstance(parts, list)
                and len(parts) == 2
                and all(isinstance(p, str) and p for p in parts)
            ):
                raise self.error(
                    f'a merge is two tokens, as "left right" or ["left", "right"]; '
                    f"got {_show(merge)}",
                    f"model.merges, merge {index + 1}",
                )
            pairs.append((parts[0], parts[1]))
        return pairs

    def model(self, document: Mapping[str, object]) -> BPEModel:
        self.check_top_level(document)
        pretokenizer = self.pretokenizer(document.get("pre_tokenizer"))
        model = self.object_at(self.require(document, "model", "top level"), "model")
        self.check_model_options(model)
        vocab = self.object_at(self.require(model, "vocab", "model"), "model.vocab")
        merges = self.merges(self.require(model, "merges", "model"))
        specials = self.special_tokens(document.get("added_tokens", []))

        # A special outside the model vocabulary keeps its added-token id; together
        # the ids must still be dense, so such an id can only extend the vocabulary.
        outside = {text: i for text, i in specials.items() if text not in vocab}
        total = len(vocab) + len(outside)
        for text, token_id in outside.items():
            if token_id >= total:
                raise self.error(
                    f"id {token_id} is beyond the vocabulary: {len(vocab)} model tokens and "
                    f"{len(outside)} added outside them make ids 0..{total - 1}",
                    f"added_tokens (id {token_id}, {text!r})",
                )

        def vocab_error(problem: str, key: str | None) -> FormatError:
            if key is None:
                return self.error(problem, "model.vocab")
            if key in outside:
                return self.error(problem, f"added_tokens (id {outside[key]}, {key!r})")
            return self.error(problem, f"model.vocab key {key!r}")

        def merge_error(problem: str, index: int) -> FormatError:
            return self.error(problem, f"model.merges, merge {index + 1}")

        return model_from_tables(
            {**vocab, **outside},
            merges,
            specials,
            pretokenizer,
            vocab_error=vocab_error,
            merge_error=merge_error,
        )


def loads(text: str, source: str = "<string>") -> BPEModel:
    """Read a ``tokenizer.json`` text; ``source`` names it in errors (usually its path)."""
    reader = _Reader(source)
    document = reader.object_at(parse_json(text, source), "top level")
    return reader.model(document)


def load(path: PathLike) -> BPEModel:
    """Read the ``tokenizer.json`` file at ``path``."""
    return loads(read_text(path), str(path))
