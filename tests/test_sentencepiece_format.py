"""SentencePiece ``.model`` files and the readable reference encoder.

Oracle: the ``sentencepiece`` package (0.2.3 in the environment) on the four shared
``.model`` files (two unigram, two BPE) and on small models trained here with the
options the shared files lack (user-defined and control pieces, byte fallback,
whitespace as suffix, no dummy prefix, unused pieces). Covered:

1. ``formats.sentencepiece``: every piece, score and kind as sentencepiece reads them;
   protobuf rules (defaults, unknown fields, merged messages, negative int32); every
   malformed file is a FormatError naming the file and the byte offset.
2. ``reference.normalize``: sentencepiece's ``normalize`` on vectors, corpora, bytes
   that are not UTF-8 and hypothesis text.
3. ``reference.sentencepiece``: ``encode`` ids (and ``decode`` text) on all 1704 recorded
   vectors, sampled corpus lines and paragraphs (whole-file paragraphs included: the
   float32 rebase rule), and hypothesis text; the measured rules (float32 ties,
   user-defined score, unknown runs, unused pieces in BPE) each have a focused test.

Shared data comes from BYTEPAIR_SHARED_DATA (see conftest); the sampling keeps this
file at a few seconds.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import struct
from importlib import metadata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair.errors import FormatError
from bytepair.formats import sentencepiece as spfile
from bytepair.reference import sentencepiece as ref
from bytepair.reference.normalize import (
    Charsmap,
    decode_utf8_like_sentencepiece,
    normalize,
)

MODEL_NAMES = (
    "sp_test_model",
    "sp_test_ja_model",
    "llama2_tokenizer",
    "bpemb_en.wiki.bpe.vs100000",
)
KIND_OF_TYPE = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}


def _spm():
    return pytest.importorskip("sentencepiece", reason="the sentencepiece package is the oracle")


def _spm_version() -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in metadata.version("sentencepiece").split(".")[:3])
    except metadata.PackageNotFoundError:
        return ()


# sentencepiece 0.2.3 reads a character that is an unused or a control piece of a BPE
# model as unknown, and bytepair gives its ids; the releases before it (0.2.2 is the
# last for Python 3.9) encode such a character with that piece.
unknown_pieces_as_in_0_2_3 = pytest.mark.skipif(
    (0,) < _spm_version() < (0, 2, 3),
    reason="sentencepiece < 0.2.3 encodes unused and control pieces of BPE models",
)


# ---------------------------------------------------------------------------
# A small protobuf writer (for crafted and broken files)


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def _int_field(number: int, value: int) -> bytes:
    return _key(number, 0) + _varint(value)


def _bytes_field(number: int, value) -> bytes:
    data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    return _key(number, 2) + _varint(len(data)) + data


def _float_field(number: int, value: float) -> bytes:
    return _key(number, 5) + struct.pack("<f", value)


TYPE_OF_KIND = {kind: number for number, kind in KIND_OF_TYPE.items()}


def _piece(piece, score: float = 0.0, kind: str = "normal") -> bytes:
    body = _bytes_field(1, piece) + _float_field(2, score)
    if kind != "normal":
        body += _int_field(3, TYPE_OF_KIND[kind])
    return _bytes_field(1, body)


def _model_bytes(
    pieces,
    *,
    model_type: int = 1,
    byte_fallback=None,
    trainer_extra: bytes = b"",
    normalizer: bytes = b"",
    with_normalizer: bool = True,
) -> bytes:
    """A ModelProto: pieces as (piece, score, kind); identity normalization by default."""
    out = b"".join(_piece(*entry) for entry in pieces)
    trainer = _int_field(3, model_type) + _int_field(4, len(pieces))
    if byte_fallback is not None:
        trainer += _int_field(35, int(byte_fallback))
    out += _bytes_field(2, trainer + trainer_extra)
    if with_normalizer:
        out += _bytes_field(3, _bytes_field(1, "identity") + normalizer)
    return out


BASIC = [("<unk>", 0.0, "unknown"), ("<s>", 0.0, "control"), ("▁", -1.0), ("a", -2.0), ("b", -3.0)]


# ---------------------------------------------------------------------------
# Shared files


@pytest.fixture(scope="module")
def sp_dir(shared_data: Path) -> Path:
    return shared_data / "models" / "sentencepiece"


@pytest.fixture(scope="module")
def models(sp_dir: Path) -> dict:
    found = {}
    for name in MODEL_NAMES:
        path = sp_dir / f"{name}.model"
        if not path.is_file():
            pytest.skip(f"{path} is missing from the shared data")
        found[name] = (spfile.load(path), spfile.load_proto(path).trainer_spec.unk_surface)
    return found


@pytest.fixture(scope="module")
def processors(sp_dir: Path) -> dict:
    spm = _spm()
    return {
        name: spm.SentencePieceProcessor(model_file=str(sp_dir / f"{name}.model"))
        for name in MODEL_NAMES
    }


@pytest.fixture(scope="module")
def sample_texts(shared_data: Path) -> list[str]:
    """Vector texts, tricky strings, corpus lines and paragraphs, a multilingual slice."""
    texts = json.loads((shared_data / "vectors" / "tricky_strings.json").read_text("utf-8"))
    rng = random.Random(20261129)
    for path in sorted((shared_data / "corpus" / "small").glob("*.txt")):
        raw = path.read_bytes().decode("utf-8")
        lines = raw.splitlines(keepends=True)
        texts += rng.sample(lines, min(150, len(lines)))
        paragraphs = [p for p in raw.replace("\r\n", "\n").split("\n\n") if p]
        texts += [p[:4000] for p in rng.sample(paragraphs, min(8, len(paragraphs)))]
    large = shared_data / "corpus" / "large_multilingual.txt.gz"
    if large.is_file():
        with gzip.open(large, "rt", encoding="utf-8") as file:
            documents = file.read(300_000).split("\n\n")[:-1]
        texts += [d[:3000] for d in rng.sample(documents, min(80, len(documents)))]
    return list(dict.fromkeys(texts))


@pytest.mark.slow
def test_pieces_scores_kinds_as_sentencepiece_reads_them(models, processors):
    for name in MODEL_NAMES:
        model, _ = models[name]
        sp = processors[name]
        assert len(model.pieces) == sp.get_piece_size()
        assert model.unk_id == sp.unk_id()
        for index in range(len(model.pieces)):
            assert model.pieces[index] == sp.id_to_piece(index)
            assert model.scores[index] == sp.get_score(index)
            kind = model.kinds[index]
            assert (kind == "unknown") == sp.is_unknown(index)
            assert (kind == "control") == sp.is_control(index)
            assert (kind == "unused") == sp.is_unused(index)
            assert (kind == "byte") == sp.is_byte(index)


def test_model_settings(models):
    expected = {
        "sp_test_model": ("unigram", False, True, True),
        "sp_test_ja_model": ("unigram", False, True, True),
        "llama2_tokenizer": ("bpe", True, True, False),
        "bpemb_en.wiki.bpe.vs100000": ("bpe", False, True, True),
    }
    for name, (algorithm, byte_fallback, dummy, remove_extra) in expected.items():
        model, unk_surface = models[name]
        assert model.algorithm == algorithm
        assert model.byte_fallback is byte_fallback
        assert model.normalizer.add_dummy_prefix is dummy
        assert model.normalizer.remove_extra_whitespaces is remove_extra
        assert model.normalizer.escape_whitespaces is True
        assert model.normalizer.split_on_whitespace is False
        assert bool(model.normalizer.precompiled_charsmap) is (name != "llama2_tokenizer")
        assert unk_surface == " \u2047 "


# ---------------------------------------------------------------------------
# Recorded vectors: all of them


def test_all_vectors(shared_data: Path, models):
    path = shared_data / "vectors" / "sentencepiece_vectors.jsonl"
    records = [json.loads(line) for line in path.read_text("utf-8").split("\n") if line]
    assert len(records) == 1704
    for record in records:
        model, unk_surface = models[record["model"]]
        assert ref.encode(model, record["text"]) == record["ids"], record
        assert ref.decode(model, record["ids"], unk_surface) == record["decoded"], record


# ---------------------------------------------------------------------------
# Against the sentencepiece package


def test_normalize_matches_sentencepiece(models, processors, sample_texts):
    for name in MODEL_NAMES:
        model, _ = models[name]
        for text in sample_texts[::3]:
            assert ref.normalize_for(model, text) == processors[name].normalize(text), (name, text)


@pytest.mark.slow
def test_encode_decode_match_sentencepiece(models, processors, sample_texts):
    for name in MODEL_NAMES:
        model, unk_surface = models[name]
        sp = processors[name]
        for text in sample_texts:
            ids = sp.encode(text)
            assert ref.encode(model, text) == ids, (name, text[:200])
            assert ref.decode(model, ids, unk_surface) == sp.decode(ids), (name, text[:200])


@pytest.mark.slow
def test_whole_file_paragraphs(shared_data: Path, models, processors):
    """Paragraphs of ~100k characters: path scores pass 1e5 and get shifted back."""
    raw = (shared_data / "corpus" / "small" / "taylorswift.txt").read_text("utf-8")
    text = max(raw.split("\n\n"), key=len)[:70_000]
    for name in ("sp_test_model", "sp_test_ja_model"):
        assert ref.encode(models[name][0], text) == processors[name].encode(text), name


def test_rebase_changes_ties(models, processors):
    """float32 accumulation alone picks "k"+"est"; sentencepiece shifts scores past 1e5."""
    model = models["sp_test_model"][0]
    text = "ab" * 15000 + "Darkest"
    ids = processors["sp_test_model"].encode(text)
    assert ref.encode(model, text) == ids
    assert [model.pieces[i] for i in ids[-2:]] == ["ke", "st"]


def test_bytes_that_are_not_utf8(models, processors):
    rng = random.Random(3)
    alphabet = [0x20, 0x61, 0xE2, 0x96, 0x81, 0x80, 0xC3, 0xA9, 0xFF, 0xF0, 0x9F, 0x98, 0x0A]
    samples = [b"\xe2\x82", b"a\xffb", b"\xc0\xaf", b"\xed\xa0\x80x", b"\xf4\x90\x80\x80"]
    samples += [bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 10))) for _ in range(150)]
    for name in MODEL_NAMES:
        model, _ = models[name]
        sp = processors[name]
        for data in samples:
            assert ref.normalize_for(model, data) == sp.normalize(data).decode(), (name, data)
            assert ref.encode(model, data) == sp.encode(data), (name, data)


def test_decode_random_ids(models, processors):
    rng = random.Random(4)
    for name in MODEL_NAMES:
        model, unk_surface = models[name]
        notable = [i for i, kind in enumerate(model.kinds) if kind != "normal"]
        notable += [i for i, piece in enumerate(model.pieces) if piece.startswith("▁")][:40]
        for _ in range(300):
            ids = [
                rng.choice(notable) if rng.random() < 0.6 else rng.randrange(len(model.pieces))
                for _ in range(rng.randint(0, 8))
            ]
            assert ref.decode(model, ids, unk_surface) == processors[name].decode(ids), ids
    with pytest.raises(IndexError):
        ref.decode(models["sp_test_model"][0], [10**6])


TRICKY_CHARS = "ab fo▁é日本😀\u3000\u200b\t\n\r\x00\u0301ｶﾞﬁ①-."


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(TRICKY_CHARS) | st.characters(), max_size=40))
def test_hypothesis_text(models, processors, text):
    for name in ("sp_test_model", "llama2_tokenizer"):
        model, _ = models[name]
        sp = processors[name]
        if any(0xD800 <= ord(char) <= 0xDFFF for char in text):
            continue  # not encodable as UTF-8
        assert ref.normalize_for(model, text) == sp.normalize(text)
        assert ref.encode(model, text) == sp.encode(text)


# ---------------------------------------------------------------------------
# Models trained here (options the shared files lack)


def _train(text: str, **options) -> bytes:
    spm = _spm()
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text.splitlines()), model_writer=out, minloglevel=2, **options
    )
    return out.getvalue()


def _with_unused(data: bytes) -> bytes:
    """The same model with every 7th normal piece (from id 3) made unused."""
    proto = spfile.parse_model_proto(data, "<trained>")
    pieces = []
    for index, piece in enumerate(proto.pieces):
        kind = KIND_OF_TYPE[piece.type]
        if kind == "normal" and index % 7 == 3:
            kind = "unused"
        pieces.append((piece.piece, piece.score, kind))
    spec = proto.normalizer_spec
    normalizer = (
        _bytes_field(2, spec.precompiled_charsmap)
        + _int_field(3, spec.add_dummy_prefix)
        + _int_field(4, spec.remove_extra_whitespaces)
        + _int_field(5, spec.escape_whitespaces)
    )
    trainer = proto.trainer_spec
    return _model_bytes(
        pieces,
        model_type=trainer.model_type,
        byte_fallback=trainer.byte_fallback,
        trainer_extra=_int_field(24, trainer.treat_whitespace_as_suffix),
        normalizer=normalizer,
    )


TRAINED = {
    "unigram, user-defined, control, byte fallback": dict(
        model_type="unigram",
        vocab_size=500,
        user_defined_symbols=["<sep>", "foo", "ab", "▁the▁"],
        control_symbols=["<ctl>"],
        byte_fallback=True,
    ),
    "bpe, user-defined": dict(
        model_type="bpe", vocab_size=500, user_defined_symbols=["<sep>", "ab"]
    ),
    "bpe, user-defined across spaces, byte fallback": dict(
        model_type="bpe",
        vocab_size=500,
        user_defined_symbols=["▁the▁", "o▁f", "▁▁"],
        byte_fallback=True,
    ),
    "unigram, whitespace as suffix": dict(
        model_type="unigram", vocab_size=400, treat_whitespace_as_suffix=True
    ),
    "bpe, no dummy prefix, extra whitespace kept": dict(
        model_type="bpe", vocab_size=400, add_dummy_prefix=False, remove_extra_whitespaces=False
    ),
    "unigram, nmt_nfkc_cf": dict(
        model_type="unigram", vocab_size=400, normalization_rule_name="nmt_nfkc_cf"
    ),
}


@pytest.fixture(scope="module")
def trained(shared_data: Path) -> dict:
    text = (shared_data / "corpus" / "small" / "botchan.txt").read_text("utf-8")[:60_000]
    built = {}
    for name, options in TRAINED.items():
        built[name] = _train(text, **options)
    built["bpe with unused pieces"] = _with_unused(built["bpe, user-defined"])
    built["unigram with unused pieces"] = _with_unused(
        built["unigram, user-defined, control, byte fallback"]
    )
    return built


@pytest.fixture(scope="module")
def trained_texts(sample_texts) -> list[str]:
    rng = random.Random(5)
    texts = sample_texts[::4] + [
        "foo<sep>bar",
        "abab  <sep> <sep><sep> ab",
        " the the  the ",
        "a▁b ▁ ▁▁",
        "<ctl> x",
        "ＡＢＣ ｶﾞ ﬁ ①",
    ]
    alphabet = "ab fo<sep>xyz\t\n▁é日本😀\u3000\u200b\x00"
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25))) for _ in range(150)]
    return texts


@pytest.mark.slow
@unknown_pieces_as_in_0_2_3
def test_trained_models(trained, trained_texts):
    spm = _spm()
    for name, data in trained.items():
        sp = spm.SentencePieceProcessor(model_proto=data)
        model = spfile.loads(data, name)
        unk_surface = spfile.parse_model_proto(data, name).trainer_spec.unk_surface
        for text in trained_texts:
            assert ref.normalize_for(model, text) == sp.normalize(text), (name, text)
            ids = sp.encode(text)
            assert ref.encode(model, text) == ids, (name, text)
            assert ref.decode(model, ids, unk_surface) == sp.decode(ids), (name, text)


@unknown_pieces_as_in_0_2_3
def test_trained_models_in_the_core(trained, trained_texts, tmp_path):
    """The core (a loaded file) encodes and decodes as sentencepiece does,
    also on long texts whose words repeat (the BPE core merges the runs no
    piece crosses one by one, and a repeated run once), and on random ids
    (control, unknown and byte pieces among them); decode_bytes is the
    reference's."""
    import bytepair

    spm = _spm()
    rng = random.Random(7)
    long_texts = [" ".join(rng.sample(trained_texts, 40)) for _ in range(10)]
    for index, (name, data) in enumerate(trained.items()):
        path = tmp_path / f"{index}.model"
        path.write_bytes(data)
        core, sp = bytepair.load(path), spm.SentencePieceProcessor(model_proto=data)
        model = spfile.loads(data, name)
        unk_surface = spfile.parse_model_proto(data, name).trainer_spec.unk_surface
        special = [i for i, k in enumerate(model.kinds) if k not in ("normal", "user_defined")]
        id_lists = [sp.encode(text) for text in trained_texts + long_texts]
        for _ in range(300):
            pool = special if rng.random() < 0.5 else range(len(model.pieces))
            id_lists.append([rng.choice(pool) for _ in range(rng.randrange(8))])
        for text, ids in zip(trained_texts + long_texts, id_lists):
            assert core.encode_ordinary(text) == ids, (name, text)
        for ids in id_lists:
            assert core.decode(ids) == sp.decode(ids), (name, ids)
            assert core.decode_bytes(ids) == ref.decode_bytes(model, ids, unk_surface), (name, ids)


