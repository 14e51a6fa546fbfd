"""HuggingFace ``tokenizer.json`` for byte-level BPE.

What we write is the file ``tokenizers`` itself writes for a GPT-2 style
tokenizer: no normalizer (NFC / NFKC / Lowercase for ``normalize``), a
ByteLevel pre-tokenizer (preceded by a regex Split when the pre-tokenizer is
not GPT-2's), a BPE model over byte-level strings, the special tokens as
added tokens (``"special": true``; the model's ``added_tokens`` with
``"special": false``), and a ByteLevel decoder. Each special also sits in the model
vocabulary under its raw text, because ``tokenizers`` keeps a special's id
only when the model vocabulary holds it. A Split regex is written in the
dialect of ``tokenizers``' regex engine (Oniguruma; see :mod:`.hf_regex`),
and a model with tiktoken's ranking rule as the merge list
that encodes like it plus ``ignore_merges`` (see :mod:`.merge_rules`).

What we read is exactly that family, from whatever wrote it (GPT-2, RoBERTa,
Llama-3 and Qwen2 style files): ByteLevel alone, or a regex Split then
ByteLevel, vocabularies with unused ids, added tokens anywhere, and
``ignore_merges`` when it is provably inert or provably tiktoken's rule.
Added tokens with ``"special": false`` (GPT-NeoX / Pythia's runs of spaces,
Qwen2's ``<tool_call>``) become the model's ``added_tokens``: tokenizers cuts
them out of the text in every encode and keeps them in every decode, and so
does bytepair; two kinds are refused because tokenizers would not give their
text back (one whose text is byte-level text of other bytes, such as ``é``
or ``Ġhi``, which its ByteLevel decoder turns into those bytes) or would cut
it only between words (``single_word``). Two
things load with a warning, since they only matter outside what bytepair's
encode does: a post-processor that adds tokens (bytepair's encode is
``encode(text, add_special_tokens=False)``, like tiktoken's) and a special
token's ``single_word`` (it only acts where the special is allowed in the
text). An added token's ``lstrip``/``rstrip`` are read and applied, and so is a
normalizer that is NFC or NFKC and/or Lowercase (Qwen2's NFC). Beside such a
normalizer, an added token with ``normalized`` true (tokenizers finds it in the
normalized text, bytepair in the text as given) is read only when the
normalizer can neither make, change nor join any of its characters (GPT-NeoX's
runs of spaces under NFC), so that both find it in the same places. Anything
else that would make ``tokenizers`` give other ids than ours (another normalizer,
BPE-dropout, byte fallback, word prefixes/suffixes,
``add_prefix_space``, Metaspace, a regex the engines read differently, ...)
is a FormatError naming it: a file is read
exactly or not at all. Unigram models are read by :mod:`.hf_unigram`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import unicodedata
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Optional, cast

from .. import _native
from ..errors import FormatError, warn
from ..model import BPEModel
from ..normalization import resolve_normalize
from ..pretokenizers import BUILTIN_PATTERNS, Pretokenizer
from .byte_level import CHAR_BYTES, model_from_tables, model_to_tables, unicode_text_to_bytes
from .files import PathLike, decode_text, parse_json, write_text_atomic
from .hf_regex import UnsupportedPattern, from_tokenizers, to_tokenizers
from .merge_rules import follows_tiktoken_rule, natural_merges, not_made_by_merges

FORMAT_NAME = "HuggingFace tokenizer.json"


# ---------------------------------------------------------------------------
# Regex Split patterns


def split_pattern(pretokenizer: Pretokenizer) -> str:
    """The ``Split`` regex (Oniguruma dialect) for a pre-tokenizer with a pattern.

    UnsupportedPattern when tokenizers' engine cannot be made to cut the same.
    """
    assert pretokenizer.pattern is not None
    pattern = to_tokenizers(pretokenizer.pattern)
    if pretokenizer.kind == "p50k":
        # p50k's regex is r50k's; a spelling of its own keeps the name on a round trip.
        pattern = f"(?:{pattern})"
    return pattern


_builtin_spellings: dict[str, str] = {}


def _builtin_named(regex: str) -> str | None:
    """The builtin pre-tokenizer whose Split regex is ``regex``, if any."""
    if not _builtin_spellings:
        for name, pattern in BUILTIN_PATTERNS.items():
            if pattern is not None:
                _builtin_spellings.setdefault(split_pattern(Pretokenizer(name, pattern)), name)
    return _builtin_spellings.get(regex)


def lookup_clashes(model_specials: Mapping[str, int]) -> list[str]:
    """Special tokens that ``ignore_merges`` would give to ordinary text.

    With ``ignore_merges`` tokenizers looks each piece's byte-level text up in
    the whole model vocabulary, specials included. A special whose text is
    itself byte-level text of *other* (valid UTF-8) text, such as ``"Ġhi"``
    for " hi", would then be returned for that text.
    """
    clashes = []
    for text in model_specials:
        if all(char in CHAR_BYTES for char in text):
            try:
                decoded = unicode_text_to_bytes(text).decode("utf-8")
            except UnicodeDecodeError:
                continue
            if decoded != text:
                clashes.append(text)
    return clashes


# ---------------------------------------------------------------------------
# Writing


def _byte_level(use_regex: bool) -> dict[str, object]:
    return {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": use_regex,
    }


# tokenizers' normalizers that do what bytepair's normalize names do.
_NORMALIZER_NAMES = {"NFC": "nfc", "NFKC": "nfkc", "Lowercase": "lowercase"}


def normalizer_to_json(normalize: tuple[str, ...]) -> Optional[dict[str, object]]:
    """The ``normalizer`` entry for ``normalize`` (None for none)."""
    types = {name: type_ for type_, name in _NORMALIZER_NAMES.items()}
    steps: list[dict[str, object]] = [{"type": types[name]} for name in normalize]
    if len(steps) < 2:
        return steps[0] if steps else None
    return {"type": "Sequence", "normalizers": steps}


def pretokenizer_to_json(pretokenizer: Pretokenizer) -> dict[str, object]:
    """The ``pre_tokenizer`` entry of ``tokenizer.json`` for ``pretokenizer``;
    ValueError when tokenizers' regex engine would cut text differently (the
    CLI checks this before training)."""
    # ByteLevel's own regex is GPT-2's pattern; any other pattern is a Split in
    # front of a ByteLevel that only maps bytes to characters.
    if pretokenizer.kind == "gpt2":
        return _byte_level(use_regex=True)
    if pretokenizer.kind == "none":
        return _byte_level(use_regex=False)
    if not pretokenizer.pattern:
        raise ValueError(f"pre-tokenizer {pretokenizer.kind!r} has no pattern to write")
    try:
        regex = split_pattern(pretokenizer)
    except UnsupportedPattern as exc:
        raise ValueError(
            f"cannot write the {FORMAT_NAME} format: the pre-tokenizer pattern "
            f"{pretokenizer.pattern!r} cannot be written so that tokenizers' regex engine "
            f"(Oniguruma) cuts text the same way: {exc}"
        ) from None
    split = {
        "type": "Split",
        "pattern": {"Regex": regex},
        "behavior": "Isolated",
        "invert": False,
    }
    return {"type": "Sequence", "pretokenizers": [split, _byte_level(use_regex=False)]}


def decoded_otherwise(text: str) -> bool:
    """Whether tokenizers' ByteLevel decoder gives other bytes than the UTF-8 of
    ``text`` for an added token: it maps a token whose characters are all in
    the byte-level alphabet character by character (``"é"`` -> the byte 0xE9,
    ``"Ġhi"`` -> ``b" hi"``) and keeps any other token's UTF-8."""
    if not all(char in CHAR_BYTES for char in text):
        return False
    return unicode_text_to_bytes(text) != text.encode("utf-8")


