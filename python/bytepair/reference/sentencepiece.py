"""SentencePiece encoding and decoding in readable Python (sentencepiece 0.2.x, exactly).

``encode(model, text)`` gives the ids of ``SentencePieceProcessor.encode(text)``
(no BOS/EOS) for a :class:`~bytepair.model.SentencePieceModel` read from a
``.model`` file:

1. Normalize (:func:`bytepair.reference.normalize.normalize`; user-defined
   pieces are exempt from the charsmap).
2. Segment the whole normalized text (one lattice, no splitting into words):

   * ``"unigram"``: :func:`unigram_segments`, sentencepiece's Viterbi
     (``EncodeOptimized``) in float32, as sentencepiece 0.2.3 computes it:
     every position stores its best path score as a float32, and an offer is
     ``float32(score + stored)``, rounded BEFORE it is compared. (Exact ties
     between splits are common, e.g. "-" + "--" + "--" against "--" + "--" +
     "-"; with f64 sums another split wins.) Candidates: normal,
     user-defined and unused pieces, unused ones skipped. A user-defined piece
     scores ``float32(n_bytes * 0.1 - 0.1)`` whatever the model's scores (found
     by measuring sentencepiece 0.2.3), so in practice it wins against the
     negative normal scores. The unknown segment covers one character, scores
     ``float32(min_score - 10)`` (min_score: the lowest NORMAL score) and is
     offered only where no candidate of exactly that one character exists.
     Ties go to the segment that starts first. Long texts: whenever the best
     score at a position is beyond +-1e5, every stored score is shifted so
     that it is 0 there (sentencepiece 0.2.3 does this; measured).
   * ``"bpe"``: :func:`bpe_segments`, sentencepiece's BPE: symbols are the
     characters (a user-defined piece is one frozen symbol that never
     merges); repeatedly the adjacent pair whose concatenation is a normal,
     user-defined or unused piece with the highest score merges, ties to the
     leftmost; an unused piece in the result is split back into the two
     symbols it was last offered as (recursively), and an unused piece that
     no merge made (a single character) counts as unknown.

3. Each segment becomes its id; a segment that is not a piece (an unknown
   character) is ``unk_id``. Then sentencepiece's PopulateSentencePieceText:
   with ``byte_fallback`` an unknown segment becomes its UTF-8 bytes as
   ``<0xXX>`` pieces; without it, consecutive unknown segments become ONE
   ``unk_id``.

``decode(model, ids)`` is ``SentencePieceProcessor.decode(ids)``;
``decode_bytes(model, ids)`` the same text with byte pieces left as raw bytes.
"""

from __future__ import annotations

import heapq
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Callable, Optional, Union

from ..model import SentencePieceModel
from .normalize import SPACE_SYMBOL, decode_utf8_like_sentencepiece, normalize

DEFAULT_UNK_SURFACE = " \u2047 "  # " ⁇ ", what decode writes for <unk>
UNK_PENALTY = 10.0  # the unknown node scores min_score - UNK_PENALTY
REBASE_LIMIT = 1e5  # float32 path scores beyond this are shifted back to 0
FLT_MAX = 3.4028234663852886e38

# Piece kinds that segmentation can produce (sentencepiece's ``pieces_`` map);
# the other kinds (unknown, control, byte) are "reserved" and only looked up.
SEGMENT_KINDS = ("normal", "user_defined", "unused")


def f32(value: float) -> float:
    """``value`` rounded to the nearest float32 (ties to even), as C++'s double -> float."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


# ---------------------------------------------------------------------------
# Tables derived from a model (cached per model object)


@dataclass
class _Tables:
    segment_ids: dict[str, int]  # normal, user-defined and unused pieces
    reserved_ids: dict[str, int]  # unknown, control and byte pieces
    user_defined: list[str]
    max_piece_length: int  # in characters, over segment_ids
    min_score: float  # lowest normal score (float32 FLT_MAX when none)


_tables: dict[int, tuple[SentencePieceModel, _Tables]] = {}


def _tables_of(model: SentencePieceModel) -> _Tables:
    cached = _tables.get(id(model))
    if cached is not None and cached[0] is model:
        return cached[1]
    segment_ids: dict[str, int] = {}
    reserved_ids: dict[str, int] = {}
    min_score = FLT_MAX
    for index, (piece, kind) in enumerate(zip(model.pieces, model.kinds)):
        if kind in SEGMENT_KINDS:
            segment_ids.setdefault(piece, index)
        else:
            reserved_ids.setdefault(piece, index)
        if kind == "normal":
            min_score = min(min_score, model.scores[index])
    tables = _Tables(
        segment_ids=segment_ids,
        reserved_ids=reserved_ids,
        user_defined=[p for p, k in zip(model.pieces, model.kinds) if k == "user_defined"],
        max_piece_length=max((len(piece) for piece in segment_ids), default=0),
        min_score=min_score,
    )
    if len(_tables) > 8:
        _tables.clear()
    _tables[id(model)] = (model, tables)
    return tables


def piece_to_id(model: SentencePieceModel, piece: str) -> Optional[int]:
    """sentencepiece's PieceToId: reserved pieces first, then the others, else unk_id."""
    tables = _tables_of(model)
    if piece in tables.reserved_ids:
        return tables.reserved_ids[piece]
    return tables.segment_ids.get(piece, model.unk_id)


