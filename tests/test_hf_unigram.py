"""HuggingFace ``tokenizer.json`` files with a Unigram model (t5-small).

Oracle: HuggingFace ``tokenizers`` (0.23.3 in the environment),
``Tokenizer.encode(text, add_special_tokens=False).ids``. Covered:

1. Reading t5-small and encoding with ``reference.hf_unigram`` gives tokenizers' ids on
   the 426 recorded t5 vectors, sampled corpus lines and paragraphs, a multilingual
   slice and hypothesis text (grapheme clusters, CRLF, combining marks, added tokens).
2. Scores are read as serde_json reads them (a quarter of t5's differ by an ulp from
   the correctly rounded value) and written so that it reads them back exactly.
3. ``dumps``: t5 written back (with its pipeline, and with the default one), a
   sentencepiece unigram model, and pipeline variants (Replace steps, WhitespaceSplit,
   prepend schemes, split) load in tokenizers and give the reference's ids.
4. What cannot be read exactly is a FormatError naming the place.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair.errors import FormatError
from bytepair.formats import hf_unigram as fmt
from bytepair.formats import sentencepiece as spfile
from bytepair.reference import hf_unigram as ref
from bytepair.tokenizers.loaded import from_tokenizers_file

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers is the oracle")


def _ids(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False).ids


@pytest.fixture(scope="module")
def t5_path(shared_data: Path) -> Path:
    path = shared_data / "models" / "hf" / "t5-small.tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} is missing from the shared data")
    return path


@pytest.fixture(scope="module")
def t5(t5_path: Path):
    return fmt.load(t5_path)


@pytest.fixture(scope="module")
def t5_tokenizer(t5_path: Path):
    return tokenizers.Tokenizer.from_file(str(t5_path))


@pytest.fixture(scope="module")
def texts(shared_data: Path) -> list[str]:
    found = json.loads((shared_data / "vectors" / "tricky_strings.json").read_text("utf-8"))
    rng = random.Random(29)
    for path in sorted((shared_data / "corpus" / "small").glob("*.txt")):
        raw = path.read_bytes().decode("utf-8")
        lines = raw.splitlines(keepends=True)
        found += rng.sample(lines, min(120, len(lines)))
        paragraphs = [p for p in raw.replace("\r\n", "\n").split("\n\n") if p]
        found += [p[:4000] for p in rng.sample(paragraphs, min(6, len(paragraphs)))]
    large = shared_data / "corpus" / "large_multilingual.txt.gz"
    if large.is_file():
        with gzip.open(large, "rt", encoding="utf-8") as file:
            documents = file.read(300_000).split("\n\n")[:-1]
        found += [d[:3000] for d in rng.sample(documents, min(60, len(documents)))]
    found += [
        "hello</s>world",
        " </s> x",
        "<pad><pad>x",
        "a<extra_id_0>b",
        "x <unk> y",
        "▁▁x",
        "ｶﾞｷﾞ",
        "e\u0301 A\u0301\u0302",
        "\r\n\r\n",
        "😶\u200d🌫️",
        "ﬁ ﬂ",
        "\x00a\x1cb\x85c",
        "-" * 55,
    ]
    return list(dict.fromkeys(found))


# ---------------------------------------------------------------------------
# Reading t5-small


def test_t5_model_and_pipeline(t5):
    model, pipeline = t5
    assert len(model.pieces) == 32100 and model.unk_id == 2 and model.algorithm == "unigram"
    assert model.kinds[:3] == ("control", "control", "unknown")
    assert model.kinds[32099] == "control" and model.pieces[32099] == "<extra_id_0>"
    assert model.normalizer.split_on_whitespace and model.normalizer.add_dummy_prefix
    assert len(model.normalizer.precompiled_charsmap) > 100_000
    assert pipeline.normalizers == (fmt.PRECOMPILED,)
    assert pipeline.whitespace_split and not pipeline.prepend_first_only
    assert len(pipeline.added_tokens) == 103
    assert json.loads(pipeline.post_processor)["type"] == "TemplateProcessing"


def test_t5_vectors(shared_data: Path, t5):
    model, pipeline = t5
    path = shared_data / "vectors" / "hf_tokenizers_vectors.jsonl"
    records = [json.loads(line) for line in path.read_text("utf-8").split("\n") if line]
    records = [record for record in records if record["model"] == "t5-small"]
    assert len(records) == 426
    for record in records:
        assert ref.encode(model, pipeline, record["text"]) == record["ids"], record


@pytest.mark.slow
def test_t5_texts(t5, t5_tokenizer, texts):
    model, pipeline = t5
    for text in texts:
        assert ref.encode(model, pipeline, text) == _ids(t5_tokenizer, text), text[:200]


POOL = list("aeiouAEIOU -.") + [
    "\u0301", "\u0308", "\u200d", "\ufe0f", "\U0001f469", "\U0001f3fb", "\u1100", "\u1161",
    "\uac00", "\r", "\n", "\t", "\u3000", "ｶ", "ﾞ", "ﬁ", "①", "\u0e33", "\u0915", "\u094d",
    "\U0001f1fa", "\U0001f1f8", "\x00", "\x1c", "\u200b", "\u2028", "ß", "İ", "▁",
    "</s>", "<pad>", "<extra_id_7>",
]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(POOL) | st.characters(blacklist_categories=("Cs",)), max_size=20))
def test_t5_hypothesis(t5, t5_tokenizer, parts):
    model, pipeline = t5
    text = "".join(parts)
    assert ref.encode(model, pipeline, text) == _ids(t5_tokenizer, text)


# ---------------------------------------------------------------------------
# Numbers as serde_json reads them


def test_scores_are_what_tokenizers_holds(t5, t5_tokenizer):
    model, _ = t5
    held = json.loads(t5_tokenizer.to_str())["model"]["vocab"]
    assert [score for _, score in held] == list(model.scores)


def test_serde_json_text_reads_back():
    rng = random.Random(8)
    values = [rng.uniform(-30, 0) for _ in range(3000)] + [0.0, -0.0, 1e-30, -12.5, 3.0]
    exact = 0
    for value in values:
        text = fmt.serde_json_text(value)
        read = fmt.serde_json_f64(text)
        assert json.loads(text) == pytest.approx(value, rel=1e-15, abs=1e-300)
        if read == value:
            exact += 1
        else:  # the few doubles serde_json cannot produce: one ulp away
            assert abs(read - value) <= 2 * math.ulp(value)
    assert exact > 0.97 * len(values)
    assert fmt.serde_json_f64("-2.0122928619384766") == -2.012292861938477
    assert fmt.serde_json_f64("1e-05") == 1e-05


# ---------------------------------------------------------------------------
# Writing


def _check_written(model, pipeline, texts, name):
    text = fmt.dumps(model, pipeline)
    tokenizer = tokenizers.Tokenizer.from_str(text)
    reread, reread_pipeline = fmt.loads(text, name)
    assert reread.pieces == model.pieces and reread.kinds == model.kinds, name
    expected_pipeline = pipeline if pipeline is not None else fmt.default_pipeline(model)
    assert reread_pipeline.normalizers == expected_pipeline.normalizers, name
    for sample in texts:
        assert ref.encode(reread, reread_pipeline, sample) == _ids(tokenizer, sample), (
            name,
            sample,
        )
    return reread


@pytest.mark.slow
def test_t5_round_trip(t5, texts):
    model, pipeline = t5
    sample = texts[::4]
    reread = _check_written(model, pipeline, sample, "t5 with its pipeline")
    assert reread == model  # every score tokenizers can hold is written exactly
    _check_written(model, None, sample, "t5 with the default pipeline")


def test_sentencepiece_model_as_tokenizer_json(shared_data: Path, texts):
    path = shared_data / "models" / "sentencepiece" / "sp_test_model.model"
    model = spfile.load(path)
    reread = _check_written(model, None, texts[::6], "sp_test_model")
    moved = sum(a != b for a, b in zip(model.scores, reread.scores))
    assert moved <= 5  # doubles serde_json cannot produce become their neighbour


@pytest.mark.slow
def test_pipeline_variants(t5):
    model, pipeline = t5
    # The first 3000 pieces of t5 (and its added tokens among them) keep this fast.
    model = dataclasses.replace(
        model, pieces=model.pieces[:3000], scores=model.scores[:3000], kinds=model.kinds[:3000]
    )
    pipeline = dataclasses.replace(
        pipeline, added_tokens=tuple(t for t in pipeline.added_tokens if t.id < 3000)
    )
    samples = [
        "  Hello  world  ",
        " </s> x</s>y",
        "a▁b ▁ ▁▁",
        "\tTab\nnew line  \r\n end ",
        "ｶﾞ ﬁ Ａ",
        "aaa bab",
        "",
    ]
    samples += ["\u3000x\u3000 ", "\x85 a \u2028", "\x1cy\x1c", " \t ", "▁ a ▁"]
    collapse = fmt.Replace(" {2,}", " ", regex=True)
    converter = (  # what transformers' SpmConverter writes
        fmt.PRECOMPILED,
        fmt.Strip(left=False, right=True),
        fmt.Replace(" {2,}", "▁", regex=True),
    )
    for steps in (
        (fmt.PRECOMPILED,),
        (fmt.PRECOMPILED, collapse),
        (fmt.Replace("a", "ä"),),
        (),
        converter,
        (fmt.Strip(left=True, right=False),),
        (fmt.Strip(left=True, right=True), collapse),
    ):
        for whitespace_split in (True, False):
            for scheme in ("always", "first", "never"):
                for split in (True, False):
                    variant = dataclasses.replace(
                        model,
                        normalizer=dataclasses.replace(
                            model.normalizer,
                            add_dummy_prefix=scheme != "never",
                            split_on_whitespace=split,
                        ),
                    )
                    variant_pipeline = dataclasses.replace(
                        pipeline,
                        normalizers=steps,
                        whitespace_split=whitespace_split,
                        prepend_first_only=scheme == "first",
                    )
                    if scheme == "first" and any(
                        isinstance(step, fmt.Strip) and step.left for step in steps
                    ):
                        # tokenizers prepends only at original offset 0, which a
                        # left strip moves: refused both ways.
                        with pytest.raises(ValueError, match="left Strip"):
                            fmt.dumps(variant, variant_pipeline)
                        continue
                    text = fmt.dumps(variant, variant_pipeline)
                    tokenizer = tokenizers.Tokenizer.from_str(text)
                    assert fmt.loads(text)[1].normalizers == steps
                    loaded = from_tokenizers_file(variant, variant_pipeline)  # the core
                    for sample in samples:
                        expected = _ids(tokenizer, sample)
                        where = (steps, whitespace_split, scheme, split, sample)
                        assert ref.encode(variant, variant_pipeline, sample) == expected, where
                        assert loaded.encode_ordinary(sample) == expected, where


def test_dumps_refuses(t5):
    model, pipeline = t5
    with pytest.raises(ValueError, match="bpe"):
        fmt.dumps(dataclasses.replace(model, algorithm="bpe"))
    suffix = dataclasses.replace(
        model, normalizer=dataclasses.replace(model.normalizer, treat_whitespace_as_suffix=True)
    )
    with pytest.raises(ValueError, match="end of words"):
        fmt.dumps(suffix)
    wrong = dataclasses.replace(pipeline, added_tokens=(fmt.AddedToken(5, "<nope>"),))
    with pytest.raises(ValueError, match="<nope>"):
        fmt.dumps(model, wrong)


# ---------------------------------------------------------------------------
# What is refused


_UNK_ENTRY = {
    "id": 0,
    "content": "<unk>",
    "single_word": False,
    "lstrip": False,
    "rstrip": False,
    "normalized": False,
    "special": True,
}


def _document(**changes) -> dict:
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_UNK_ENTRY],
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"},
        "post_processor": None,
        "decoder": None,
        "model": {
            "type": "Unigram",
            "unk_id": 0,
            "vocab": [["<unk>", 0.0], ["▁", -1.0], ["a", -2.0], ["b", -3.0]],
        },
    }
    document.update(changes)
    return document


def _without(entry: dict, key: str) -> dict:
    return {k: v for k, v in entry.items() if k != key}


def _refused(document: dict) -> FormatError:
    with pytest.raises(FormatError) as info:
        fmt.loads(json.dumps(document), "bad.json")
    assert str(info.value).startswith("bad.json")
    return info.value


def test_small_document_reads():
    model, pipeline = fmt.loads(json.dumps(_document()), "ok.json")
    assert model.pieces == ("<unk>", "▁", "a", "b") and model.kinds[0] == "unknown"
    assert ref.encode(model, pipeline, "ab ba") == [1, 2, 3, 1, 3, 2]
    assert ref.encode(model, pipeline, "xy") == [1, 0]  # one unk for the run


def test_refused_documents():
    model = _document()["model"]
    cases = [
        (_document(truncation={"max_length": 5}), "truncation"),
        (_document(model={**model, "type": "BPE"}), "model.type"),
        (_document(model={**model, "vocab": []}), "model.vocab"),
        (_document(model={**model, "vocab": model["vocab"] + [["a", -9.0]]}), "model.vocab[4]"),
        (_document(model={**model, "unk_id": 9}), "model.unk_id"),
        (_document(model={**model, "vocab": [["<unk>", "x"]]}), "model.vocab[0]"),
        (_document(model={**model, "dropout": 0.1}), "model.dropout"),
        (_document(normalizer={"type": "NFD"}), "normalizer"),
        (
            _document(normalizer={"type": "Precompiled", "precompiled_charsmap": "!!"}),
            "normalizer.precompiled_charsmap",
        ),
        (_document(pre_tokenizer={"type": "Whitespace"}), "pre_tokenizer"),
        (
            _document(pre_tokenizer={"type": "Metaspace", "replacement": "_"}),
            "pre_tokenizer.replacement",
        ),
        (_document(added_tokens=[{**_UNK_ENTRY, "lstrip": True}]), "added_tokens[0].lstrip"),
        # tokenizers refuses an entry without a flag; read as false, a special
        # token became an ordinary one.
        *(
            (_document(added_tokens=[_without(_UNK_ENTRY, flag)]), "added_tokens[0]")
            for flag in ("special", "normalized", "lstrip", "rstrip", "single_word")
        ),
        (_document(added_tokens=[{"id": 1, "content": "<x>"}]), "added_tokens[0]"),
        # A type that is no text (unhashable) is named, not a bare TypeError.
        (_document(decoder={"type": {}}), "decoder.type"),
        (_document(post_processor={"type": []}), "post_processor.type"),
        (_document(normalizer={"type": []}), "normalizer.type"),
    ]
    for document, where in cases:
        error = _refused(document)
        assert error.where == where, (where, error)


def test_invalid_json():
    with pytest.raises(FormatError, match="line 1"):
        fmt.loads('{"model": ', "broken.json")


@pytest.mark.slow
def test_regex_replace_has_fancy_regex_meaning(t5):
    """The reference runs a Replace pattern with the meaning the core gives it
    (fancy-regex), not Python's: ``(?i:i)`` leaves ``İ`` alone, and without the
    precompiled map's newline rule ``\\n$`` is only the final newline."""
    model, pipeline = t5
    samples = ["İi ıI", "a\nb\n\n", " ab  \n", "ab\n", ""]
    for pattern in ("(?i:i)", "\\n$", "\\s+$", " +$"):
        variant = dataclasses.replace(
            pipeline, normalizers=(fmt.Replace(pattern, "_", regex=True),)
        )
        core = from_tokenizers_file(model, variant)
        peer = tokenizers.Tokenizer.from_str(fmt.dumps(model, variant))
        for sample in samples:
            want = _ids(peer, sample)
            assert ref.encode(model, variant, sample) == want, (pattern, sample)
            assert core.encode(sample) == want, (pattern, sample)


