"""SPEC §4's optional normalization (NFC or NFKC, then lowercase) for
byte-level BPE: the core equals the reference in training and encoding, an
exported tokenizer.json gives the same ids in HuggingFace tokenizers, special
tokens are found in the text as given, and formats that cannot record it
refuse it."""

from __future__ import annotations

import json
import sys
import unicodedata
import warnings

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import FormatError
from bytepair.reference import bpe as reference
from test_core_equals_reference import assert_same_training

NORMALIZATIONS = [("nfc",), ("nfkc",), ("lowercase",), ("nfc", "lowercase"), ("nfkc", "lowercase")]
# Characters normalization changes: ligatures, circled and full-width forms,
# composed and decomposed accents, Greek sigma, dotted I, sharp s, Kelvin and
# Ohm signs, Hangul syllables and jamo, CJK compatibility ideographs.
CHANGED = "ﬁﬃ①Ａｂé\u0301e\u0301\u0327ΣΟσςİıßKΩÅ가\u1100\u1161\u11a8豈ℌ²½ ︵"
# The core normalizes with tokenizers' Unicode 9.0 tables, the reference with
# Python's unicodedata (14.0): text in characters assigned by Unicode 3.2 has
# the same normalization under both (normalization stability); marks assigned
# since compose differently (the test against tokenizers covers every code point).
old_character = st.characters(exclude_categories=("Cs", "Co")).filter(
    lambda c: unicodedata.ucd_3_2_0.category(c) != "Cn"
)
normal_text = st.text(
    alphabet=st.one_of(st.sampled_from(list(CHANGED + "ab AB\n")), old_character),
    max_size=30,
)