# ---------------------------------------------------------------------------
# The measured rules, on crafted models


def test_user_defined_score_is_bytes_times_a_tenth():
    """A user-defined piece of n bytes scores float32(n * 0.1 - 0.1), whatever the scores."""
    spm = _spm()
    for user_defined, other in (("ab", 0.09), ("ab", 0.11), ("日本", 0.49), ("日本", 0.51)):
        pieces = [
            ("<unk>", 0.0, "unknown"),
            ("▁", 0.0),
            (user_defined, -50.0, "user_defined"),
            ("▁" + user_defined, other),  # starts earlier: wins ties
            ("q", 7.0),
        ] + [(char, -20.0) for char in user_defined]
        data = _model_bytes(pieces)
        model = spfile.loads(data)
        expected = spm.SentencePieceProcessor(model_proto=data).encode(user_defined)
        assert ref.encode(model, user_defined) == expected
        bonus = len(user_defined.encode()) * 0.1 - 0.1
        assert (len(expected) == 2) == (other < bonus)


def test_unknown_runs_merge_without_byte_fallback():
    model = spfile.loads(_model_bytes(BASIC))
    assert ref.encode(model, "xyz a") == [2, 0, 2, 3]  # ▁, one unk for "xyz", ▁, a
    assert ref.encode(model, "xy ") == [2, 0]