def test_strip_normalizer_is_read_and_checked():
    strip = {"type": "Strip", "strip_left": True, "strip_right": True}
    model, pipeline = fmt.loads(json.dumps(_document(normalizer=strip)), "ok.json")
    assert pipeline.normalizers == (fmt.Strip(left=True, right=True),)
    peer = tokenizers.Tokenizer.from_str(fmt.dumps(model, pipeline))
    for text in ["  ab \u3000", "\u2028a b\x85", "\x1cab\x1c", "   "]:
        assert ref.encode(model, pipeline, text) == _ids(peer, text), text
        assert from_tokenizers_file(model, pipeline).encode_ordinary(text) == _ids(peer, text)
    error = _refused(_document(normalizer={"type": "Strip", "strip_left": 1, "strip_right": True}))
    assert error.where == "normalizer.strip_left"
    first = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first"}
    error = _refused(_document(normalizer=strip, pre_tokenizer=first))
    assert error.where == "normalizer" and "first" in error.problem


def test_an_empty_charsmap_is_refused_as_tokenizers_refuses_it():
    empty = {"type": "Precompiled", "precompiled_charsmap": ""}
    error = _refused(_document(normalizer=empty))
    assert error.where == "normalizer.precompiled_charsmap" and "empty" in error.problem
    nested = {"type": "Sequence", "normalizers": [empty]}
    error = _refused(_document(normalizer=nested))
    assert error.where == "normalizer.normalizers[0].precompiled_charsmap"


