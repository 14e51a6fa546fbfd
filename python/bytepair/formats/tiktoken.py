"""tiktoken's rank files (``.tiktoken``), and exporting a tokenizer to tiktoken.

The rank file
-------------
One token a line: ``<base64 of the token's bytes> <rank>``, e.g. ``IQ== 0``.
The rank is the token id. Special tokens are not in the file: tiktoken keeps
them apart (``special_tokens={text: id}``), and so does the pattern that cuts
text before merging. Both live in code (``tiktoken_ext.openai_public``) for
OpenAI's files, or for a file written here, in a sidecar JSON.

The sidecar
-----------
:func:`save_tiktoken` writes ``NAME.tiktoken`` and next to it
``NAME.tiktoken.json`` (the rank file's name plus ``.json``)::

    {"format": "bytepair-tiktoken", "version": 1,
     "name": "bytepair",                       # tiktoken.Encoding(name=...)
     "pat_str": "...",                         # tiktoken.Encoding(pat_str=...)
     "special_tokens": {"<|endoftext|>": 0},   # tiktoken.Encoding(special_tokens=...)
     "pretokenizer": {"kind": "gpt2", "pattern": "..."},   # bytepair's, to load it back
     "n_vocab": 8192}

so that plain tiktoken reads it as::

    meta = json.load(open("tok.tiktoken.json"))
    enc = tiktoken.Encoding(meta["name"], pat_str=meta["pat_str"],
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe("tok.tiktoken"),
                            special_tokens=meta["special_tokens"])

How tiktoken encodes (its rule; ``BPEModel.merges is None`` here)
-----------------------------------------------------------------
A piece that is itself a token becomes that token. Otherwise, starting from
its bytes, the adjacent pair whose *concatenated bytes* form the token of
lowest id merges (leftmost first), until no adjacent pair forms a token.

When exporting a merge list is exact
------------------------------------
A merge list (trained, HuggingFace, GPT-2: "ML") instead merges the adjacent
*pair* of lowest rank. tiktoken ("TT") cannot record pairs, only ids, so the
export writes rank = id and is exact (TT and ML give the same ids on every
byte string) when:

E1. every non-special token T is reachable: ML encodes the bytes of T as [T];
E2. for tokens of two or more bytes, their ids are in the order of the ranks
    of the merges that make them (for T, the merge that ML applies last when
    encoding the bytes of T).

Proof. (a) *Locality*: if tokens x, y are ever adjacent in an ML state (for
any input), then ML run on the bytes of x+y alone passes through the state
[x, y]. Every merge inside the span of x+y happened between the left and
right boundaries of that span, which were never merged away; each was the
lowest-ranked (then leftmost) pair of the whole text when made, so also of
the span; between two of them the span does not change. So ML on the span
alone makes the same merges in the same order. (b) Now run TT and ML side by
side on a piece P. If P is a token, TT gives [P], and so does ML by E1.
Otherwise, while the states are equal: a pair (x, y) TT may merge has x+y = T
a token; by (a) ML on the bytes of T passes through [x, y], and by E1 it goes
on to [T], which needs (x, y) to be a merge making T: the merge ML applies last
for T. Conversely a merge (x, y) that ML may apply makes some token T = x+y,
which TT may merge too. So both see the same candidate pairs, one per result
token; TT orders them by the result's id, ML by the merge's rank, the same
order by E2; ties are occurrences of one pair, leftmost first in both. Same
choice, same next state, same end. (c) E1 is also necessary: on the bytes of
an unreachable token (as one piece), TT gives that token and ML does not. E2
is not always necessary (two merges that never compete may be in either
order), but tiktoken requires rank = id, so ids out of merge order are refused.

Consequences: a token made from a split T = x + y that is not its merge is
harmless exactly when ML never leaves [x][y] adjacent (E1 plus (a)); and when
two merges make the same bytes T, at most one of them can ever apply (by (a),
only the one whose pair is the state of two tokens ML passes through on the
bytes of T, and that state is unique), so a duplicate alone does not change
ids; E1/E2 are checked with the merge that applies. Tokenizers trained by
bytepair always satisfy E1 and E2: a merge is made from a pair adjacent in
the corpus, which by (a) ML reaches on the merged bytes; ids follow merges.

Special tokens: bytepair cuts out the special that starts first, then the
longest. tiktoken joins its specials into one regex alternation, which takes
the first alternative listed that matches, in the order of a Rust hash map
(not the order of the ``special_tokens`` dict, so no ordering of ours can make
it the longest); and where the special it finds is not allowed it searches
again one character later, missing an allowed special that starts at the
same place. Both only matter where two specials match at the same place, that
is when one is a prefix of the other (``<a>`` and ``<a><b>``): such specials
are refused by :func:`export_ranks`.

The pre-tokenizer is exported as tiktoken's ``pat_str``; bytepair's rule keeps
the text between matches as a piece while tiktoken drops it, so a user regex P
is written as ``(?:P)|(?:(?!(?:P))[\\s\\S])+`` (a run of characters where P
does not match is one piece), which is exact when P never matches the empty
string (bytepair skips empty matches; tiktoken would lose a character).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Protocol, Union, cast

from .. import _native
from ..errors import FormatError, warn
from ..model import BPEModel
from ..pretokenizers import BUILTIN_PATTERNS, Pretokenizer, resolve
from .byte_level import ID_SLACK, id_limit
from .files import PathLike, parse_json, read_text, write_text_atomic, write_texts_atomic
from .merge_rules import rank_merges

if TYPE_CHECKING:
    import tiktoken


class WithBPEModel(Protocol):
    """A tokenizer whose ``model`` is a :class:`~bytepair.model.BPEModel` (a
    :class:`~bytepair.Tokenizer`)."""

    @property
    def model(self) -> BPEModel: ...


# What the exporters take: a model, or a tokenizer of one.
HasModel = Union[BPEModel, WithBPEModel]

SIDECAR_SUFFIX = ".json"
SIDECAR_FORMAT = "bytepair-tiktoken"
SIDECAR_VERSION = 1
DEFAULT_NAME = "bytepair"
# "none": the whole text is one piece (and "" none at all).
WHOLE_TEXT_PATTERN = r"[\s\S]+"
# How many offending tokens an error message lists.
SHOWN = 5


# ---------------------------------------------------------------------------
# The rank file


def parse_rank_tokens(data: bytes, source: object) -> list[Optional[bytes]]:
    """The tokens of the contents of a ``.tiktoken`` file by rank (None where
    no line gives a rank); FormatError naming the line. Parsed in the core."""
    try:
        return _native.parse_rank_file(data)
    except ValueError as e:
        line, problem = e.args
        raise FormatError(source, problem, f"line {line}" if line else None) from None


def parse_ranks(data: bytes, source: object) -> dict[bytes, int]:
    """The ranks in the contents of a ``.tiktoken`` file; FormatError naming the line."""
    tokens = parse_rank_tokens(data, source)
    return {token: rank for rank, token in enumerate(tokens) if token is not None}


def load_ranks(path: PathLike) -> dict[bytes, int]:
    """Read a ``.tiktoken`` rank file: token bytes -> rank (= id)."""
    return parse_ranks(Path(path).read_bytes(), path)


def dump_ranks(ranks: Mapping[bytes, int]) -> str:
    """The text of a ``.tiktoken`` file, in rank order (as tiktoken writes it)."""
    lines = [
        f"{base64.b64encode(token).decode('ascii')} {rank}\n"
        for token, rank in sorted(ranks.items(), key=lambda item: item[1])
    ]
    return "".join(lines)


def write_ranks(
    model_or_ranks: Union[BPEModel, Mapping[bytes, int]], path: PathLike, *, force: bool = False
) -> None:
    """Write a ``.tiktoken`` rank file, atomically (temporary file + rename).

    Given a model, its ranks are :func:`export_ranks` of it: ValueError when
    tiktoken's rule would encode differently, unless ``force``.
    """
    if isinstance(model_or_ranks, BPEModel):
        ranks = export_ranks(model_or_ranks, force=force)
    else:
        ranks = dict(model_or_ranks)
        if len(set(ranks.values())) != len(ranks):
            raise ValueError("two tokens have the same rank")
    write_text_atomic(path, dump_ranks(ranks))


def sidecar_path(path: PathLike) -> Path:
    """Where the pattern and special tokens of the rank file ``path`` are kept."""
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


# ---------------------------------------------------------------------------
# Rank file -> model


def model_from_ranks(
    ranks: Mapping[bytes, int],
    pattern: object,
    special_tokens: Optional[Mapping[str, int]] = None,
) -> BPEModel:
    """A model that encodes with tiktoken's rule (``merges=None``).

    ``pattern``: a pre-tokenizer name, a compiled regex or a Pretokenizer.
    Ids without a token (cl100k_base has unused ids below and between its
    special tokens) are None; ``n_vocab`` is the largest id + 1, as tiktoken's.
    ValueError when a special token's id is also a rank, or when an id is far
    beyond the number of tokens (:func:`.byte_level.id_limit`).
    """
    if not ranks:
        raise ValueError("no tokens: the ranks are empty")
    for token, rank in ranks.items():
        if not isinstance(rank, int) or isinstance(rank, bool) or rank < 0:
            raise ValueError(f"the rank of {token!r} is {rank!r}, not a whole number >= 0")
    by_rank = {rank: token for token, rank in ranks.items()}
    if len(by_rank) != len(ranks):
        raise ValueError("two tokens have the same rank")
    largest, limit = max(by_rank), id_limit(len(ranks))
    if largest >= limit:
        raise ValueError(
            f"the rank {largest} of {by_rank[largest]!r} is far beyond the {len(ranks)} tokens"
            f" (ranks must be below {limit}: twice the tokens + {ID_SLACK}, "
            "room for unused ranks)"
        )
    tokens: list[Optional[bytes]] = [None] * (largest + 1)
    for rank, token in by_rank.items():
        tokens[rank] = token
    return model_from_rank_tokens(tokens, pattern, special_tokens)


def model_from_rank_tokens(
    tokens: list[Optional[bytes]],
    pattern: object,
    special_tokens: Optional[Mapping[str, int]] = None,
) -> BPEModel:
    """:func:`model_from_ranks` from the tokens by rank (None: no token has that rank)."""
    pretokenizer = resolve(pattern)
    special_tokens = dict(special_tokens or {})
    tokens = list(tokens)
    entries = len(tokens) - tokens.count(None) + len(special_tokens)
    limit = id_limit(entries)
    for text, token_id in special_tokens.items():
        if not isinstance(text, str) or not text:
            raise ValueError(f"special token {text!r} must be a non-empty string")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(
                f"special token {text!r} holds the lone surrogate {text[e.start]!r} at position "
                f"{e.start}, which has no UTF-8 bytes"
            ) from None
        if not isinstance(token_id, int) or isinstance(token_id, bool) or token_id < 0:
            raise ValueError(f"special token {text!r} has id {token_id!r}, not a whole number >= 0")
        if token_id >= limit:
            raise ValueError(
                f"special token {text!r} has id {token_id}, far beyond the {entries} tokens "
                f"and special tokens (ids must be below {limit}: twice their number + "
                f"{ID_SLACK}, room for unused ids)"
            )
        if token_id < len(tokens) and tokens[token_id] is not None:
            raise ValueError(
                f"special token {text!r} has id {token_id}, which is also the rank of the "
                f"token {tokens[token_id]!r} (tiktoken needs them apart)"
            )
    size = max(len(tokens), max(special_tokens.values(), default=-1) + 1)
    tokens.extend([None] * (size - len(tokens)))
    taken: set[int] = set()
    for text, token_id in special_tokens.items():
        if token_id in taken:
            raise ValueError(f"id {token_id} is given to two special tokens")
        taken.add(token_id)
        tokens[token_id] = text.encode("utf-8")
    return BPEModel(tuple(tokens), None, special_tokens, pretokenizer)


def read_sidecar(path: PathLike) -> tuple[Pretokenizer, dict[str, int], Optional[int]]:
    """(pre-tokenizer, special tokens, n_vocab or None) from a sidecar JSON file."""
    path = Path(path)
    document = parse_json(read_text(path), str(path))
    if not isinstance(document, dict):
        raise FormatError(path, "expected a JSON object")
    if document.get("format") != SIDECAR_FORMAT:
        raise FormatError(
            path, f"not a bytepair tiktoken sidecar: 'format' is {document.get('format')!r}"
        )
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version != SIDECAR_VERSION:
        raise FormatError(
            path, f"version {document.get('version')!r} is not supported (only {SIDECAR_VERSION})"
        )
    specials = document.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in specials.values()
    ):
        raise FormatError(path, "'special_tokens' must map text to integer ids", "special_tokens")
    pretokenizer = _sidecar_pretokenizer(path, document)
    pat_str = document.get("pat_str")
    if "pretokenizer" in document and pat_str is not None:
        # tiktoken reads pat_str and bytepair the pre-tokenizer: they must agree.
        if pat_str != tiktoken_pattern(pretokenizer)[0]:
            raise FormatError(
                path,
                "'pat_str' is not the pattern of the file's 'pretokenizer', so tiktoken would "
                "cut the text into other pieces than bytepair",
                "pat_str",
            )
    n_vocab = document.get("n_vocab")
    if n_vocab is not None and (not isinstance(n_vocab, int) or isinstance(n_vocab, bool)):
        raise FormatError(path, f"'n_vocab' is {n_vocab!r}, not an integer", "n_vocab")
    return pretokenizer, specials, n_vocab


def _sidecar_pretokenizer(path: Path, document: dict) -> Pretokenizer:
    spec = document.get("pretokenizer")
    if spec is None:
        pat_str = document.get("pat_str")
        if not isinstance(pat_str, str) or not pat_str:
            raise FormatError(path, "neither 'pretokenizer' nor 'pat_str' is given")
        for name, pattern in BUILTIN_PATTERNS.items():
            if pattern == pat_str:
                return Pretokenizer(name, pattern)
        if pat_str == WHOLE_TEXT_PATTERN:
            return Pretokenizer("none", None)
        unwrapped = _unwrapped(pat_str)
        if unwrapped is not None:  # tiktoken_pattern's form: it keeps the gaps, as bytepair
            return Pretokenizer("regex", unwrapped)
        warn(
            f"{path}: tiktoken drops the text its pat_str {pat_str!r} does not match, and "
            "bytepair encodes that text as pieces of its own: the ids agree only on texts "
            "the pattern matches completely"
        )
        return Pretokenizer("regex", pat_str)
    if not isinstance(spec, dict) or not isinstance(spec.get("kind"), str):
        raise FormatError(path, "'pretokenizer' must be {'kind': ..., 'pattern': ...}")
    kind, pattern = spec["kind"], spec.get("pattern")
    if kind == "regex":
        if not isinstance(pattern, str) or not pattern:
            raise FormatError(path, "a 'regex' pre-tokenizer needs its 'pattern'", "pretokenizer")
        return Pretokenizer("regex", pattern)
    if kind not in BUILTIN_PATTERNS:
        raise FormatError(path, f"unknown pre-tokenizer kind {kind!r}", "pretokenizer")
    if pattern != BUILTIN_PATTERNS[kind]:
        raise FormatError(
            path,
            f"the pattern given for {kind!r} is not bytepair's {kind!r} pattern",
            "pretokenizer",
        )
    return Pretokenizer(kind, pattern)


def _known_encoding(path: Path):
    from ..registry import ENCODINGS

    name = path.name[: -len(".tiktoken")] if path.name.endswith(".tiktoken") else None
    return ENCODINGS.get(name) if name else None


def _check_known(path: Path, data: bytes, known) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if digest != known.sha256:
        raise FormatError(
            path,
            f"named like OpenAI's {known.file_name} but not that file (sha256 {digest}, "
            f"expected {known.sha256}): download it again from {known.url}, or load another "
            "vocabulary with bytepair.load_tiktoken(path, pattern=..., special_tokens=...)",
        )


def _from_data(
    path: Path,
    data: bytes,
    pattern: object,
    special_tokens: Mapping[str, int],
    specials_from_sidecar: bool = False,
) -> BPEModel:
    """The model of the rank file ``path`` (holding ``data``); bad special
    tokens that came from its sidecar are blamed on the sidecar's key."""
    tokens = parse_rank_tokens(data, path)
    try:
        return model_from_rank_tokens(tokens, pattern, special_tokens)
    except ValueError as e:
        if specials_from_sidecar:
            raise FormatError(sidecar_path(path), str(e), "special_tokens") from None
        raise FormatError(path, str(e)) from None