@unknown_pieces_as_in_0_2_3
def test_bpe_unused_single_character_is_unknown():
    spm = _spm()
    pieces = BASIC + [("ab", -0.5, "unused"), ("abb", -0.1), ("c", -1.0, "unused")]
    data = _model_bytes(pieces, model_type=2)
    model = spfile.loads(data)
    sp = spm.SentencePieceProcessor(model_proto=data)
    for text in ("abb", "ab", "c", "abc", "cc ab", "ababb"):
        assert ref.encode(model, text) == sp.encode(text), text


@unknown_pieces_as_in_0_2_3
def test_bpe_character_that_is_a_control_piece_is_unknown(tmp_path):
    """sentencepiece takes a character that is a control piece as unknown (one <unk> a run,
    or its bytes with byte fallback); the reference and the core (a loaded file) agree."""
    import bytepair

    spm = _spm()
    bytes_pieces = [(f"<0x{b:02X}>", 0.0, "byte") for b in range(256)]
    for extra, fallback in (([], None), (bytes_pieces, True)):
        pieces = BASIC + [("c", -1.0, "control"), ("ab", -0.5)] + extra
        data = _model_bytes(pieces, model_type=2, byte_fallback=fallback)
        (tmp_path / "m.model").write_bytes(data)
        model, core = spfile.loads(data), bytepair.load(tmp_path / "m.model")
        sp = spm.SentencePieceProcessor(model_proto=data)
        for text in ("c", "abc", "xc a", "cc ab", "a c"):
            want = sp.encode(text)
            assert ref.encode(model, text) == want, (text, fallback)
            assert core.encode_ordinary(text) == want, (text, fallback)