def core_and_reference(texts, vocab_size, normalize, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fewer merges than asked
        core = bytepair.train(texts, vocab_size, normalize=normalize, progress=False, **kwargs)
    ref = reference.train(texts, vocab_size, normalization=normalize, **kwargs)
    return core, ref


@given(st.lists(normal_text, min_size=1, max_size=8), st.sampled_from(NORMALIZATIONS))
@example(["ΟΔΟΣ ΣΑ ﬁ①Ａ", "e\u0301 İ ß", "ΟΔΟΣ."], ("lowercase",))
@example(["ΟΔΟΣ ΣΑ ﬁ①Ａ", "e\u0301 İ ß ½ ℌ"], ("nfkc", "lowercase"))
@example(["e\u0301\u0327 가\u1100\u1161\u11a8 Å"], ("nfc",))
def test_core_trains_and_encodes_like_the_reference(texts, normalize):
    core, ref = core_and_reference(texts, 300, normalize, pretokenizer="gpt2")
    assert_same_training(core, ref)
    assert core.normalize == normalize
    for text in texts:
        expected = reference.encode(text, ref.tokens, ref.merge_ids, normalization=normalize)
        assert core.encode_ordinary(text) == expected
        assert "".join(core.pretokenize(text)) == reference.normalize(text, normalize)


@given(st.lists(normal_text, min_size=1, max_size=6), st.sampled_from(NORMALIZATIONS))
def test_special_tokens_are_found_in_the_text_as_given(texts, normalize):
    specials = ["<S>", "<s>", "Ａ"]
    texts = [t + "<S>" + t.upper() + "Ａ\u0338<s>" for t in texts]
    core, ref = core_and_reference(texts, 290, normalize, special_tokens=specials)
    assert_same_training(core, ref)
    ids = {s: i for i, s in enumerate(specials)}
    for text in texts:
        expected = reference.encode(
            text,
            ref.tokens,
            ref.merge_ids,
            special_tokens=ids,
            allowed_special="all",
            normalization=normalize,
        )
        assert core.encode(text, allowed_special="all") == expected
        # "<S>" stays a special token under lowercase; "Ａ" under NFKC.
        assert expected.count(0) == text.count("<S>") and expected.count(2) == text.count("Ａ")


def test_lowercase_is_per_character_as_tokenizers_does_it():
    # No final-sigma rule (Python's str.lower() gives ς at the end of a word).
    assert reference.normalize("ΟΔΟΣ", ["lowercase"]) == "οδοσ"
    tok = bytepair.train(["ΟΔΟΣ οδοσ"], 270, normalize="lowercase", progress=False)
    assert tok.pretokenize("ΟΔΟΣ") == ["οδοσ"]


def real_text(shared_data) -> str:
    import gzip

    with gzip.open(shared_data / "corpus" / "large_multilingual.txt.gz", "rt") as f:
        return f.read(200_000)


@pytest.mark.parametrize("normalize", NORMALIZATIONS)
def test_exported_tokenizer_json_gives_the_same_ids_in_tokenizers(normalize, shared_data, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    text = real_text(shared_data)
    tok = bytepair.train(
        [text[:100_000]], 600, normalize=normalize, special_tokens=["<|end|>"], progress=False
    )
    path = tmp_path / "tok.json"
    tok.save(path)
    theirs = tokenizers.Tokenizer.from_file(str(path))
    loaded = bytepair.load(path)
    assert loaded.normalize == normalize
    probes = [text[100_000:][i : i + 2000] for i in range(0, 60_000, 2000)]
    probes += [CHANGED, CHANGED.upper(), "ΟΔΟΣ<|end|>ΣΑ", "Ａ<|end|>\u0301x", "ﬁ" * 50]
    for probe in probes:
        ours = tok.encode(probe, allowed_special="all")
        assert theirs.encode(probe, add_special_tokens=False).ids == ours, probe[:80]
        assert loaded.encode(probe, allowed_special="all") == ours


@pytest.mark.slow
@pytest.mark.parametrize("normalize", NORMALIZATIONS)
def test_normalized_text_equals_tokenizers_on_every_code_point(normalize):
    # Each code point alone and between a letter and a combining mark (which
    # tests its combining class and composition), against tokenizers' own
    # normalizers; "\n" separates them (no normalization crosses it).
    normalizers = pytest.importorskip("tokenizers.normalizers")
    steps = {"nfc": normalizers.NFC, "nfkc": normalizers.NFKC, "lowercase": normalizers.Lowercase}
    theirs = normalizers.Sequence([steps[name]() for name in normalize])
    ours = bytepair.train(["x"], 256, pretokenizer="none", normalize=normalize, progress=False)
    points = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000]
    points.remove("\n")
    for start in range(0, len(points), 20_000):
        chunk = points[start : start + 20_000]
        text = "\n".join(chunk) + "\n" + "\n".join(f"e{c}\u0327" for c in chunk)
        assert ours.pretokenize(text) == [theirs.normalize_str(text)], chunk[0]


def test_normalizers_read_from_tokenizer_json(tmp_path):
    tok = bytepair.train(["Hello ﬁne World"], 280, normalize=("nfkc", "lowercase"), progress=False)
    path = tmp_path / "tok.json"
    tok.save(path)
    document = json.loads(path.read_text("utf-8"))
    assert document["normalizer"] == {
        "type": "Sequence",
        "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}],
    }

    def load_with(normalizer, added=None):
        changed = dict(document, normalizer=normalizer)
        if added is not None:
            changed["added_tokens"] = added
        other = tmp_path / "other.json"
        other.write_text(json.dumps(changed), "utf-8")
        return bytepair.load(other)

    assert load_with({"type": "NFC"}).normalize == ("nfc",)
    assert load_with(None).normalize == ()
    for unsupported in [
        {"type": "NFD"},
        {"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "NFKC"}]},
        {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "NFKC"}]},
        {"type": "Strip", "strip_left": True, "strip_right": True},
    ]:
        with pytest.raises(FormatError, match="normalizer"):
            load_with(unsupported)
    normalized_special = [
        {
            "id": 0,
            "content": "<s>",
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": True,
            "special": True,
        }
    ]
    plain = bytepair.train(["x"], 257, special_tokens=["<s>"], progress=False)
    plain.save(tmp_path / "plain.json")
    document = json.loads((tmp_path / "plain.json").read_text("utf-8"))
    with pytest.raises(FormatError, match="normalized true"):
        load_with({"type": "NFC"}, normalized_special)


def test_formats_that_cannot_record_it_refuse_it(tmp_path):
    tok = bytepair.train(["Hello World"], 270, normalize="lowercase", progress=False)
    with pytest.raises(ValueError, match="GPT-2 format cannot record the normalization"):
        tok.save(tmp_path / "gpt2", format="gpt2")
    from bytepair.formats.tiktoken import encoding_args

    with pytest.raises(ValueError, match="tiktoken has no normalization"):
        encoding_args(tok)
    with pytest.warns(UserWarning, match="exported without it"):
        encoding_args(tok, force=True)


def test_checkpoints_keep_the_normalization(tmp_path):
    checkpoint = tmp_path / "run.bpck"
    texts = ["Ｈｅｌｌｏ ﬁne ﬁne World " * 5]
    first = bytepair.train(texts, 262, normalize="nfkc", checkpoint=checkpoint, progress=False)
    resumed = bytepair.resume_training(checkpoint, 270, progress=False)
    whole = bytepair.train(texts, 270, normalize="nfkc", progress=False)
    assert first.normalize == resumed.normalize == ("nfkc",)
    assert resumed.merges == whole.merges