def test_a_lone_surrogate_names_the_vocabulary_entry_or_added_token():
    document = _document()
    document["model"]["vocab"].append(["x\ud800", -4.0])
    error = _refused(document)
    assert error.where == "model.vocab[4]" and "U+D800 at character 1" in error.problem
    document = _document(added_tokens=[{"id": 0, "content": "<unk>\udfff", "special": True}])
    document["model"]["vocab"][0][0] = "<unk>\udfff"
    assert _refused(document).where == "model.vocab[0]"
    document = _document(added_tokens=[{"id": 0, "content": "\udfff", "special": True}])
    assert _refused(document).where == "added_tokens[0].content"


def test_unknown_decoders_and_post_processors_are_refused_as_tokenizers_refuses_them():
    nonsense = {"type": "Nonsense"}
    written = json.loads(fmt.dumps(*fmt.loads(json.dumps(_document()), "ok.json")))
    for key in ("decoder", "post_processor"):
        with pytest.raises(Exception, match="did not match any variant"):
            tokenizers.Tokenizer.from_str(json.dumps({**written, key: nonsense}))
        assert _refused(_document(**{key: nonsense})).where == f"{key}.type"
    nested = {"type": "Sequence", "decoders": [{"type": "Fuse"}, nonsense]}
    assert _refused(_document(decoder=nested)).where == "decoder.decoders[1].type"
    fine = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]}
    fmt.loads(json.dumps(_document(decoder=fine)), "ok.json")