def test_rebase_limit_is_strict():
    """Scores of exactly -1e5 are not shifted, anything beyond is."""
    spm = _spm()
    for a_score in (-4.0, 4.0):
        for count in (24999, 25000):
            pieces = [
                ("<unk>", 0.0, "unknown"),
                ("▁", a_score),
                ("a", a_score),
                ("Q", -2.3),
                ("Z", -2.9),
                ("QZ", -5.199999),
                ("w", -50.0),
            ]
            data = _model_bytes(pieces)
            text = "a" * count + "QZ"
            expected = spm.SentencePieceProcessor(model_proto=data).encode(text)
            assert ref.encode(spfile.loads(data), text) == expected


def test_float32_helper():
    assert ref.f32(0.1) == struct.unpack("<f", struct.pack("<f", 0.1))[0]
    assert ref.f32(1.0 + 2.0**-24) == 1.0  # ties to even
    assert ref.f32(1.0 + 3 * 2.0**-24) == 1.0 + 2.0**-22


def test_decode_utf8_byte_by_byte():
    assert decode_utf8_like_sentencepiece(b"\xe2\x82") == "\ufffd\ufffd"
    assert decode_utf8_like_sentencepiece(b"\xed\xa0\x80") == "\ufffd" * 3
    assert decode_utf8_like_sentencepiece("é▁".encode()) == "é▁"