def load_known(path: PathLike, known) -> BPEModel:
    """OpenAI's encoding ``known`` (an ``encodings.KnownEncoding``) from ``path``;
    FormatError unless the file is OpenAI's, byte for byte (sha256)."""
    path = Path(path)
    data = path.read_bytes()
    _check_known(path, data, known)
    return _from_data(path, data, known.pretokenizer, known.special_tokens)


def load_model(
    path: PathLike,
    pattern: object = None,
    special_tokens: Optional[Mapping[str, int]] = None,
) -> BPEModel:
    """Read the ``.tiktoken`` file ``path`` as a model with tiktoken's rule.

    The pattern and special tokens are, in this order: the arguments; the
    sidecar ``path + ".json"`` when it exists; for a file named after one of
    OpenAI's encodings (``cl100k_base.tiktoken``, ...), that encoding's (the
    file must then be OpenAI's, byte for byte: its sha256 is checked).
    Otherwise FormatError, since the pattern cannot be guessed; when only the
    special tokens are missing there are none.
    """
    path = Path(path)
    data = path.read_bytes()
    n_vocab = None
    specials_from_sidecar = False
    if pattern is None or special_tokens is None:
        sidecar = sidecar_path(path)
        known = _known_encoding(path)
        if sidecar.exists() and not sidecar.is_file():
            raise FormatError(sidecar, "is not a file (the sidecar of a .tiktoken file is JSON)")
        if sidecar.is_file():
            default_pattern, default_specials, n_vocab = read_sidecar(sidecar)
            specials_from_sidecar = special_tokens is None
        elif known is not None:
            _check_known(path, data, known)
            default_pattern, default_specials = known.pretokenizer, dict(known.special_tokens)
        elif pattern is None:
            from ..registry import ENCODINGS

            raise FormatError(
                path,
                "a .tiktoken file does not say how to cut text nor which special tokens it "
                f"has: name it after one of OpenAI's encodings ({', '.join(ENCODINGS)}), put "
                f"a sidecar {sidecar.name} next to it, or call bytepair.load_tiktoken(path, "
                "pattern=..., special_tokens=...)",
            )
        else:
            default_pattern, default_specials = None, {}
        if pattern is None:
            pattern = default_pattern
        if special_tokens is None:
            special_tokens = default_specials
    model = _from_data(path, data, pattern, special_tokens or {}, specials_from_sidecar)
    if n_vocab is not None and n_vocab != len(model.tokens):
        raise FormatError(
            sidecar_path(path),
            f"n_vocab is {n_vocab}, but {path.name} with these special tokens has "
            f"{len(model.tokens)} ids",
        )
    return model