def test_bad_normalizations_are_named():
    with pytest.raises(ValueError, match="unknown normalization 'nfd'"):
        bytepair.train(["x"], 260, normalize="nfd")
    with pytest.raises(ValueError, match="at most one of nfc and nfkc"):
        bytepair.train(["x"], 260, normalize=["nfc", "nfkc"])
    with pytest.raises(TypeError, match="normalize"):
        bytepair.train(["x"], 260, normalize=[1])
    with pytest.raises(TypeError, match="normalize takes a name or names"):
        bytepair.train(["x"], 260, normalize=5)
    with pytest.raises(TypeError, match="char-bpe reads words as given"):
        bytepair.train(["x y"], 300, model="char-bpe", normalize="nfc")
    with pytest.raises(ValueError, match="at most one of nfc and nfkc"):
        bytepair.train(["x y"], 300, model="unigram", normalize=["nfc", "nfkc"])


def test_the_command_line_trains_with_it(tmp_path):
    from bytepair.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text("Hello ﬁne World\n" * 20, "utf-8")
    out = tmp_path / "t.json"
    args = ["train", str(corpus), "-o", str(out), "--vocab-size", "280", "--no-progress"]
    assert main([*args, "--normalize", "nfkc", "--normalize", "lowercase"]) == 0
    assert bytepair.load(out).normalize == ("nfkc", "lowercase")
    assert main([*args, "--normalize", "nfc", "--format", "gpt2", "--force"]) == 1
    assert main([*args, "--normalize", "nfc", "--normalize", "nfkc", "--force"]) == 1
    assert main([*args, "--normalize", "nfkc", "--model", "unigram", "--force"]) == 0
    assert bytepair.load(out).normalize == ("nfkc",)
    assert bytepair.load(out).encode_ordinary("ﬁne") == bytepair.load(out).encode_ordinary("fine")


# ---------------------------------------------------------------------------
# The unigram model


def unigram_core_and_reference(texts, vocab_size, normalize, **kwargs):
    from bytepair.reference import unigram as reference_unigram

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fewer pieces than asked
        core = bytepair.train(
            texts, vocab_size, model="unigram", normalize=normalize, progress=False, **kwargs
        )
        ref = reference_unigram.train(texts, vocab_size, normalization=normalize, **kwargs)
    return core, ref


@settings(max_examples=40)
@given(st.lists(normal_text, min_size=1, max_size=8), st.sampled_from(NORMALIZATIONS))
@example(["ΟΔΟΣ ΣΑ ﬁ①Ａ", "e\u0301 İ ß", "ΟΔΟΣ."], ("lowercase",))
@example(["ΟΔΟΣ ΣΑ ﬁ①Ａ", "e\u0301 İ ß ½ ℌ"], ("nfkc", "lowercase"))
@example(["e\u0301\u0327 가\u1100\u1161\u11a8 Å\u3000x\u00a0y"], ("nfkc",))
def test_unigram_core_trains_and_encodes_like_the_reference(texts, normalize):
    from bytepair.reference import unigram as reference_unigram

    specials = ["<S>", "Ａ"]
    texts = [t + "<S>" + t.upper() + "Ａ\u0338" for t in texts]
    core, ref = unigram_core_and_reference(
        texts, 200, normalize, special_tokens=specials, character_coverage=1.0
    )
    assert list(core.model.pieces) == ref.pieces
    assert [s.hex() for s in core.model.scores] == [float(s).hex() for s in ref.scores]
    assert core.normalize == normalize == ref.normalization
    for text in texts:
        expected = reference_unigram.encode(text, ref, allowed_special="all")
        assert core.encode(text, allowed_special="all") == expected
        # "<S>" stays a special token under lowercase, "Ａ" under NFKC: they
        # are found in the text as given.
        assert expected.count(1) == text.count("<S>") and expected.count(2) == text.count("Ａ")
        plain = reference_unigram.encode(text, ref)
        assert core.encode_ordinary(text) == plain
        assert core.encode_batch([text, text], disallowed_special=()) == [plain, plain]


def test_unigram_normalizes_what_it_counts_and_encodes():
    texts = ["Ｃａｆé CAFÉ café ﬁne FINE fine"] * 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(
            texts, 40, model="unigram", normalize=["nfkc", "lowercase"], progress=False
        )
        plain = bytepair.train(["café fine " * 30], 40, model="unigram", progress=False)
    assert not any(c.isupper() or c in "Ｃﬁ" for p in tok.model.pieces[1:] for c in p)
    assert set(tok.model.pieces) == set(plain.model.pieces)
    assert tok.encode_ordinary("ＣＡＦÉ ﬁne") == tok.encode_ordinary("café fine")
    assert tok.decode(tok.encode_ordinary("ＣＡＦÉ ﬁne")) == "café fine"
    sampled = tok.encode_sample("ＣＡＦÉ ﬁne", alpha=1e6, seed=1)
    assert sampled == tok.encode_ordinary("café fine")