# ---------------------------------------------------------------------------
# The wire format: protobuf rules


def test_defaults_of_absent_fields():
    model = spfile.loads(_model_bytes(BASIC, with_normalizer=False))
    assert model.normalizer.add_dummy_prefix is True
    assert model.normalizer.remove_extra_whitespaces is True
    assert model.normalizer.escape_whitespaces is True
    assert model.algorithm == "unigram" and model.byte_fallback is False
    proto = spfile.parse_model_proto(_model_bytes(BASIC), "<x>")
    assert (proto.trainer_spec.bos_id, proto.trainer_spec.pad_id) == (1, -1)


def test_explicit_false_and_negative_int32():
    normalizer = _int_field(3, 0) + _int_field(4, 0) + _int_field(5, 0)
    extra = _int_field(43, -1) + _int_field(41, -1)
    data = _model_bytes(BASIC, normalizer=normalizer, trainer_extra=extra)
    model = spfile.loads(data)
    assert not model.normalizer.add_dummy_prefix
    assert not model.normalizer.remove_extra_whitespaces
    assert not model.normalizer.escape_whitespaces
    proto = spfile.parse_model_proto(data, "<x>")
    assert (proto.trainer_spec.bos_id, proto.trainer_spec.pad_id) == (-1, -1)


def test_unknown_fields_are_skipped():
    group = _key(77, 3) + _int_field(1, 5) + _bytes_field(2, b"x") + _key(77, 4)
    unknown = _int_field(99, 12345) + _bytes_field(100, b"\x01\x02") + _key(101, 1) + b"\0" * 8
    piece_with_extra = _bytes_field(
        1, _bytes_field(1, "c") + _float_field(2, -4.0) + _int_field(9, 1)
    )
    data = _model_bytes(BASIC) + unknown + group + piece_with_extra
    model = spfile.loads(data)
    assert model.pieces[-1] == "c" and model.scores[-1] == -4.0 and len(model.pieces) == 6