# ---------------------------------------------------------------------------
# Model -> ranks: the exactness check


def _merge_list_encode(
    data: bytes, byte_ids: list[int], rules: dict[tuple[int, int], tuple[int, int]]
) -> tuple[list[int], Optional[int]]:
    """The merge-list rule on raw bytes: (ids, rank of the last merge applied)."""
    symbols = [byte_ids[b] for b in data]
    last = None
    while len(symbols) > 1:
        best = None
        for i in range(len(symbols) - 1):
            rule = rules.get((symbols[i], symbols[i + 1]))
            if rule is not None and (best is None or rule[0] < best[0]):
                best = (rule[0], i, rule[1])
        if best is None:
            break
        last, i, result = best
        symbols[i : i + 2] = [result]
    return symbols, last


def _describe(token_id: int, data: Optional[bytes]) -> str:
    return f"{data!r} (id {token_id})"


def exactness_problems(model: BPEModel) -> list[str]:
    """Why tiktoken's rule with rank = id would encode differently from the
    model's merge list (conditions E1, E2 of this module's docstring); empty
    when the export is exact. A model with ``merges=None`` already uses
    tiktoken's rule and has no problem."""
    if model.merges is None:
        return []
    tokens = model.tokens
    special_ids = set(model.special_tokens.values())
    ids = {t: i for i, t in enumerate(tokens) if t is not None and i not in special_ids}
    byte_ids = []
    for b in range(256):
        if bytes([b]) not in ids:
            return [f"no token for the single byte 0x{b:02X}"]
        byte_ids.append(ids[bytes([b])])
    rules: dict[tuple[int, int], tuple[int, int]] = {}
    for rank, (left, right) in enumerate(model.merges):
        # Merges name tokens that exist (checked when the model was built).
        result = ids.get(cast(bytes, tokens[left]) + cast(bytes, tokens[right]))
        if result is None:
            return [f"merge rank {rank} ({left} + {right}) makes no token"]
        rules.setdefault((left, right), (rank, result))

    unreachable = []
    made_by: list[tuple[int, int]] = []  # (id, rank of the merge that makes it), by id
    for token_id, data in enumerate(tokens):
        if data is None or token_id in special_ids or len(data) < 2:
            continue
        encoded, last = _merge_list_encode(data, byte_ids, rules)
        if encoded == [token_id]:
            made_by.append((token_id, cast(int, last)))  # two bytes or more: merged at least once
        else:
            unreachable.append((token_id, data, encoded))

    problems = []
    for token_id, data, encoded in unreachable[:SHOWN]:
        parts = " + ".join(repr(tokens[i]) for i in encoded)
        problems.append(
            f"token {_describe(token_id, data)} is not reachable: the merge list encodes its "
            f"bytes as {parts} {encoded}, tiktoken would give [{token_id}]"
        )
    if len(unreachable) > SHOWN:
        problems.append(f"... and {len(unreachable) - SHOWN} more unreachable tokens")

    # E2: along increasing ids, merge ranks must increase.
    inversions = []
    highest: Optional[tuple[int, int]] = None  # (rank, id) of the latest merge so far
    for token_id, rank in made_by:
        if highest is not None and rank < highest[0]:
            inversions.append((highest[1], highest[0], token_id, rank))
        if highest is None or rank > highest[0]:
            highest = (rank, token_id)
    for earlier_id, earlier_rank, later_id, later_rank in inversions[:SHOWN]:
        problems.append(
            f"token ids are not in merge order: {_describe(earlier_id, tokens[earlier_id])} is "
            f"made by merge rank {earlier_rank}, but {_describe(later_id, tokens[later_id])}, "
            f"a larger id, by the earlier merge rank {later_rank}; tiktoken ranks a pair by "
            "the id of the token it makes, so it would order these merges the other way round"
        )
    if len(inversions) > SHOWN:
        problems.append(f"... and {len(inversions) - SHOWN} more tokens out of merge order")
    return problems


