"""SentencePiece ``.model`` files, read without the protobuf package.

A ``.model`` file is one serialized ``sentencepiece.ModelProto`` message
(sentencepiece_model.proto, proto2). This module holds a small reader for the
protobuf wire format and the few fields that decide how text is encoded:

``ModelProto``
    1 pieces (repeated SentencePiece), 2 trainer_spec (TrainerSpec),
    3 normalizer_spec (NormalizerSpec), 5 denormalizer_spec (NormalizerSpec)
``SentencePiece``
    1 piece (string), 2 score (float), 3 type (enum: 1 NORMAL, 2 UNKNOWN,
    3 CONTROL, 4 USER_DEFINED, 5 UNUSED, 6 BYTE; default NORMAL)
``TrainerSpec``
    3 model_type (enum: 1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR; default UNIGRAM),
    4 vocab_size (default 8000), 24 treat_whitespace_as_suffix (default
    false), 35 byte_fallback (default false), 40 unk_id (0), 41 bos_id (1),
    42 eos_id (2), 43 pad_id (-1), 44 unk_surface (default " \u2047 "),
    45..48 unk/bos/eos/pad_piece
``NormalizerSpec``
    1 name, 2 precompiled_charsmap (bytes), 3 add_dummy_prefix (default
    true), 4 remove_extra_whitespaces (default true), 5 escape_whitespaces
    (default true)

Everything else (the other training options, self-test data, fields a newer
sentencepiece may add) is skipped. Protobuf rules followed: a field may come
in any order; a repeated scalar field keeps its last value; a message field
that appears twice is merged; an absent field has the default the .proto
file declares (not zero: ``add_dummy_prefix`` is true when absent).

What sentencepiece itself refuses we refuse too (no ``UNKNOWN`` piece or two
of them, an empty piece, a piece holding NUL, a byte piece that is not ``<0x00>``..``<0xFF>`` or
appears without ``byte_fallback``, ``byte_fallback`` without all 256 byte
pieces, a broken charsmap), plus what would make ids ambiguous here (the same
piece twice, in any kinds), invalid UTF-8 and absurd sizes. Every error is a
:class:`~bytepair.errors.FormatError` naming the file and the byte offset and
field where reading stopped.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union, cast

from ..errors import FormatError, warn
from ..model import SentencePieceModel, SentencePieceNormalizer
from .files import PathLike

FORMAT_NAME = "SentencePiece .model"

# A piece longer than this is not a subword; a file that says so is corrupt.
MAX_PIECE_BYTES = 1 << 20
# protobuf's own parsers stop at 100 nested messages or groups.
MAX_GROUP_DEPTH = 100

# Wire types of the protobuf encoding.
VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
START_GROUP = 3
END_GROUP = 4
FIXED32 = 5
WIRE_TYPE_NAMES = {
    VARINT: "varint",
    FIXED64: "64-bit",
    LENGTH_DELIMITED: "length-delimited",
    START_GROUP: "start-group",
    END_GROUP: "end-group",
    FIXED32: "32-bit",
}

# Enum values of sentencepiece_model.proto.
PIECE_TYPES = {
    1: "normal",
    2: "unknown",
    3: "control",
    4: "user_defined",
    5: "unused",
    6: "byte",
}
MODEL_TYPES = {1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"}
SUPPORTED_MODEL_TYPES = {"UNIGRAM": "unigram", "BPE": "bpe"}

DEFAULT_UNK_SURFACE = " \u2047 "
BYTE_PIECES = tuple(f"<0x{byte:02X}>" for byte in range(256))


# ---------------------------------------------------------------------------
# The parsed message, with the .proto file's defaults


@dataclass
class PieceProto:
    """One ``ModelProto.SentencePiece``."""

    piece: str = ""
    score: float = 0.0
    type: int = 1  # NORMAL
    offset: int = 0  # where the message starts in the file (for errors)


@dataclass
class TrainerSpecProto:
    """The ``TrainerSpec`` fields that matter after training."""

    model_type: int = 1  # UNIGRAM
    vocab_size: int = 8000
    treat_whitespace_as_suffix: bool = False
    byte_fallback: bool = False
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    unk_surface: str = DEFAULT_UNK_SURFACE
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"
    # Field numbers that were present (a default and an explicit value can differ in meaning).
    present: set[int] = field(default_factory=set)
    # Byte offset of each present field's last occurrence (for errors).
    offsets: dict[int, int] = field(default_factory=dict)


@dataclass
class NormalizerSpecProto:
    """A ``NormalizerSpec``."""

    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    present: set[int] = field(default_factory=set)
    offsets: dict[int, int] = field(default_factory=dict)


@dataclass
class ModelProto:
    """The parts of a ``ModelProto`` that encoding and decoding use."""

    pieces: list[PieceProto] = field(default_factory=list)
    trainer_spec: TrainerSpecProto = field(default_factory=TrainerSpecProto)
    normalizer_spec: NormalizerSpecProto = field(default_factory=NormalizerSpecProto)
    denormalizer_spec: Optional[NormalizerSpecProto] = None


# ---------------------------------------------------------------------------
# The wire format


@dataclass(frozen=True)
class WireField:
    """One field as it appears on the wire.

    ``value`` is an int for varint fields, and the raw bytes for the others
    (8 for 64-bit, 4 for 32-bit, the payload for length-delimited).
    ``payload_offset`` is where a length-delimited payload starts in the file.
    """

    number: int
    wire_type: int
    value: Union[int, bytes]
    offset: int
    payload_offset: int


class WireReader:
    """Reads protobuf fields out of ``data``; errors name ``source`` and the byte offset."""

    def __init__(self, data: bytes, source: str) -> None:
        self.data = data
        self.source = source

    def error(self, problem: str, offset: int, path: str) -> FormatError:
        return FormatError(self.source, problem, f"byte {offset}, {path}")

    def varint(self, pos: int, end: int, path: str) -> tuple[int, int]:
        """The varint at ``pos`` (at most 10 bytes, below ``end``) and the position after it."""
        start = pos
        value = 0
        shift = 0
        while True:
            if pos >= end:
                raise self.error("the file ends inside a varint (truncated file)", start, path)
            byte = self.data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
            if shift >= 70:
                raise self.error("a varint longer than 10 bytes", start, path)
        if value >= 1 << 64:
            raise self.error("a varint larger than 64 bits", start, path)
        return value, pos

    def fields(self, start: int, end: int, path: str) -> Iterator[WireField]:
        """The fields of the message stored in ``data[start:end]``, in file order."""
        pos = start
        while pos < end:
            offset = pos
            key, pos = self.varint(pos, end, path)
            number, wire_type = key >> 3, key & 7
            if number == 0:
                raise self.error("field number 0 (not a protobuf message)", offset, path)
            if wire_type == VARINT:
                value, pos = self.varint(pos, end, f"{path}.{number}")
                yield WireField(number, wire_type, value, offset, pos)
            elif wire_type in (FIXED64, FIXED32):
                size = 8 if wire_type == FIXED64 else 4
                if pos + size > end:
                    raise self.error(
                        f"the file ends inside a {size}-byte field (truncated file)",
                        offset,
                        f"{path}.{number}",
                    )
                yield WireField(number, wire_type, self.data[pos : pos + size], offset, pos)
                pos += size
            elif wire_type == LENGTH_DELIMITED:
                length, pos = self.varint(pos, end, f"{path}.{number}")
                if length > end - pos:
                    raise self.error(
                        f"a field of {length} bytes but only {end - pos} bytes are left "
                        "(truncated file)",
                        offset,
                        f"{path}.{number}",
                    )
                yield WireField(number, wire_type, self.data[pos : pos + length], offset, pos)
                pos += length
            elif wire_type == START_GROUP:
                # A deprecated proto2 group: nothing sentencepiece writes, but a
                # reader must be able to step over one.
                pos = self.skip_group(number, pos, end, f"{path}.{number}")
            elif wire_type == END_GROUP:
                raise self.error("an end-group marker without its start", offset, path)
            else:
                raise self.error(f"invalid wire type {wire_type}", offset, f"{path}.{number}")

    def skip_group(self, number: int, pos: int, end: int, path: str) -> int:
        """The position after the group ``number`` whose start marker ends at ``pos``.

        Iterative, with the open groups on a stack: a file of nested start
        markers must not exhaust Python's recursion limit.
        """
        open_groups = [(number, pos, path)]  # (number, offset after its start marker, path)
        while pos < end:
            offset = pos
            key, pos = self.varint(pos, end, path)
            inner, wire_type = key >> 3, key & 7
            if wire_type == END_GROUP:
                expected, _, _ = open_groups.pop()
                if inner != expected:
                    raise self.error(f"group {expected} closed as group {inner}", offset, path)
                if not open_groups:
                    return pos
                path = open_groups[-1][2]
            elif wire_type == VARINT:
                _, pos = self.varint(pos, end, path)
            elif wire_type == FIXED64:
                pos += 8
            elif wire_type == FIXED32:
                pos += 4
            elif wire_type == LENGTH_DELIMITED:
                length, pos = self.varint(pos, end, path)
                pos += length
            elif wire_type == START_GROUP:
                if len(open_groups) >= MAX_GROUP_DEPTH:
                    raise self.error(
                        f"groups nested more than {MAX_GROUP_DEPTH} deep (corrupt file)",
                        offset,
                        open_groups[0][2],
                    )
                path = f"{path}.{inner}"
                open_groups.append((inner, pos, path))
            else:
                raise self.error(f"invalid wire type {wire_type}", offset, path)
        _, start, path = open_groups[-1]
        raise self.error("the file ends inside a group (truncated file)", start, path)


# Field kinds: the wire type each must have, and how its value is read.
_WIRE_TYPE_OF_KIND = {
    "bool": VARINT,
    "int32": VARINT,
    "enum": VARINT,
    "float": FIXED32,
    "string": LENGTH_DELIMITED,
    "bytes": LENGTH_DELIMITED,
    "message": LENGTH_DELIMITED,
}


def _check_wire_type(
    reader: WireReader, wire: WireField, kind: str, path: str
) -> Union[int, bytes]:
    expected = _WIRE_TYPE_OF_KIND[kind]
    if wire.wire_type != expected:
        raise reader.error(
            f"field {path} ({kind}) has wire type {WIRE_TYPE_NAMES[wire.wire_type]}, "
            f"expected {WIRE_TYPE_NAMES[expected]}",
            wire.offset,
            path,
        )
    return wire.value


def _scalar(reader: WireReader, wire: WireField, kind: str, path: str) -> object:
    """The value of a scalar field of ``kind`` (bool, int32, enum, float, string, bytes)."""
    raw = _check_wire_type(reader, wire, kind, path)
    if kind == "bool":
        return raw != 0
    if kind in ("int32", "enum"):
        # int32 is written as the 64-bit two's complement varint; keep the low 32 bits.
        value = cast(int, raw) & 0xFFFFFFFF
        return value - (1 << 32) if value >= 1 << 31 else value
    data = cast(bytes, raw)  # the other kinds are fixed32 or length-delimited
    if kind == "float":
        return struct.unpack("<f", data)[0]
    if kind == "string":
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise reader.error(
                f"field {path} is not valid UTF-8 (byte 0x{data[exc.start]:02X} at offset "
                f"{exc.start} of the string)",
                wire.payload_offset + exc.start,
                path,
            ) from None
    return data


# (field number) -> (attribute name, kind)
_PIECE_FIELDS = {1: ("piece", "string"), 2: ("score", "float"), 3: ("type", "enum")}
_TRAINER_FIELDS = {
    3: ("model_type", "enum"),
    4: ("vocab_size", "int32"),
    24: ("treat_whitespace_as_suffix", "bool"),
    35: ("byte_fallback", "bool"),
    40: ("unk_id", "int32"),
    41: ("bos_id", "int32"),
    42: ("eos_id", "int32"),
    43: ("pad_id", "int32"),
    44: ("unk_surface", "string"),
    45: ("unk_piece", "string"),
    46: ("bos_piece", "string"),
    47: ("eos_piece", "string"),
    48: ("pad_piece", "string"),
}
_NORMALIZER_FIELDS = {
    1: ("name", "string"),
    2: ("precompiled_charsmap", "bytes"),
    3: ("add_dummy_prefix", "bool"),
    4: ("remove_extra_whitespaces", "bool"),
    5: ("escape_whitespaces", "bool"),
}


def _read_scalars(
    reader: WireReader,
    target: object,
    schema: dict[int, tuple[str, str]],
    start: int,
    end: int,
    path: str,
) -> None:
    """Set the known scalar fields of the message in ``data[start:end]`` on ``target``.

    Called again for a second occurrence of the same message field, which
    protobuf merges into the first: later values overwrite earlier ones.
    """
    for wire in reader.fields(start, end, path):
        if wire.number not in schema:
            continue  # unknown or unused field: skipped
        name, kind = schema[wire.number]
        field_path = f"{path}.{name}"
        _check_wire_type(reader, wire, kind, field_path)
        if name == "piece" and len(cast(bytes, wire.value)) > MAX_PIECE_BYTES:
            raise reader.error(
                f"a piece of {len(cast(bytes, wire.value))} bytes (more than {MAX_PIECE_BYTES}); the file "
                "is corrupt",
                wire.offset,
                field_path,
            )
        setattr(target, name, _scalar(reader, wire, kind, field_path))
        if hasattr(target, "present"):
            target.present.add(wire.number)
            cast(Any, target).offsets[wire.number] = wire.offset


def parse_model_proto(data: bytes, source: str) -> ModelProto:
    """The ``ModelProto`` serialized in ``data`` (fields this module knows; see the module doc)."""
    reader = WireReader(data, source)
    proto = ModelProto()
    for wire in reader.fields(0, len(data), "ModelProto"):
        if wire.number == 1:
            index = len(proto.pieces)
            path = f"ModelProto.pieces[{index}]"
            _check_wire_type(reader, wire, "message", path)
            piece = PieceProto(offset=wire.offset)
            payload_end = wire.payload_offset + len(cast(bytes, wire.value))
            _read_scalars(reader, piece, _PIECE_FIELDS, wire.payload_offset, payload_end, path)
            proto.pieces.append(piece)
        elif wire.number in (2, 3, 5):
            name = {2: "trainer_spec", 3: "normalizer_spec", 5: "denormalizer_spec"}[wire.number]
            path = f"ModelProto.{name}"
            _check_wire_type(reader, wire, "message", path)
            if wire.number == 2:
                target: object = proto.trainer_spec
                schema = _TRAINER_FIELDS
            elif wire.number == 3:
                target, schema = proto.normalizer_spec, _NORMALIZER_FIELDS
            else:
                if proto.denormalizer_spec is None:
                    proto.denormalizer_spec = NormalizerSpecProto()
                target, schema = proto.denormalizer_spec, _NORMALIZER_FIELDS
            payload_end = wire.payload_offset + len(cast(bytes, wire.value))
            _read_scalars(reader, target, schema, wire.payload_offset, payload_end, path)
        # Other fields (self_test_data, newer additions) are skipped.
    return proto


# ---------------------------------------------------------------------------
# From the message to a SentencePieceModel


def check_charsmap(blob: bytes, source: str, where: str) -> None:
    """FormatError unless ``blob`` has the precompiled charsmap layout.

    Layout: a 4-byte little-endian size of the trie, the trie (darts-clone
    double-array units of 4 bytes), then the replacement strings. An empty
    blob means no normalization. (The trie itself is checked where it is
    walked, in :mod:`bytepair.reference.normalize`.)
    """
    if not blob:
        return
    if len(blob) <= 4:
        raise FormatError(source, f"the charsmap has {len(blob)} bytes, too few for a trie", where)
    (trie_size,) = struct.unpack_from("<I", blob, 0)
    if trie_size % 4 != 0 or trie_size == 0:
        raise FormatError(
            source, f"the charsmap's trie size {trie_size} is not a positive multiple of 4", where
        )
    if 4 + trie_size > len(blob):
        raise FormatError(
            source,
            f"the charsmap's trie size {trie_size} exceeds the {len(blob) - 4} bytes that follow",
            where,
        )


def _normalizer_from(
    spec: NormalizerSpecProto, trainer: TrainerSpecProto, source: str, where: str
) -> SentencePieceNormalizer:
    check_charsmap(spec.precompiled_charsmap, source, where)
    return SentencePieceNormalizer(
        precompiled_charsmap=spec.precompiled_charsmap,
        add_dummy_prefix=spec.add_dummy_prefix,
        remove_extra_whitespaces=spec.remove_extra_whitespaces,
        escape_whitespaces=spec.escape_whitespaces,
        treat_whitespace_as_suffix=trainer.treat_whitespace_as_suffix,
        split_on_whitespace=False,
    )


def model_from_proto(proto: ModelProto, source: str) -> SentencePieceModel:
    """Check ``proto`` and turn it into a :class:`SentencePieceModel`."""
    trainer = proto.trainer_spec

    def where_trainer(number: int) -> str:
        name = _TRAINER_FIELDS[number][0]
        if number in trainer.offsets:
            return f"byte {trainer.offsets[number]}, ModelProto.trainer_spec.{name}"
        return f"ModelProto.trainer_spec.{name} (absent: default)"

    model_type = MODEL_TYPES.get(trainer.model_type)
    if model_type is None:
        raise FormatError(source, f"unknown model_type {trainer.model_type}", where_trainer(3))
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise FormatError(
            source,
            f"model_type {model_type} is not supported (bytepair reads UNIGRAM and BPE models)",
            where_trainer(3),
        )
    if not proto.pieces:
        raise FormatError(source, "the vocabulary is empty (no pieces)", "ModelProto.pieces")

    pieces: list[str] = []
    scores: list[float] = []
    kinds: list[str] = []
    first_id: dict[str, int] = {}
    unk_id: Optional[int] = None
    byte_ids: dict[str, int] = {}
    for index, piece in enumerate(proto.pieces):
        where = f"byte {piece.offset}, ModelProto.pieces[{index}]"
        kind = PIECE_TYPES.get(piece.type)
        if kind is None:
            raise FormatError(source, f"unknown piece type {piece.type}", where)
        if not piece.piece:
            raise FormatError(source, "an empty piece", where)
        if "\0" in piece.piece:  # sentencepiece: "piece must not include null character"
            raise FormatError(source, f"the piece {piece.piece!r} holds a NUL character", where)
        if not math.isfinite(piece.score):  # sentencepiece: "score is NaN or Inf"
            raise FormatError(
                source, f"the score of {piece.piece!r} is {piece.score} (NaN or Inf)", where
            )
        if piece.piece in first_id:
            raise FormatError(
                source,
                f"the piece {piece.piece!r} appears twice (ids {first_id[piece.piece]} and "
                f"{index})",
                where,
            )
        first_id[piece.piece] = index
        if kind == "unknown":
            if unk_id is not None:
                raise FormatError(
                    source, f"two unknown pieces (ids {unk_id} and {index}); one is allowed", where
                )
            unk_id = index
        if kind == "byte":
            if not trainer.byte_fallback:
                raise FormatError(
                    source,
                    f"byte piece {piece.piece!r} although byte_fallback is false",
                    where,
                )
            if piece.piece not in BYTE_PIECES:
                raise FormatError(
                    source, f"byte piece {piece.piece!r} is not one of <0x00>..<0xFF>", where
                )
            byte_ids[piece.piece] = index
        pieces.append(piece.piece)
        scores.append(piece.score)
        kinds.append(kind)

    if unk_id is None:
        raise FormatError(source, "no piece has type UNKNOWN (sentencepiece needs one)", "pieces")
    if not 0 <= trainer.unk_id < len(pieces):
        raise FormatError(
            source,
            f"unk_id {trainer.unk_id} is out of range for {len(pieces)} pieces",
            where_trainer(40),
        )
    if trainer.byte_fallback and len(byte_ids) != 256:
        missing = [piece for piece in BYTE_PIECES if piece not in byte_ids]
        raise FormatError(
            source,
            f"byte_fallback is true but {len(missing)} byte pieces are missing "
            f"(first: {missing[0]})",
            where_trainer(35),
        )

    normalizer = _normalizer_from(
        proto.normalizer_spec, trainer, source, "ModelProto.normalizer_spec.precompiled_charsmap"
    )
    denormalizer = proto.denormalizer_spec
    if denormalizer is not None and denormalizer.precompiled_charsmap:
        warn(
            f"{source}: the model has a denormalizer (rules applied after decoding); "
            "bytepair's decode does not apply it"
        )
    return SentencePieceModel(
        pieces=tuple(pieces),
        scores=tuple(scores),
        kinds=tuple(kinds),
        unk_id=unk_id,
        algorithm=SUPPORTED_MODEL_TYPES[model_type],
        byte_fallback=trainer.byte_fallback,
        normalizer=normalizer,
        pretokenizer=None,
    )


def loads(data: bytes, source: str = "<bytes>") -> SentencePieceModel:
    """The model serialized in ``data`` (the bytes of a ``.model`` file)."""
    return model_from_proto(parse_model_proto(bytes(data), source), source)


def load_proto(path: PathLike) -> ModelProto:
    """The raw message of the ``.model`` file at ``path`` (for what the model does not hold)."""
    return parse_model_proto(_read_bytes(path), str(path))


def load(path: PathLike) -> SentencePieceModel:
    """The model in the ``.model`` file at ``path``."""
    return loads(_read_bytes(path), str(path))


def unk_surface(proto: ModelProto) -> str:
    """The text sentencepiece's decode writes for the unknown piece (``" \u2047 "`` by default)."""
    return proto.trainer_spec.unk_surface


def _read_bytes(path: PathLike) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise FormatError(path, "no such file") from None
    except IsADirectoryError:
        raise FormatError(path, f"is a directory, expected a {FORMAT_NAME} file") from None


__all__ = [
    "MAX_GROUP_DEPTH",
    "MAX_PIECE_BYTES",
    "ModelProto",
    "NormalizerSpecProto",
    "PieceProto",
    "TrainerSpecProto",
    "WireReader",
    "check_charsmap",
    "load",
    "load_proto",
    "loads",
    "model_from_proto",
    "parse_model_proto",
    "unk_surface",
]