# ---------------------------------------------------------------------------
# Unigram: the best path


@dataclass
class _BestPath:
    """The best path found so far that ends at one position."""

    score: float = 0.0
    start: int = -1  # where its last segment starts; -1: no path yet
    id: Optional[int] = None  # the last segment's id; None: unknown


# A candidate segment: (id, score) or None when the text is not a candidate.
Lookup = Callable[[str], Optional[tuple[int, float]]]


def best_path(
    text: str,
    lookup: Lookup,
    max_piece_length: int,
    unk_score: float,
    arithmetic: str = "float32",
) -> list[tuple[str, Optional[int]]]:
    """The best segmentation of ``text``: a list of (segment, id or None for unknown).

    Positions are processed left to right. From each start position every
    candidate piece (``lookup``) that starts there offers the path ending at
    its end position ``best[start] + score``; a strictly better offer
    replaces the stored path, so among equal offers the first one (the one
    that starts earliest) stays. Where no candidate covers exactly the one
    character at ``start``, an unknown segment of that character offers
    ``best[start] + unk_score``.

    ``arithmetic``: ``"float32"`` is sentencepiece's: every offer is rounded
    to float32 before it is compared and stored (scores are float32 already),
    and when the best score at ``start`` is beyond +-1e5 (strictly), that
    score is subtracted (float32) from every position reached so far, so the
    path ending at ``start`` scores 0 again. ``"float64"`` is HuggingFace
    tokenizers' (plain doubles, no shifting).
    """
    n = len(text)
    single = arithmetic == "float32"
    best = [_BestPath() for _ in range(n + 1)]
    for start in range(n):
        if single and abs(best[start].score) > REBASE_LIMIT:
            # sentencepiece keeps float32 scores small: every path reached so
            # far is shifted so that the one ending here scores 0.
            offset = best[start].score
            for position in range(start, min(n, start + max_piece_length) + 1):
                if best[position].start != -1:
                    best[position].score = f32(best[position].score - offset)
        here = best[start].score
        has_single_character = False
        for length in range(1, min(max_piece_length, n - start) + 1):
            found = lookup(text[start : start + length])
            if found is None:
                continue
            piece_id, score = found
            offer = f32(score + here) if single else score + here
            target = best[start + length]
            if target.start == -1 or offer > target.score:
                target.score = offer
                target.start = start
                target.id = piece_id
            if length == 1:
                has_single_character = True
        if not has_single_character:
            offer = f32(unk_score + here) if single else unk_score + here
            target = best[start + 1]
            if target.start == -1 or offer > target.score:
                target.score = offer
                target.start = start
                target.id = None
    segments = []
    end = n
    while end > 0:
        node = best[end]
        segments.append((text[node.start : end], node.id))
        end = node.start
    segments.reverse()
    return segments


def unigram_segments(model: SentencePieceModel, normalized: str) -> list[tuple[str, Optional[int]]]:
    """sentencepiece's unigram segmentation of ``normalized`` (ids; None for unknown)."""
    tables = _tables_of(model)
    scores, kinds = model.scores, model.kinds

    def lookup(piece: str) -> Optional[tuple[int, float]]:
        piece_id = tables.segment_ids.get(piece)
        if piece_id is None or kinds[piece_id] == "unused":
            return None
        if kinds[piece_id] == "user_defined":
            return piece_id, f32(len(piece.encode("utf-8")) * 0.1 - 0.1)
        return piece_id, scores[piece_id]

    unk_score = f32(tables.min_score - UNK_PENALTY)
    return best_path(normalized, lookup, tables.max_piece_length, unk_score, "float32")


# ---------------------------------------------------------------------------
# BPE: merges by score


@dataclass
class _Symbol:
    text: str
    prev: int
    next: int
    frozen: bool