def special_prefixes(special_tokens: Mapping[str, int]) -> list[tuple[str, str]]:
    """The pairs (shorter, longer) of special tokens where one begins the other
    (see the module docstring: tiktoken cannot reproduce them)."""
    texts = sorted(special_tokens)
    pairs = []
    for i, short in enumerate(texts):
        # In sorted order, the texts that begin with ``short`` come right after it.
        j = i + 1
        while j < len(texts) and texts[j].startswith(short):
            pairs.append((short, texts[j]))
            j += 1
    return pairs


def export_ranks(model: BPEModel, *, force: bool = False) -> dict[bytes, int]:
    """tiktoken's mergeable ranks for ``model``: each non-special token's id.

    ValueError naming the tokens when tiktoken's rule would encode differently
    from the model's merge list, or when tiktoken would cut special tokens out
    of text differently (see the module docstring), or when the model has
    non-special added tokens (tiktoken has none: exported with ``force``, they
    are special tokens there); with ``force``, the ranks anyway, with a warning.
    """
    problems = exactness_problems(model)
    if model.added_tokens:
        shown = ", ".join(repr(t) for t in model.added_tokens[:SHOWN])
        more = (
            f" and {len(model.added_tokens) - SHOWN} more"
            if len(model.added_tokens) > SHOWN
            else ""
        )
        problems.append(
            f"the model has non-special added tokens ({shown}{more}), which every encode cuts "
            "out of the text; tiktoken has no such tokens (as special tokens it would refuse "
            "them or, in encode_ordinary, encode them as text)"
        )
    stripping = sorted(text for text, strip in model.special_token_strip.items() if any(strip))
    if stripping:
        problems.append(
            f"the special tokens {stripping!r} swallow the whitespace beside them "
            "(lstrip/rstrip), which tiktoken has no way to do"
        )
    prefixes = special_prefixes(model.special_tokens)
    if prefixes:
        shown = ", ".join(f"{short!r} begins {long!r}" for short, long in prefixes[:SHOWN])
        more = f" and {len(prefixes) - SHOWN} more" if len(prefixes) > SHOWN else ""
        problems.append(
            f"special tokens overlap ({shown}{more}): where both match, bytepair takes the "
            "longest, tiktoken the one its hash map lists first, and it skips an allowed "
            "special that starts where a disallowed one does"
        )
    if problems:
        message = "tiktoken cannot reproduce this tokenizer exactly: " + "; ".join(problems)
        if not force:
            raise ValueError(message + ". Pass force=True to export it anyway.")
        warn(message + ". Exported anyway (force=True): ids will differ.")
    special_ids = set(model.special_tokens.values())
    return {
        token: token_id
        for token_id, token in enumerate(model.tokens)
        if token is not None and token_id not in special_ids
    }