def dumps(model: BPEModel) -> str:
    """The ``tokenizer.json`` text of ``model``.

    A model with tiktoken's rule (``merges`` None) is written as the merge
    list that encodes exactly like it, with ``ignore_merges`` for its
    whole-piece lookup. ValueError when the file cannot hold the model
    exactly: a special token's text equal to another token's byte-level text,
    a repeated merge, a pattern tokenizers' engine reads differently, or (for
    tiktoken's rule) a special token the whole-piece lookup would return for
    ordinary text, or an added token that tokenizers would decode to other
    bytes (:func:`decoded_otherwise`).
    """
    decoded = [text for text in model.added_tokens if decoded_otherwise(text)]
    if decoded:
        raise ValueError(
            f"cannot write the {FORMAT_NAME} format: tokenizers' ByteLevel decoder would turn "
            f"the added tokens {decoded!r} into other bytes than their text (each character "
            "of GPT-2's byte-level alphabet stands for one byte)"
        )
    merges = None
    ignore_merges = model.merges is None
    if ignore_merges:
        clashes = lookup_clashes(model.special_tokens)
        if clashes:
            raise ValueError(
                f"cannot write the {FORMAT_NAME} format: the special tokens {clashes!r} are "
                "byte-level text of other text, which tokenizers' whole-piece lookup "
                "(ignore_merges, needed for tiktoken's rule) would turn into the special token"
            )
        merges, _ = natural_merges(model.tokens, model.special_tokens.values())
    pre_tokenizer = pretokenizer_to_json(model.pretokenizer)
    vocab, merge_lines = model_to_tables(model, FORMAT_NAME, merges)
    added = set(model.added_tokens)
    added_tokens = [
        {
            "id": token_id,
            "content": text,
            "single_word": False,
            "lstrip": model.special_token_strip.get(text, (False, False))[0],
            "rstrip": model.special_token_strip.get(text, (False, False))[1],
            "normalized": False,  # found in the text as given, as bytepair does
            "special": text not in added,
        }
        for text, token_id in sorted(model.special_tokens.items(), key=lambda item: item[1])
    ]
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added_tokens,
        "normalizer": normalizer_to_json(model.normalize),
        "pre_tokenizer": pre_tokenizer,
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
            "ignore_merges": ignore_merges,
            "vocab": vocab,
            "merges": merge_lines,
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