# ---------------------------------------------------------------------------
# Decoding by the file's decoder

_BYTES = ["<0xE4>", "<0xB8>", "<0xAD>", "<0x41>", "<0xFF>", "<0x0A>", "<0xZZ>", "<0x+A>"]
_META = {"type": "Metaspace", "replacement": "▁"}
_DECODERS_TO_TRY = [
    None,
    {"type": "Metaspace", "replacement": "▁", "str_rep": "▁", "add_prefix_space": True},
    {**_META, "prepend_scheme": "never", "split": True},
    {**_META, "prepend_scheme": "first", "split": False},
    {**_META, "add_prefix_space": False, "prepend_scheme": "never"},
    {"type": "Metaspace", "replacement": "l", "prepend_scheme": "always"},
    # A literal Replace last, which the core writes straight into the text.
    {"type": "Replace", "pattern": {"String": "▁t"}, "content": "#"},
    {
        "type": "Sequence",
        "decoders": [
            {"type": "ByteFallback"},
            {"type": "Replace", "pattern": {"String": "▁"}, "content": "_ "},
        ],
    },
    {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ],
    },
    {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ],
    },
    {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {**_META, "split": True}]},
    {"type": "Sequence", "decoders": [{"type": "Fuse"}, {**_META, "prepend_scheme": "always"}]},
    {"type": "Replace", "pattern": {"Regex": "▁+"}, "content": " "},
    {"type": "Replace", "pattern": {"Regex": "l+|o"}, "content": "-"},
    {"type": "Replace", "pattern": {"Regex": "(o)"}, "content": "$1${1}\\1"},
    {"type": "ByteFallback"},
    {"type": "Fuse"},
    {"type": "Strip", "content": "▁", "start": 2, "stop": 1},  # tokenizers panics on "▁"
    {"type": "Strip", "content": "e", "start": 0, "stop": 3},
    {
        "type": "Sequence",
        "decoders": [
            {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]},
            {"type": "Strip", "content": "▁", "start": 1, "stop": 1},
            {**_META, "prepend_scheme": "never"},
        ],
    },
]