def merge_list_model(tokenizer: HasModel) -> BPEModel:
    """The model with tiktoken's rule (``merges=None``) as an explicit merge
    list, for formats that store merges (HuggingFace, GPT-2).

    The merges are derived (for each token in id order, the last merge that
    makes it from its bytes) and the result is checked with E1/E2 of this
    module's docstring: when they hold, the merge list gives tiktoken's ids on
    every input (the same theorem, read the other way). ValueError naming the
    tokens otherwise. A model that has merges is returned as it is.
    """
    model = _model_of(tokenizer)
    if model.merges is not None:
        return model
    pairs, unreachable = rank_merges(model)
    if unreachable:
        shown = ", ".join(_describe(i, model.tokens[i]) for i in unreachable[:SHOWN])
        raise ValueError(
            f"{len(unreachable)} token(s) cannot be made by merging their bytes "
            f"({shown}); tiktoken encodes them only when a whole piece equals them, "
            "which a merge list cannot express"
        )
    # Everything else (added tokens, stripping, normalization) stays as it is.
    derived = dataclasses.replace(model, merges=tuple(pairs))
    problems = exactness_problems(derived)
    if problems:
        raise ValueError(
            "the merge list derived from tiktoken's ranks would encode differently: "
            + "; ".join(problems)
        )
    return derived