def _single_step(value: object, key: str) -> object:
    """The one step of a ``Sequence`` of one step (which does what the step does);
    anything else as it is."""
    if isinstance(value, dict) and value.get("type") == "Sequence":
        steps = value.get(key)
        if isinstance(steps, list) and len(steps) == 1:
            return steps[0]
    return value


def _type_of(value: object) -> str:
    return str(value.get("type")) if isinstance(value, dict) else _show(value)


# Post-processors that only add tokens around a sequence (when tokenizers encodes with
# add_special_tokens=True); ByteLevel post-processing only trims offsets.
_ADDING_POST_PROCESSORS = ("RobertaProcessing", "BertProcessing", "TemplateProcessing")


def _overlap(a: str, b: str) -> bool:
    """Whether occurrences of ``a`` and ``b`` can overlap in a text."""
    if a in b or b in a:
        return True
    return any(a.endswith(b[:k]) or b.endswith(a[:k]) for k in range(1, min(len(a), len(b))))


@functools.lru_cache(maxsize=8)
def _unstable_chars(normalize: tuple[str, ...]) -> frozenset[str]:
    """The characters that ``normalize`` may make, change or join to a neighbour.

    A character outside this set has no decomposition and combining class 0,
    is part of no other character's decomposition (so never composes with
    anything, and is never made from another character) and is its own
    lowercase and no other character's (when lowercasing). Such characters are
    kept one for one, in place, by the normalizer, and it normalizes the text
    on either side of them independently: a token made of them occurs in the
    normalized text exactly where it occurs in the text as given. Computed
    from Python's ``unicodedata`` over every code point (once, about a second).
    """
    compatibility = "nfkc" in normalize
    lowercase = "lowercase" in normalize
    unstable: set[str] = set()
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        changed = []
        if "nfc" in normalize or compatibility:
            if unicodedata.combining(char):
                unstable.add(char)
            decomposed = unicodedata.normalize("NFKD" if compatibility else "NFD", char)
            if decomposed != char:
                changed.append(decomposed)
        if lowercase:
            lowered = char.lower()
            if lowered != char:
                changed.append(lowered)
        if changed:
            unstable.add(char)
            unstable.update(*changed)
    return frozenset(unstable)