def _split_symbols(text: str, user_defined: Sequence[str]) -> list[_Symbol]:
    """The characters of ``text``, except that a user-defined piece is one frozen symbol.

    At each position the longest user-defined piece that starts there wins.
    """
    by_length = sorted({len(piece) for piece in user_defined}, reverse=True)
    wanted = set(user_defined)
    symbols: list[_Symbol] = []
    position = 0
    while position < len(text):
        length = next((k for k in by_length if text[position : position + k] in wanted), 0)
        frozen = length > 0
        length = length or 1
        symbols.append(_Symbol(text[position : position + length], len(symbols) - 1, -1, frozen))
        position += length
    for index in range(len(symbols) - 1):
        symbols[index].next = index + 1
    return symbols


def bpe_segments(model: SentencePieceModel, normalized: str) -> list[tuple[str, Optional[int]]]:
    """sentencepiece's BPE segmentation of ``normalized`` (ids; unk_id for unknown)."""
    tables = _tables_of(model)
    symbols = _split_symbols(normalized, tables.user_defined)
    if not symbols:
        return []
    # Candidate merges: (-score, left index, right index, length of the result).
    # heapq pops the smallest: the highest score, then the leftmost.
    agenda: list[tuple[float, int, int, int]] = []
    # For an unused piece: the two symbols it was (last) made from.
    made_from: dict[str, tuple[str, str]] = {}

    def consider(left: int, right: int) -> None:
        if left == -1 or right == -1 or symbols[left].frozen or symbols[right].frozen:
            return
        merged = symbols[left].text + symbols[right].text
        piece_id = tables.segment_ids.get(merged)
        if piece_id is None:
            return
        heapq.heappush(agenda, (-model.scores[piece_id], left, right, len(merged)))
        if model.kinds[piece_id] == "unused":
            made_from[merged] = (symbols[left].text, symbols[right].text)

    for index in range(1, len(symbols)):
        consider(index - 1, index)

    while agenda:
        _, left, right, length = heapq.heappop(agenda)
        left_symbol, right_symbol = symbols[left], symbols[right]
        # Stale: one side was merged away, or the left side grew since.
        if (
            not left_symbol.text
            or not right_symbol.text
            or len(left_symbol.text) + len(right_symbol.text) != length
        ):
            continue
        left_symbol.text += right_symbol.text
        left_symbol.next = right_symbol.next
        if right_symbol.next != -1:
            symbols[right_symbol.next].prev = left
        right_symbol.text = ""
        consider(left_symbol.prev, left)
        consider(left, left_symbol.next)

    segments: list[tuple[str, Optional[int]]] = []

    def resegment(text: str) -> None:
        piece_id = piece_to_id(model, text)
        if piece_id is not None and model.kinds[piece_id] == "unused":
            if text in made_from:
                first, second = made_from[text]
                resegment(first)
                resegment(second)
            else:
                # An unused piece that was not made by a merge (a single
                # character): unknown, as sentencepiece 0.2.3 treats it.
                segments.append((text, model.unk_id))
        elif piece_id is not None and model.kinds[piece_id] == "control":
            # A character that is a control piece is no piece of text: unknown.
            segments.append((text, model.unk_id))
        else:
            segments.append((text, piece_id))

    index = 0
    while index != -1:
        resegment(symbols[index].text)
        index = symbols[index].next
    return segments


# ---------------------------------------------------------------------------
# Encoding and decoding


def byte_piece(byte: int) -> str:
    return f"<0x{byte:02X}>"


def segments_to_ids(
    model: SentencePieceModel, segments: Iterable[tuple[str, Optional[int]]]
) -> list[int]:
    """sentencepiece's PopulateSentencePieceText: byte fallback, or one id per run of unknowns."""
    ids: list[int] = []
    previous_unknown = False
    for text, piece_id in segments:
        unknown = piece_id is None or model.kinds[piece_id] == "unknown"
        if unknown and model.byte_fallback:
            for byte in text.encode("utf-8"):
                byte_id = piece_to_id(model, byte_piece(byte))
                if byte_id is None:
                    raise ValueError(f"the model has no byte piece {byte_piece(byte)}")
                ids.append(byte_id)
        elif unknown and previous_unknown:
            pass  # merged into the unknown before it
        elif unknown:
            if model.unk_id is None:
                raise ValueError(f"{text!r} has no piece and the model has no unknown piece")
            ids.append(model.unk_id)
        else:
            assert piece_id is not None
            ids.append(piece_id)
        previous_unknown = unknown
    return ids


def segment(model: SentencePieceModel, normalized: str) -> list[tuple[str, Optional[int]]]:
    """The segmentation of already normalized text (before unknown handling)."""
    if not normalized:
        return []
    if model.algorithm == "unigram":
        return unigram_segments(model, normalized)
    if model.algorithm == "bpe":
        return bpe_segments(model, normalized)
    raise ValueError(f"unknown algorithm {model.algorithm!r}")