def test_nested_groups_are_skipped_without_recursion():
    depth = spfile.MAX_GROUP_DEPTH
    inner = _int_field(1, 5) + _bytes_field(2, b"x")
    nested = b"".join(_key(70 + i, 3) + inner for i in range(depth))
    nested += b"".join(_key(70 + i, 4) for i in reversed(range(depth)))
    model = spfile.loads(_model_bytes(BASIC) + nested + _bytes_field(1, _bytes_field(1, "c")))
    assert model.pieces[-1] == "c" and len(model.pieces) == 6


@pytest.mark.parametrize("data", [b"\x0b" * 3000, b"\x0b" * 101 + b"\x0c" * 101])
def test_groups_nested_too_deep_are_a_format_error(data, tmp_path, capsys):
    from bytepair.cli import main

    error = _error(data)
    assert error.where == "byte 100, ModelProto.1"
    assert f"nested more than {spfile.MAX_GROUP_DEPTH} deep" in error.problem
    path = tmp_path / "deep.model"
    path.write_bytes(data)
    assert main(["encode", "-t", str(path), "hi"]) == 1
    assert capsys.readouterr().err.startswith(f"bytepair: error: {path} (byte 100, ModelProto.1)")


def test_group_errors_name_the_group():
    unclosed = _key(7, 3) + _key(8, 3) + _int_field(1, 5)
    error = _error(_model_bytes(BASIC) + unclosed)
    assert "ends inside a group" in error.problem and error.where.endswith("ModelProto.7.8")
    crossed = _key(7, 3) + _key(8, 3) + _key(7, 4) + _key(8, 4)
    error = _error(_model_bytes(BASIC) + crossed)
    assert "group 8 closed as group 7" in error.problem and error.where.endswith("ModelProto.7.8")