# ---------------------------------------------------------------------------
# Pre-tokenizer -> pat_str


def _min_width(pattern: str) -> Optional[int]:
    """The fewest characters ``pattern`` can match, by Python's regex parser
    (``\\p{..}`` classes counted as one character); None when it cannot tell."""

    if sys.version_info >= (3, 11):
        from re import _parser as sre_parse
    else:  # pragma: no cover - older Pythons
        import sre_parse

    # A Unicode class is one character: any single-character stand-in gives the
    # same widths; Rust's end-of-text \z is Python's \Z.
    stand_ins = {"\\\\": "\\\\", "\\z": "\\Z"}
    simplified = re.sub(
        r"\\\\|\\z|\\[pP](?:\{[^}]*\}|[A-Za-z])",
        lambda m: stand_ins.get(m.group(0), "x"),
        pattern,
    )
    try:
        return sre_parse.parse(simplified).getwidth()[0]
    except Exception:
        return None


def _wrapped(pattern: str) -> str:
    """``pattern`` with its gaps matched too: tiktoken drops what its pattern
    does not match, bytepair keeps it as pieces."""
    return f"(?:{pattern})|(?:(?!(?:{pattern}))[\\s\\S])+"


def _unwrapped(pat_str: str) -> Optional[str]:
    """The pattern :func:`_wrapped` made ``pat_str`` from, if it did: the
    wrapping adds a fixed text around two copies of the pattern."""
    length = (len(pat_str) - len(_wrapped(""))) // 2
    pattern = pat_str[3 : 3 + length]  # after "(?:"
    return pattern if length > 0 and _wrapped(pattern) == pat_str else None