def _with_decoder(t5_path: Path, decoder) -> str:
    document = json.loads(t5_path.read_text(encoding="utf-8"))
    document["decoder"] = decoder
    document["model"]["vocab"] += [[piece, -20.0] for piece in _BYTES]
    return json.dumps(document, ensure_ascii=False)


def _their_decode(theirs, ids: list[int]):
    try:
        return theirs.decode(ids, skip_special_tokens=False)
    except BaseException as error:  # a Rust panic (pyo3's PanicException)
        if "panic" not in type(error).__name__.lower():
            raise
        return None


@pytest.mark.slow
@pytest.mark.parametrize("decoder", _DECODERS_TO_TRY, ids=lambda d: _show_decoder(d))
def test_decode_follows_the_files_decoder_as_tokenizers(t5_path: Path, texts, decoder):
    text = _with_decoder(t5_path, decoder)
    theirs = tokenizers.Tokenizer.from_str(text)
    ours = from_tokenizers_file(*fmt.loads(text, "t5.json"))
    assert ours.flavor == "tokenizers"
    n = ours.n_vocab
    assert n == theirs.get_vocab_size()
    interesting = [0, 1, 2, 3, 5, 32000, 32099, *range(n - len(_BYTES), n)]
    rng = random.Random(7)
    cases = [[], [3], [3, 3], [1], [n - 8, n - 7], [8774, n - 8, n - 7, n - 5]]
    for _ in range(300):
        pool = interesting if rng.random() < 0.5 else range(n)
        cases.append([rng.choice(pool) for _ in range(rng.randrange(1, 12))])
    cases += [theirs.encode(line, add_special_tokens=False).ids for line in texts[:150]]
    for ids in cases:
        expected = _their_decode(theirs, ids)
        if expected is None:
            with pytest.raises(ValueError, match="panics"):
                ours.decode(ids)
            continue
        assert ours.decode(ids) == expected, ids
        # decode_bytes writes the same text, invalid bytes as themselves.
        if "\ufffd" not in expected:
            assert ours.decode_bytes(ids) == expected.encode("utf-8"), ids