def normalize_for(model: SentencePieceModel, text: Union[str, bytes]) -> str:
    """``text`` normalized as ``model`` does it (user-defined pieces exempt)."""
    return normalize(text, model.normalizer, _tables_of(model).user_defined)


def encode(model: SentencePieceModel, text: Union[str, bytes]) -> list[int]:
    """The ids of ``SentencePieceProcessor.encode(text)`` (no BOS/EOS)."""
    if model.pretokenizer is not None:
        raise ValueError(
            "a SentencePiece model with a BPE-side pre-tokenizer is not supported here"
        )
    if model.normalizer.split_on_whitespace:
        raise ValueError(
            "split_on_whitespace is HuggingFace's Metaspace pre-tokenizer; "
            "use bytepair.reference.hf_unigram for such models"
        )
    return segments_to_ids(model, segment(model, normalize_for(model, text)))


def encode_pieces(model: SentencePieceModel, text: Union[str, bytes]) -> list[str]:
    """The pieces of :func:`encode`'s ids."""
    return [model.pieces[i] for i in encode(model, text)]


def _byte_of(piece: str) -> int:
    return int(piece[3:5], 16)


def _decoded_parts(
    model: SentencePieceModel, ids: Iterable[int], unk_surface: str
) -> list[Union[str, bytes]]:
    """What :func:`decode` writes, piece by piece, before runs of byte pieces
    (the ``bytes`` items) become text."""
    normalizer = model.normalizer
    strips_bos_space = normalizer.add_dummy_prefix or normalizer.remove_extra_whitespaces
    pieces = []
    for piece_id in ids:
        if not 0 <= piece_id < len(model.pieces):
            raise IndexError(f"id {piece_id} is out of range (0..{len(model.pieces) - 1})")
        pieces.append(piece_id)

    out: list[Union[str, bytes]] = []
    pending_bytes = bytearray()
    expecting_bos_space = True
    bos_space_seen = False

    def flush_bytes() -> None:
        if pending_bytes:
            out.append(bytes(pending_bytes))
            pending_bytes.clear()

    for piece_id in pieces:
        piece, kind = model.pieces[piece_id], model.kinds[piece_id]
        if kind == "byte":
            pending_bytes.append(_byte_of(piece))
            continue
        flush_bytes()
        if bos_space_seen or any(out):
            expecting_bos_space = False
        bos_space_seen = False
        if kind == "control":
            continue
        if kind == "unknown":
            out.append(unk_surface)
            continue
        if expecting_bos_space and strips_bos_space:
            if piece.startswith(SPACE_SYMBOL):
                piece = piece[len(SPACE_SYMBOL) :]
                bos_space_seen = not normalizer.remove_extra_whitespaces
        out.append(piece.replace(SPACE_SYMBOL, " "))
    flush_bytes()
    return out


def decode(
    model: SentencePieceModel, ids: Iterable[int], unk_surface: str = DEFAULT_UNK_SURFACE
) -> str:
    """``SentencePieceProcessor.decode(ids)``.

    Control pieces decode to nothing, the unknown piece to ``unk_surface``
    (the file's trainer_spec.unk_surface), runs of byte pieces to their bytes
    as UTF-8 (each byte that does not start a valid character: U+FFFD), every
    other piece to its text with ``▁`` as a space. The leading ``▁`` of the
    first piece that writes text is dropped when the model adds a dummy
    prefix or removes extra whitespace; with remove_extra_whitespaces the
    leading ``▁`` of every piece until text appears is dropped.
    """
    return "".join(
        decode_utf8_like_sentencepiece(part) if isinstance(part, bytes) else part
        for part in _decoded_parts(model, ids, unk_surface)
    )


def decode_bytes(
    model: SentencePieceModel, ids: Iterable[int], unk_surface: str = DEFAULT_UNK_SURFACE
) -> bytes:
    """:func:`decode`'s text as UTF-8, except that byte pieces stay the bytes
    they stand for, valid UTF-8 or not (sentencepiece has no such call: its
    bytes are those of the text, with U+FFFD already in)."""
    return b"".join(
        part if isinstance(part, bytes) else part.encode("utf-8")
        for part in _decoded_parts(model, ids, unk_surface)
    )


__all__ = [
    "DEFAULT_UNK_SURFACE",
    "best_path",
    "bpe_segments",
    "decode",
    "decode_bytes",
    "encode",
    "encode_pieces",
    "f32",
    "normalize_for",
    "piece_to_id",
    "segment",
    "segments_to_ids",
    "unigram_segments",
]