def tiktoken_pattern(pretokenizer: Pretokenizer) -> tuple[str, Optional[str]]:
    """(tiktoken ``pat_str`` giving the same pieces, or a reason it may not)."""
    if pretokenizer.kind == "none":
        return WHOLE_TEXT_PATTERN, None
    pattern = pretokenizer.pattern
    assert pattern is not None
    if pretokenizer.kind != "regex":
        return pattern, None  # the builtins match every character, never the empty string
    wrapped = _wrapped(pattern)
    width = _min_width(pattern)
    if width is None:
        return wrapped, (
            f"cannot tell whether the pre-tokenizer regex {pattern!r} can match the empty "
            "string (bytepair skips empty matches, tiktoken would drop a character there)"
        )
    if width == 0:
        return wrapped, (
            f"the pre-tokenizer regex {pattern!r} can match the empty string: bytepair skips "
            "empty matches, tiktoken would drop the character there"
        )
    return wrapped, None


# ---------------------------------------------------------------------------
# Export


def _model_of(tokenizer: HasModel) -> BPEModel:
    """The model of ``tokenizer``: a BPEModel, or a tokenizer whose ``model`` is one."""
    if isinstance(tokenizer, BPEModel):
        return tokenizer
    model = getattr(tokenizer, "model", None)
    if isinstance(model, BPEModel):
        return model
    raise TypeError(
        "a tiktoken export needs a byte-level BPE Tokenizer or BPEModel, "
        f"not {type(tokenizer).__name__}"
    )