def _show_decoder(decoder) -> str:
    return "null" if decoder is None else json.dumps(decoder, ensure_ascii=False)[:60]


@pytest.mark.slow
def test_decoders_bytepair_does_not_run_are_refused(t5_path: Path):
    refused_by_both = [
        {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False},
        {"type": "Metaspace", "replacement": "▁▁"},
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": None},
        {"type": "Strip", "content": "ab", "start": 1, "stop": 0},
        {"type": "Strip", "content": "a", "start": -1, "stop": 0},
        {"type": "Replace", "pattern": {"String": "a", "Regex": "b"}, "content": ""},
        {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Replace"}]},
    ]
    for decoder in refused_by_both:
        text = _with_decoder(t5_path, decoder)
        with pytest.raises(Exception, match="did not match any variant"):
            tokenizers.Tokenizer.from_str(text)
        with pytest.raises(FormatError):
            fmt.loads(text, "t5.json")
    # tokenizers runs these; bytepair does not (an empty match, other decoders).
    for decoder, where in [
        ({"type": "Replace", "pattern": {"Regex": "l*"}, "content": "-"}, "pattern.Regex"),
        ({"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True}, "type"),
        (
            {
                "type": "Sequence",
                "decoders": [{"type": "WordPiece", "prefix": "##", "cleanup": True}],
            },
            "decoders[0].type",
        ),
    ]:
        text = _with_decoder(t5_path, decoder)
        tokenizers.Tokenizer.from_str(text)
        with pytest.raises(FormatError) as info:
            fmt.loads(text, "t5.json")
        assert info.value.where == f"decoder.{where}"


@pytest.mark.slow
def test_a_null_decoder_is_written_back_null(t5_path: Path):
    model, pipeline = fmt.loads(_with_decoder(t5_path, None), "t5.json")
    assert json.loads(fmt.dumps(model, pipeline))["decoder"] is None


# ---------------------------------------------------------------------------
# Normalizers that change an added token's text or the input's first character


def _t5_variant(t5_path: Path, tmp_path: Path, name: str, **changes) -> Path:
    document = json.loads(t5_path.read_text("utf-8"))
    document.update(changes)
    path = tmp_path / name
    path.write_text(json.dumps(document), "utf-8")
    return path


def _assert_same_ids(path: Path, texts: list[str]) -> None:
    import bytepair

    theirs = tokenizers.Tokenizer.from_file(str(path))
    ours = bytepair.load(path)
    assert ours.flavor == "tokenizers"
    model, pipeline = fmt.load(path)
    for text in texts:
        expected = _ids(theirs, text)
        assert ours.encode_ordinary(text) == expected, text
        assert ref.encode(model, pipeline, text) == expected, text


@pytest.mark.slow
@pytest.mark.parametrize(
    "normalizer",
    [
        {"type": "Lowercase"},
        {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
        {"type": "Replace", "pattern": {"String": "S"}, "content": "s"},
        {"type": "Prepend", "prepend": "▁"},
        {
            "type": "Sequence",
            "normalizers": [{"type": "Lowercase"}, {"type": "Prepend", "prepend": "▁"}],
        },
    ],
)
def test_a_normalized_added_token_is_looked_for_as_the_normalizers_make_it(
    t5_path, tmp_path, normalizer
):
    """tokenizers runs an added token with ``normalized: true`` through the
    normalizers too (``<S>`` is looked for as ``<s>`` under Lowercase, as
    ``▁<S>`` after a Prepend), then looks for that in the normalized text."""
    document = json.loads(t5_path.read_text("utf-8"))
    document["added_tokens"].append(
        {
            "id": 32099,  # <extra_id_0>'s id, given a new text
            "content": "<S>",
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": True,
            "special": True,
        }
    )
    document["added_tokens"] = [
        t for t in document["added_tokens"] if t["content"] != "<extra_id_0>"
    ]
    vocab = document["model"]["vocab"]
    vocab[32099] = ["<S>", vocab[32099][1]]
    path = _t5_variant(
        t5_path,
        tmp_path,
        "normalized.json",
        normalizer=normalizer,
        added_tokens=document["added_tokens"],
        model=document["model"],
    )
    _assert_same_ids(path, ["hello <S> world", "hello <s> world", "<S>x", "<s>", "SSS<S>"])


def test_a_normalizer_that_empties_a_normalized_added_token_is_refused(t5_path, tmp_path):
    import bytepair

    document = json.loads(t5_path.read_text("utf-8"))
    for token in document["added_tokens"]:
        if token["content"] == "</s>":
            token["normalized"] = True
    normalizer = {"type": "Replace", "pattern": {"String": "</s>"}, "content": ""}
    path = _t5_variant(
        t5_path,
        tmp_path,
        "empty.json",
        normalizer=normalizer,
        added_tokens=document["added_tokens"],
    )
    with pytest.raises(ValueError, match='"</s>" .*the normalizers make nothing of it'):
        bytepair.load(path).encode_ordinary("x")


@pytest.mark.slow
@pytest.mark.parametrize("normalizer", ["NFKC", "t5"])
def test_prepend_first_follows_the_first_character_through_the_normalizers(
    t5_path, tmp_path, normalizer
):
    """With WhitespaceSplit and prepend_scheme "first", tokenizers prepends to a
    word that starts at the input's offset 0: NFKC makes " \\u0308" of "¨", so
    the word "\\u0308" gets the ▁ although a space comes before it."""
    document = json.loads(t5_path.read_text("utf-8"))
    changes = {
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "WhitespaceSplit"},
                {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True},
            ],
        }
    }
    if normalizer == "NFKC":
        changes["normalizer"] = {"type": "NFKC"}
    path = _t5_variant(t5_path, tmp_path, "first.json", **changes)
    assert document["normalizer"] is not None
    texts = [
        "¨x",
        "\ufe49x",
        "\u1fedx",
        "x ¨y",
        "\u3000x",
        "Hello",
        " Hello",
        "¨",
        "¨ x",
        "\u00a0x",
    ]
    texts += [
        "\ufeffHello world",
        "\u200bHello",
        "\x01Hello",
        "\u00adHello",
        "e\u0301x",
        "¨\u0316x",
    ]
    _assert_same_ids(path, texts)