class _Reader:
    """Checks one document; every error names ``source`` and the JSON place."""

    def __init__(self, source: str) -> None:
        self.source = source
        # Special text -> (lstrip, rstrip), for the specials that swallow whitespace.
        self.special_strip: dict[str, tuple[bool, bool]] = {}
        # The added tokens with "special": false, in file order.
        self.added: list[str] = []

    def error(self, problem: str, where: str | None) -> FormatError:
        return FormatError(self.source, problem, where)

    def unsupported(self, where: str, value: object, why: str) -> FormatError:
        return self.error(f"{where} {_show(value)} is not supported: {why}", where)

    def warn(self, message: str) -> None:
        warn(f"{self.source}: {message}")

    def object_at(self, value: object, where: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(f"expected a JSON object, got {_show(value)}", where)
        return value

    def require(self, obj: Mapping[str, object], key: str, where: str) -> object:
        if key not in obj:
            raise self.error(f"missing key {key!r}", where)
        return obj[key]

    def require_flag(self, obj: Mapping[str, object], key: str, where: str) -> bool:
        flag = self.require(obj, key, where)
        if not isinstance(flag, bool):
            raise self.error(f"expected true or false, got {_show(flag)}", f"{where}.{key}")
        return flag

    # -- components that must be absent or inert ---------------------------

    def check_top_level(self, document: Mapping[str, object]) -> None:
        version = document.get("version", "1.0")
        if version != "1.0":
            raise self.unsupported("version", version, 'only version "1.0" is known')
        for key in ("truncation", "padding"):
            if document.get(key) is not None:
                raise self.unsupported(key, document[key], "it changes the ids encode returns")

    def normalizer(self, value: object) -> tuple[str, ...]:
        """The normalization a ``normalizer`` entry does: none, NFC or NFKC,
        Lowercase, or a Sequence of a form then Lowercase (what bytepair's
        ``normalize`` does); anything else changes the text otherwise."""
        if value is None:
            return ()
        steps = value.get("normalizers") if isinstance(value, dict) else None
        if isinstance(value, dict) and value.get("type") == "Sequence" and steps == []:
            return ()  # an empty Sequence changes nothing
        if isinstance(value, dict) and value.get("type") == "Sequence" and isinstance(steps, list):
            names = [_NORMALIZER_NAMES.get(_type_of(step)) for step in steps]
        else:
            names = [_NORMALIZER_NAMES.get(_type_of(value))]
        if None not in names and names:
            try:
                normalize = resolve_normalize(cast("list[str]", names))  # no None in it
            except ValueError:
                normalize = ()
            if list(normalize) == names:
                return normalize
        raise self.unsupported(
            "normalizer",
            value,
            f"a {_type_of(value)} normalizer changes the text otherwise than bytepair's "
            "normalize (NFC or NFKC, then Lowercase)",
        )

    def check_post_processor(self, value: object) -> None:
        adding = self.post_processor_steps(value, "post_processor")
        if adding:
            self.warn(
                f"post_processor {' + '.join(adding)} adds special tokens when tokenizers encodes "
                "with add_special_tokens=True (its default); bytepair never adds them: its "
                "encode gives the ids of tokenizers' encode(text, add_special_tokens=False)"
            )

    def post_processor_steps(self, value: object, where: str) -> list[str]:
        """The post-processors in ``value`` that add tokens; FormatError on an unknown one."""
        if value is None:
            return []
        step = self.object_at(value, where)
        kind = step.get("type")
        if kind == "ByteLevel":
            return []
        if kind == "Sequence":
            steps = step.get("processors")
            if not isinstance(steps, list):
                raise self.error(f"expected a list, got {_show(steps)}", f"{where}.processors")
            found: list[str] = []
            for index, inner in enumerate(steps):
                found += self.post_processor_steps(inner, f"{where}.processors[{index}]")
            return found
        if kind == "TemplateProcessing":
            single = step.get("single")
            if isinstance(single, list) and all(
                isinstance(item, dict) and "Sequence" in item for item in single
            ):
                return []  # the single-sequence template adds nothing
            return [str(kind)]
        if kind in _ADDING_POST_PROCESSORS:
            return [str(kind)]
        raise self.unsupported(
            where,
            value,
            "bytepair knows the post-processors ByteLevel, RobertaProcessing, BertProcessing, "
            "TemplateProcessing and Sequence",
        )

    def check_decoder(self, value: object) -> None:
        if value is None:
            raise self.unsupported(
                "decoder",
                value,
                "without one, tokenizers decodes to the tokens' byte-level strings joined by "
                "spaces, not to the text; bytepair decodes by joining token bytes (ByteLevel)",
            )
        value = _single_step(value, "decoders")
        if _type_of(value) != "ByteLevel":
            raise self.unsupported(
                "decoder",
                value,
                f"a {_type_of(value)} decoder is not byte-level BPE's; bytepair decodes by "
                "joining token bytes (ByteLevel)",
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
            raise self.unsupported(
                where,
                value,
                "byte-level BPE needs a ByteLevel pre-tokenizer (without one tokenizers looks "
                "characters, not bytes, up in the vocabulary)",
            )
        step = self.object_at(_single_step(value, "pretokenizers"), where)
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
            kinds = (
                [_type_of(s) for s in steps]
                if kind == "Sequence" and isinstance(steps, list)
                else None
            )
            found = f"a Sequence of {kinds}" if kinds is not None else f"{kind!r}"
            raise self.unsupported(
                where,
                value,
                f"bytepair reads ByteLevel, or a Sequence of a regex Split then ByteLevel; "
                f"found {found}",
            )
        split, byte_level = steps
        split_where = f"{where}.pretokenizers[0]"
        pattern = split.get("pattern")
        if (
            isinstance(pattern, dict)
            and list(pattern) == ["String"]
            and isinstance(pattern["String"], str)
            and pattern["String"]
        ):
            # A literal: the regex of its characters, each one escaped.
            pattern = {"Regex": "".join(f"\\x{{{ord(c):X}}}" for c in pattern["String"])}
        if not (
            isinstance(pattern, dict)
            and list(pattern) == ["Regex"]
            and isinstance(pattern["Regex"], str)
            and pattern["Regex"]
        ):
            raise self.unsupported(
                f"{split_where}.pattern",
                pattern,
                'expected {"Regex": "<non-empty pattern>"} or {"String": "<non-empty text>"}',
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
        name = _builtin_named(regex)
        if name is not None:
            return Pretokenizer(name, BUILTIN_PATTERNS[name])
        try:
            translated = from_tokenizers(regex)
        except UnsupportedPattern as exc:
            raise self.error(
                f"the Split regex {regex!r} cannot be run exactly as tokenizers runs it "
                f"(Oniguruma; bytepair runs Rust's fancy-regex): {exc}",
                f"{split_where}.pattern.Regex",
            ) from None
        for name, builtin in BUILTIN_PATTERNS.items():
            if builtin == translated:
                return Pretokenizer(name, builtin)
        return Pretokenizer("regex", translated)

    def check_model_options(self, model: Mapping[str, object]) -> bool:
        """Checks the BPE options; returns ``ignore_merges``."""
        kind = model.get("type")
        told = ""
        if kind is None:
            # Files written by older tokenizers omit the type; tell it as tokenizers does.
            told = " (the file gives no type; told by its keys)"
            if "merges" in model:
                kind = "BPE"
            elif isinstance(model.get("vocab"), list) or "unk_id" in model:
                kind = "Unigram"
            elif "max_input_chars_per_word" in model:
                kind = "WordPiece"
            else:
                kind = "WordLevel"
        if kind == "Unigram":
            raise UnigramFile(self.source, told)
        if kind != "BPE":
            raise self.error(
                f"model.type {_show(kind)}{told} is not supported: bytepair reads byte-level "
                "BPE models (not Unigram, WordPiece or WordLevel)",
                "model.type",
            )
        if model.get("dropout") is not None:
            raise self.unsupported(
                "model.dropout", model["dropout"], "BPE-dropout makes encoding random"
            )
        if model.get("byte_fallback", False) is not False:
            raise self.unsupported(
                "model.byte_fallback",
                model["byte_fallback"],
                "byte fallback (<0x..> tokens for unknown characters) belongs to "
                "SentencePiece-style BPE over characters, not byte-level BPE",
            )
        # Empty strings are how older files say "no prefix / suffix".
        for key in ("continuing_subword_prefix", "end_of_word_suffix"):
            if model.get(key) not in (None, ""):
                raise self.unsupported(f"model.{key}", model[key], "byte-level BPE has none")
        ignore_merges = model.get("ignore_merges", False)
        if not isinstance(ignore_merges, bool):
            raise self.error(
                f"expected true or false, got {_show(ignore_merges)}", "model.ignore_merges"
            )
        # unk_token and fuse_unk are inert: every byte is in the vocabulary (checked
        # below), so a byte-level model never meets an unknown symbol.
        return ignore_merges

    # -- the vocabulary ----------------------------------------------------

    def special_tokens(self, value: object, vocab: Mapping[str, object]) -> dict[str, int]:
        """The added tokens (special or not: the non-special ones are also
        listed in ``self.added``), with the ids tokenizers gives them."""
        if not isinstance(value, list):
            raise self.error(f"expected a list, got {_show(value)}", "added_tokens")
        specials: dict[str, int] = {}
        normalized: dict[str, bool] = {}
        stripping: list[str] = []
        # tokenizers numbers an added token outside the model vocabulary itself,
        # ignoring the file's id: from the vocabulary's size up, in file order.
        model_size = len(vocab)
        assigned: list[int] = []
        for index, entry in enumerate(value):
            where = f"added_tokens[{index}]"
            entry = self.object_at(entry, where)
            token_id = self.require(entry, "id", where)
            content = self.require(entry, "content", where)
            if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
                raise self.error(f"id {_show(token_id)} is not a non-negative integer", where)
            if not isinstance(content, str) or not content:
                raise self.error(f"content {_show(content)} is not a non-empty string", where)
            try:
                content.encode("utf-8")  # (before the native vocabulary, which takes UTF-8)
            except UnicodeEncodeError as exc:
                raise self.error(
                    f"content {content!r} holds the lone surrogate "
                    f"{content[exc.start]!r} at position {exc.start}, which is not Unicode "
                    "text and has no UTF-8 bytes",
                    where,
                ) from None
            label = f"added token {content!r} (id {token_id})"
            # tokenizers refuses an entry without it; taken as false, a special
            # token would silently become an ordinary added one.
            special = self.require_flag(entry, "special", where)
            # tokenizers refuses an entry without any of these too; read as
            # false, a typo ("true" as a string) would silently change the ids.
            single_word, lstrip, rstrip, normalizes = (
                self.require_flag(entry, key, where)
                for key in ("single_word", "lstrip", "rstrip", "normalized")
            )
            if content in specials:
                raise self.error(f"special token {content!r} is listed twice", where)
            if not special:
                if decoded_otherwise(content):
                    raise self.error(
                        f"{label} is not special, so tokenizers' decode keeps it, and its "
                        "ByteLevel decoder turns it into "
                        f"{unicode_text_to_bytes(content)!r} (its characters are GPT-2's "
                        "byte-level alphabet), not its text: bytepair cannot give both",
                        where,
                    )
                if single_word:
                    raise self.unsupported(
                        f"{where}.single_word",
                        single_word,
                        f"{label} is not special, so tokenizers cuts it out in every encode, "
                        "but with single_word only where it is a whole word; bytepair cuts "
                        "it out everywhere",
                    )
                self.added.append(content)
            if content in vocab:
                expected = vocab[content]
            elif assigned and max(assigned) >= model_size:
                expected = max(assigned) + 1
            else:
                expected = model_size
            if expected != token_id:
                if content in vocab:
                    problem = (
                        f"special token {content!r} has id {token_id} in the added tokens but "
                        f"id {expected} in the vocabulary"
                    )
                else:
                    problem = (
                        f"{label} is not in model.vocab, so tokenizers gives it id {expected}, "
                        f"not {token_id}: it numbers such tokens from the vocabulary's size "
                        f"({model_size}) up, in file order"
                    )
                raise self.error(problem, where)
            if single_word:
                stripping.append(f"{content!r} single_word")
            if lstrip or rstrip:
                self.special_strip[content] = (lstrip, rstrip)
            normalized[content] = normalizes
            specials[content] = token_id
            assigned.append(token_id)
        if stripping:
            self.warn(
                f"special tokens with {', '.join(stripping)}: bytepair does not check "
                "single_word, so where such a token is allowed in the text it is cut out even "
                "inside a word; text without the special token encodes the same"
            )
        self.check_special_passes(specials, normalized)
        self.normalized_specials = [t for t in specials if normalized[t]]
        return specials

    def check_normalized_specials(self, normalize: tuple[str, ...]) -> None:
        """With a normalizer, tokenizers finds an added token with ``normalized``
        true in the normalized text, bytepair in the text as given: the same
        places only when the normalizer can neither make, change nor join the
        token's characters (:func:`_unstable_chars`)."""
        if not normalize or not self.normalized_specials:
            return
        unstable = _unstable_chars(normalize)
        moved = [t for t in self.normalized_specials if any(c in unstable for c in t)]
        if moved:
            raise self.unsupported(
                "added_tokens",
                moved[:3],
                "with a normalizer, tokenizers looks for added tokens with normalized true in "
                "the normalized text; bytepair finds them in the text as given, which is the "
                f"same only when {' + '.join(normalize)} can neither make, change nor join "
                "any of their characters (true of spaces, not of letters)",
            )

    def check_special_passes(
        self, specials: Mapping[str, int], normalized: Mapping[str, bool]
    ) -> None:
        # tokenizers cuts out the non-normalized added tokens first, then the
        # normalized ones; bytepair takes the leftmost-longest of all at once.
        # Both agree unless a token of one kind can overlap one of the other.
        # A token of the first kind also takes the whitespace it strips first,
        # so a token of the second kind holding whitespace can lie inside it.
        first = [t for t in specials if not normalized[t]]
        second = [t for t in specials if normalized[t]]
        if not first or not second:
            return
        for a in first:
            strips = any(self.special_strip.get(a, (False, False)))
            for b in second:
                if _overlap(a, b):
                    raise self.error(
                        f"special tokens {a!r} (normalized false) and {b!r} (normalized true) "
                        "can overlap in a text; tokenizers then prefers the first kind wherever "
                        "it is, bytepair the leftmost",
                        "added_tokens",
                    )
                if strips and any(c.isspace() for c in b):
                    raise self.error(
                        f"added tokens {a!r} (normalized false, stripping whitespace) and "
                        f"{b!r} (normalized true, holding whitespace): tokenizers cuts out the "
                        "first kind with the whitespace it strips before it looks for the "
                        "second, bytepair looks for both at once",
                        "added_tokens",
                    )

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

    def resolve_ignore_merges(self, model: BPEModel) -> BPEModel:
        """A model for a file with ``ignore_merges``: tokenizers first looks a
        whole piece up in the vocabulary, then merges by the list."""
        clashes = lookup_clashes(model.special_tokens)
        if clashes:
            raise self.unsupported(
                "model.ignore_merges",
                True,
                f"tokenizers' whole-piece lookup would give the special tokens {clashes!r} to "
                "the ordinary text they are the byte-level form of",
            )
        assert model.merges is not None
        special_ids = model.special_tokens.values()
        # Exactly tiktoken's rule (Llama-3 style files converted from tiktoken)?
        why_not = follows_tiktoken_rule(model.tokens, special_ids, model.merges)
        if why_not is None:
            return BPEModel(model.tokens, None, model.special_tokens, model.pretokenizer)
        # Or inert: every token is what merging its own bytes gives.
        missing = not_made_by_merges(model.tokens, special_ids, model.merges)
        if not missing:
            return model
        shown = ", ".join(f"{model.tokens[i]!r} (id {i})" for i in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise self.unsupported(
            "model.ignore_merges",
            True,
            "tokenizers looks a whole piece up in the vocabulary before merging, and merging "
            f"their own bytes does not make these tokens: {shown}{more}; nor do the merges "
            f"follow tiktoken's rule, which has that lookup ({why_not})",
        )

    def model(
        self, document: Mapping[str, object], tables: _native.HfBpeDocument | None = None
    ) -> BPEModel:
        """The model of a parsed document; ``tables`` holds ``model.vocab`` and
        ``model.merges`` when the fast path took them out of ``document``."""
        self.check_top_level(document)
        model = self.object_at(self.require(document, "model", "top level"), "model")
        ignore_merges = self.check_model_options(model)
        normalize = self.normalizer(document.get("normalizer"))
        pretokenizer = self.pretokenizer(document.get("pre_tokenizer"))
        self.check_decoder(document.get("decoder"))
        if tables is None:
            vocab = self.object_at(self.require(model, "vocab", "model"), "model.vocab")
            merges = self.merges(self.require(model, "merges", "model"))
        else:
            # The native tables answer len, in and [] as the vocabulary does.
            vocab = cast("dict[str, object]", tables)
        specials = self.special_tokens(document.get("added_tokens", []), vocab)
        self.check_normalized_specials(normalize)
        self.check_post_processor(document.get("post_processor"))

        # A special outside the model vocabulary has the id tokenizers gives it (checked above).
        outside = {text: i for text, i in specials.items() if text not in vocab}
        if tables is not None:
            fast = tables.tables(specials)
            if fast is None:
                raise _SlowPath
            tokens, merge_ids = fast
            result = BPEModel(
                tuple(tokens),
                tuple(merge_ids),
                dict(sorted(specials.items(), key=lambda item: item[1])),
                pretokenizer,
            )
            return self.finish(result, ignore_merges, normalize)

        def vocab_error(problem: str, key: str | None) -> FormatError:
            if key is None:
                return self.error(problem, "model.vocab")
            if key in outside:
                return self.error(problem, f"added_tokens (id {outside[key]}, {key!r})")
            return self.error(problem, f"model.vocab key {key!r}")

        def merge_error(problem: str, index: int) -> FormatError:
            return self.error(problem, f"model.merges, merge {index + 1}")

        result = model_from_tables(
            {**vocab, **outside},
            merges,
            specials,
            pretokenizer,
            vocab_error=vocab_error,
            merge_error=merge_error,
        )
        return self.finish(result, ignore_merges, normalize)

    def finish(self, result: BPEModel, ignore_merges: bool, normalize: tuple[str, ...]) -> BPEModel:
        if ignore_merges:
            result = self.resolve_ignore_merges(result)
        if self.special_strip:
            result = dataclasses.replace(result, special_token_strip=dict(self.special_strip))
        return dataclasses.replace(result, normalize=normalize, added_tokens=tuple(self.added))


class UnigramFile(FormatError):
    """The file holds a Unigram model, which this BPE reader does not read;
    :func:`bytepair.load` catches it and reads the file with :mod:`.hf_unigram`."""

    def __init__(self, source: str, told: str) -> None:
        super().__init__(
            source,
            f'model.type "Unigram"{told} is a unigram model, not byte-level BPE: '
            "bytepair.load reads it (a SentencePieceTokenizer), formats.hf_unigram.load its model",
            "model.type",
        )
        self.source = source


class _SlowPath(Exception):
    """The fast path met something irregular: read the file the slow way, whose errors explain."""


def loads(text: str, source: str = "<string>") -> BPEModel:
    """Read a ``tokenizer.json`` text; ``source`` names it in errors (usually its path).

    Byte-level BPE files take a fast path first: the core parses the document
    and keeps ``model.vocab`` and ``model.merges`` (nearly all of the file),
    this module checks the rest as usual. Anything irregular is read again
    here, in Python, so that the error names the key, merge and line.
    """
    return _read(text.encode("utf-8", "surrogatepass"), source, lambda: text)


def load(path: PathLike) -> BPEModel:
    """Read the ``tokenizer.json`` file at ``path``."""
    data = Path(path).read_bytes()
    # The fast path reads the bytes as they are; the slow one decodes them,
    # naming the first byte that is not UTF-8.
    return _read(data, str(path), lambda: decode_text(data, path))


def _read(data: bytes, source: str, text: Callable[[], str]) -> BPEModel:
    tables = _native.split_hf_bpe(data)
    if tables is not None:
        document = parse_json(tables.rest, source)
        model = document.get("model") if isinstance(document, dict) else None
        # (A file without model.type is BPE because it has merges; the check reads the type.)
        if isinstance(model, dict) and model.setdefault("type", "BPE") == "BPE":
            try:
                return _Reader(source).model(cast("dict[str, object]", document), tables)
            except _SlowPath:
                pass
    reader = _Reader(source)
    document = reader.object_at(parse_json(text(), source), "top level")
    return reader.model(document)