def encoding_args(
    tokenizer: HasModel, name: str = DEFAULT_NAME, *, force: bool = False
) -> dict[str, object]:
    """The keyword arguments of ``tiktoken.Encoding`` for ``tokenizer``:
    ``name``, ``pat_str``, ``mergeable_ranks``, ``special_tokens``.
    ValueError when the export would not be exact, unless ``force`` (then a warning)."""
    model = _model_of(tokenizer)
    if model.normalize:
        # tiktoken encodes text as given: the ids would differ on such text.
        problem: Optional[str] = f"tiktoken has no normalization ({' + '.join(model.normalize)})"
        if not force:
            raise ValueError(
                f"cannot export the tokenizer exactly: {problem}; it would encode text that "
                "normalization changes differently. Pass force=True to export it anyway."
            )
        warn(f"{problem}; exported without it (force=True)")
    pat_str, problem = tiktoken_pattern(model.pretokenizer)
    if problem is not None:
        if not force:
            raise ValueError(
                f"cannot export the pre-tokenizer exactly: {problem}. "
                "Pass force=True to export it anyway."
            )
        warn(f"{problem}; exported anyway (force=True)")
    ranks = export_ranks(model, force=force)
    return {
        "name": name,
        "pat_str": pat_str,
        "mergeable_ranks": ranks,
        "special_tokens": dict(model.special_tokens),
    }


def to_tiktoken(
    tokenizer: HasModel, name: str = DEFAULT_NAME, *, force: bool = False
) -> tiktoken.Encoding:
    """A ``tiktoken.Encoding`` giving the same ids as ``tokenizer``.

    ValueError naming the tokens when tiktoken's rule cannot reproduce the
    merge list (or the pre-tokenizer); ``force=True`` builds it anyway with a
    warning. Needs the ``tiktoken`` package.
    """
    try:
        import tiktoken
    except ImportError:
        raise ImportError("to_tiktoken needs the tiktoken package: pip install tiktoken") from None
    args = encoding_args(tokenizer, name, force=force)
    try:
        return tiktoken.Encoding(**args)  # type: ignore[arg-type]
    except Exception as e:  # tiktoken's regex compiler, or its own checks
        raise ValueError(f"tiktoken refused the exported encoding: {e}") from None


def save_tiktoken(
    tokenizer: HasModel,
    path: PathLike,
    *,
    force: bool = False,
    overwrite: bool = False,
    name: Optional[str] = None,
) -> tuple[Path, Path]:
    """Write the rank file ``path`` and its sidecar ``path + ".json"``
    (pattern, special tokens; see the module docstring). Returns both paths.

    ``force``: export even when tiktoken would encode differently (warning).
    ``overwrite``: replace existing files (else FileExistsError, before writing).
    """
    path = Path(path)
    sidecar = sidecar_path(path)
    existing = [str(p) for p in (path, sidecar) if p.exists()]
    if existing and not overwrite:
        raise FileExistsError(
            f"{', '.join(existing)} already exists; pass overwrite=True to replace it"
        )
    model = _model_of(tokenizer)
    if name is None:
        name = path.name[: -len(".tiktoken")] if path.name.endswith(".tiktoken") else path.stem
        name = name or DEFAULT_NAME
    args = encoding_args(model, name, force=force)
    document = {
        "format": SIDECAR_FORMAT,
        "version": SIDECAR_VERSION,
        "name": name,
        "pat_str": args["pat_str"],
        "special_tokens": args["special_tokens"],
        "pretokenizer": {"kind": model.pretokenizer.kind, "pattern": model.pretokenizer.pattern},
        "n_vocab": len(model.tokens),
    }
    write_texts_atomic(
        {
            path: dump_ranks(args["mergeable_ranks"]),  # type: ignore[arg-type]
            sidecar: json.dumps(document, ensure_ascii=False, indent=2) + "\n",
        }
    )
    return path, sidecar


__all__ = [
    "dump_ranks",
    "encoding_args",
    "exactness_problems",
    "export_ranks",
    "load_known",
    "load_model",
    "load_ranks",
    "merge_list_model",
    "model_from_ranks",
    "parse_ranks",
    "read_sidecar",
    "save_tiktoken",
    "sidecar_path",
    "special_prefixes",
    "tiktoken_pattern",
    "to_tiktoken",
    "write_ranks",
]