def test_repeated_messages_merge():
    data = _model_bytes(BASIC) + _bytes_field(2, _int_field(35, 0) + _int_field(24, 1))
    model = spfile.loads(data)
    assert model.normalizer.treat_whitespace_as_suffix is True
    assert model.algorithm == "unigram"  # model_type from the first occurrence stays


# ---------------------------------------------------------------------------
# Malformed files


def _error(data: bytes, source: str = "bad.model") -> FormatError:
    with pytest.raises(FormatError) as info:
        spfile.loads(data, source)
    assert str(info.value).startswith(source)
    return info.value


def test_truncated_files(models, sp_dir: Path):
    data = (sp_dir / "sp_test_model.model").read_bytes()
    for cut in (1, 2, 7, 100, 5000, len(data) // 2, len(data) - 1):
        error = _error(data[:cut])
        assert "truncated" in error.problem and error.where.startswith("byte "), (cut, error)


def test_wrong_wire_type():
    bad_piece = _bytes_field(1, _int_field(1, 5))  # piece text as a varint
    error = _error(_model_bytes(BASIC) + bad_piece)
    assert "wire type" in error.problem and "pieces[5].piece" in error.where
    bad_trainer = _model_bytes(BASIC) + _key(2, 0) + _varint(1)
    assert "trainer_spec" in _error(bad_trainer).problem


def test_invalid_utf8_piece():
    data = _model_bytes(BASIC) + _bytes_field(1, _bytes_field(1, b"a\xffb"))
    error = _error(data)
    assert "UTF-8" in error.problem and "pieces[5]" in error.where


def test_absurd_piece_length():
    huge = "x" * (spfile.MAX_PIECE_BYTES + 1)
    assert "corrupt" in _error(_model_bytes(BASIC + [(huge, -1.0)])).problem
    claim = _key(1, 2) + _varint(10 << 20) + b"abc"  # says 10 MB, holds 3 bytes
    assert "truncated" in _error(_model_bytes(BASIC) + claim).problem


def test_vocabulary_errors():
    assert "twice" in _error(_model_bytes(BASIC + [("a", -9.0)])).problem
    assert "twice" in _error(_model_bytes(BASIC + [("a", 0.0, "control")])).problem
    # sentencepiece: "piece must not include null character".
    assert "NUL" in _error(_model_bytes(BASIC + [("c\0", -4.0)])).problem
    assert "empty" in _error(_model_bytes([])).problem
    assert "UNKNOWN" in _error(_model_bytes(BASIC[1:])).problem
    assert "two unknown" in _error(_model_bytes(BASIC + [("<u2>", 0.0, "unknown")])).problem
    assert "empty piece" in _error(_model_bytes(BASIC + [("", 0.0)])).problem
    assert "unk_id" in _error(_model_bytes(BASIC, trainer_extra=_int_field(40, 5))).problem
    bad_type = _model_bytes(BASIC) + _bytes_field(1, _bytes_field(1, "z") + _int_field(3, 9))
    assert "piece type 9" in _error(bad_type).problem
    # sentencepiece refuses these too ("score is NaN or Inf").
    for score in (float("inf"), float("-inf"), float("nan")):
        error = _error(_model_bytes(BASIC + [("c", score)]))
        assert "NaN or Inf" in error.problem and "pieces[5]" in error.where, score


def test_model_types():
    for model_type, word in ((3, "WORD"), (4, "CHAR")):
        error = _error(_model_bytes(BASIC, model_type=model_type))
        assert word in error.problem and "not supported" in error.problem
    assert "unknown model_type 7" in _error(_model_bytes(BASIC, model_type=7)).problem


def test_byte_pieces():
    with_byte = BASIC + [("<0x41>", 0.0, "byte")]
    assert "byte_fallback is false" in _error(_model_bytes(with_byte)).problem
    error = _error(_model_bytes(with_byte, byte_fallback=True))
    assert "255 byte pieces are missing" in error.problem
    bad = BASIC + [("<0x4g>", 0.0, "byte")]
    assert "<0x00>" in _error(_model_bytes(bad, byte_fallback=True)).problem


def test_broken_charsmap():
    for blob in (b"\x01\x02", b"\x08\x00\x00\x00abcd", b"\x03\x00\x00\x00abcdef"):
        error = _error(_model_bytes(BASIC, normalizer=_bytes_field(2, blob)))
        assert "charsmap" in error.problem and "normalizer_spec" in error.where


def test_missing_file(tmp_path: Path):
    with pytest.raises(FormatError, match="no such file"):
        spfile.load(tmp_path / "absent.model")


def test_charsmap_lookup_matches_normalizer(models):
    """The trie gives the longest rule; the normalizer copies other characters."""
    model = models["sp_test_model"][0]
    charsmap = Charsmap(model.normalizer.precompiled_charsmap)
    replacement, length = charsmap.longest_match("ﬁx".encode(), 0)
    assert (replacement, length) == (b"fi", 3)
    assert charsmap.longest_match(b"a", 0) is None
    assert normalize("ＡＢ  Ｃ ", model.normalizer) == "▁AB▁C"