@pytest.mark.parametrize("normalize", NORMALIZATIONS)
def test_unigram_tokenizer_json_gives_the_same_ids_in_tokenizers(normalize, shared_data, tmp_path):
    """The export writes tokenizers' NFC/NFKC/Lowercase normalizers before the
    Prepend of the dummy ``▁``; it reads back as a model trained here."""
    tokenizers = pytest.importorskip("tokenizers")
    text = real_text(shared_data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(
            [text[:60_000], CHANGED, CHANGED.upper()],
            1500,
            model="unigram",
            normalize=normalize,
            special_tokens=["<|end|>"],
            progress=False,
        )
    path = tmp_path / "tok.json"
    tok.save(path)
    written = json.loads(path.read_text("utf-8"))["normalizer"]
    types = {"nfc": "NFC", "nfkc": "NFKC", "lowercase": "Lowercase"}
    assert [step["type"] for step in written["normalizers"]] == [
        *(types[name] for name in normalize),
        "Prepend",
    ]
    theirs = tokenizers.Tokenizer.from_file(str(path))
    loaded = bytepair.load(path)
    assert loaded.flavor == "bytepair" and loaded.normalize == normalize
    probes = [text[60_000:][i : i + 2000] for i in range(0, 40_000, 2000)]
    probes += [CHANGED, CHANGED.upper(), "ΟΔΟΣ<|end|>ΣΑ", "Ａ<|end|>\u0301x", "ﬁ" * 50]
    probes += [p.upper() for p in probes[:5]]
    for probe in probes:
        ours = tok.encode(probe, allowed_special="all")
        assert theirs.encode(probe, add_special_tokens=False).ids == ours, probe[:80]
        assert loaded.encode(probe, allowed_special="all") == ours


def test_a_foreign_unigram_file_with_these_normalizers_encodes_as_tokenizers(tmp_path):
    """A Unigram tokenizer.json not written by bytepair (here: no Split of the
    unknown characters) with NFKC and Lowercase steps follows tokenizers'
    rules, in the core and in the reference."""
    tokenizers = pytest.importorskip("tokenizers")
    from bytepair.formats import hf_unigram
    from bytepair.reference import hf_unigram as reference_hf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(
            ["ﬁne Ｃａｆé café CAFÉ ΣΟΦΙΑ σοφια " * 20],
            60,
            model="unigram",
            normalize=("nfkc", "lowercase"),
            progress=False,
        )
    path = tmp_path / "tok.json"
    tok.save(path)
    document = json.loads(path.read_text("utf-8"))
    document["pre_tokenizer"] = document["pre_tokenizer"]["pretokenizers"][-1]  # Metaspace alone
    path.write_text(json.dumps(document), "utf-8")
    loaded = bytepair.load(path)
    assert loaded.flavor == "tokenizers"
    theirs = tokenizers.Tokenizer.from_file(str(path))
    model, pipeline = hf_unigram.load(path)
    assert pipeline.normalizers[:2] == ("nfkc", "lowercase")
    for probe in ["ＣＡＦÉ ﬁne", "ΣΟΦΙΑ xyz", CHANGED, CHANGED.upper(), "a\u3000b"]:
        expected = theirs.encode(probe, add_special_tokens=False).ids
        assert loaded.encode_ordinary(probe) == expected, probe
        assert reference_hf.encode(model, pipeline, probe) == expected, probe


def test_only_a_model_trained_here_holds_normalize():
    import dataclasses

    from bytepair.tokenizers.unigram import SentencePieceTokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(["ab ab"], 10, model="unigram", progress=False)
    model = tok.model
    with pytest.raises(
        ValueError, match=r"SentencePieceModel.normalize must be .*\(the form first\)"
    ):
        SentencePieceTokenizer(dataclasses.replace(model, normalize=("lowercase", "nfc")))
    with pytest.raises(ValueError, match="SentencePieceModel.normalize: unknown normalization"):
        SentencePieceTokenizer(dataclasses.replace(model, normalize=("nfd",)))
    with pytest.raises(TypeError, match="SentencePieceModel.normalize must be a tuple"):
        SentencePieceTokenizer(dataclasses.replace(model, normalize="nfc"))
    with pytest.raises(ValueError, match="a sentencepiece model normalizes as its file says"):
        SentencePieceTokenizer(
            dataclasses.replace(model, normalize=("nfc",)), flavor="sentencepiece"
        )
