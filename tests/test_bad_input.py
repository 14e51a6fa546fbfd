"""Bad input gets a clear Python exception naming what was wrong, never a crash."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import bytepair


@pytest.fixture(scope="module")
def tokenizer():
    return bytepair.train(["hello world, hello there, bright new world"] * 3, 270, progress=False)


def test_vocab_size_below_bytes_and_specials():
    with pytest.raises(ValueError, match="256 single bytes \\+ 2 special tokens = 258"):
        bytepair.train(["x"], 257, special_tokens=["<a>", "<b>"])


@pytest.mark.parametrize(
    "specials, message",
    [(["<a>", "<a>"], "given twice"), ([""], "empty"), ("<a>", "not one string")],
)
def test_bad_special_tokens(specials, message):
    with pytest.raises((ValueError, TypeError), match=message):
        bytepair.train(["x"], 300, special_tokens=specials)


def test_non_string_corpus_item_is_named():
    with pytest.raises(TypeError, match="corpus item 1 is int"):
        bytepair.train(["ok", 3], 300)
    with pytest.raises(TypeError, match="not bytes"):
        bytepair.train(b"bytes", 300)


def test_missing_training_file_is_named(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        bytepair.train([missing], 300)


def test_non_utf8_training_file_names_offset(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"ok\ncaf\xe9\n")
    with pytest.raises(
        ValueError, match=r"latin1.txt: not UTF-8 text \(byte 0xE9 at offset 6, line 2\)"
    ):
        bytepair.train([path], 300)


def test_lone_surrogates_are_rejected(tokenizer):
    with pytest.raises(ValueError, match="lone surrogate .* at position 2"):
        tokenizer.encode("ab\ud800")
    with pytest.raises(ValueError, match="lone surrogate"):
        tokenizer.encode_ordinary("\udfff")
    with pytest.raises(ValueError, match="text 1 of the batch"):
        tokenizer.encode_batch(["fine", "x\ud800"])
    with pytest.raises(ValueError, match="lone surrogate"):
        bytepair.train(["ok", "\ud800"], 300)


@pytest.mark.parametrize(
    "ids, message",
    [
        ([1, 99999], "token id 99999 at position 1"),
        ([-1], "token id -1 at position 0"),
        ([0, "x"], "position 1 is 'x'"),
    ],
)
def test_out_of_range_ids_are_named(tokenizer, ids, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        tokenizer.decode(ids)
    # One id: the message names no position.
    single = ids[-1]
    expected = f"token id {single!r} is not " + ("in the vocabulary" if single != "x" else "an int")
    with pytest.raises(ValueError, match=re.escape(expected)):
        tokenizer.decode_single_token_bytes(single)


def test_an_unused_id_of_one_token_is_named(shared_data):
    cl100k = bytepair.load(shared_data / "models" / "tiktoken" / "cl100k_base.tiktoken")
    with pytest.raises(ValueError, match=r"^token id 100256 is unused: no token"):
        cl100k.decode_single_token_bytes(100256)
    with pytest.raises(ValueError, match=r"token id 100256 at position 1 is unused"):
        cl100k.decode_bytes([0, 100256])


def test_non_str_text_is_a_type_error(tokenizer):
    with pytest.raises(TypeError, match="text must be str, not bytes"):
        tokenizer.encode(b"abc")


def test_one_text_given_as_a_batch_is_a_type_error(tokenizer, shared_data):
    """list() of a str is its characters: a batch of one-character texts."""
    unigram = bytepair.load(shared_data / "models" / "sentencepiece" / "sp_test_model.model")
    for batch in (
        tokenizer.encode_batch,
        tokenizer.encode_ordinary_batch,
        tokenizer.encode_batch_to_numpy,
        unigram.encode_batch,
        unigram.encode_ordinary_batch,
    ):
        for text in ("abc", b"abc"):
            with pytest.raises(TypeError, match="a batch is an iterable of str, not one"):
                batch(text)
    assert tokenizer.encode_batch(["abc"]) == [tokenizer.encode("abc")]


def test_unknown_pretokenizer_name_is_not_a_regex():
    with pytest.raises(ValueError, match="unknown pre-tokenizer 'gtp2'"):
        bytepair.train(["x"], 300, pretokenizer="gtp2")


def test_invalid_user_regex_is_an_error():
    with pytest.raises(ValueError, match="invalid pre-tokenizer regex"):
        bytepair.train(["x"], 300, pretokenizer=bytepair.Pretokenizer("regex", "(unclosed"))


def test_bad_min_frequency_and_vocab_size_types():
    with pytest.raises(ValueError, match="min_frequency"):
        bytepair.train(["x"], 300, min_frequency=0)
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        bytepair.train(["x"], 300.0)


def test_stopping_early_warns_and_reports():
    with pytest.warns(UserWarning, match="no pair of tokens is left"):
        tok = bytepair.train(["ab"], 1000, pretokenizer="none", progress=False)
    assert tok.training.stop_reason == "no_pairs"
    with pytest.warns(UserWarning, match="min_frequency=5"):
        tok = bytepair.train(["abab"], 1000, min_frequency=5, progress=False)
    assert tok.training.stop_reason == "min_frequency"


def test_inconsistent_model_is_rejected_with_the_rank():
    tokens = tuple(bytes([b]) for b in range(256))
    model = bytepair.BPEModel(tokens, ((97, 98),), {}, bytepair.pretokenizers.resolve("gpt2"))
    with pytest.raises(ValueError, match=r"merge rank 0 \(97 \+ 98\)"):
        bytepair.Tokenizer(model)


def test_save_refuses_to_overwrite(tmp_path: Path, tokenizer):
    path = tmp_path / "tok.json"
    tokenizer.save(path)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        tokenizer.save(path)
    tokenizer.save(path, overwrite=True)
    # A directory is no tokenizer.json path, overwrite or not (it said to pass overwrite=True).
    unigram = bytepair.train(["hello world, hello there"] * 20, 40, model="unigram", progress=False)
    for tok in (tokenizer, unigram):
        for overwrite in (False, True):
            with pytest.raises(IsADirectoryError, match="is a directory.*tokenizer.json"):
                tok.save(tmp_path, overwrite=overwrite)


def test_corrupt_file_names_file(tmp_path: Path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": ')
    with pytest.raises(bytepair.FormatError, match="tokenizer.json"):
        bytepair.load(path)


def _byte_level_tokenizer_json(extra_vocab: dict) -> str:
    """A minimal byte-level BPE tokenizer.json: the 256 bytes plus ``extra_vocab``."""
    from bytepair.formats.byte_level import BYTE_CHARS

    vocab = {char: byte for byte, char in enumerate(BYTE_CHARS)}
    vocab.update(extra_vocab)
    document = {
        "version": "1.0",
        "added_tokens": [],
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab, "merges": []},
    }
    return json.dumps(document)


def test_huge_id_in_tokenizer_json_is_refused_before_allocating(tmp_path: Path):
    path = tmp_path / "huge.tokenizer.json"
    path.write_text(_byte_level_tokenizer_json({"lower_": 4_000_000_000}))
    with pytest.raises(
        bytepair.FormatError,
        match=r"huge.tokenizer.json \(model.vocab key 'lower_'\): id 4000000000 is far beyond "
        r"the 257 entries",
    ):
        bytepair.load(path)


def test_ids_may_leave_room_for_unused_ids(tmp_path: Path):
    from bytepair.formats.byte_level import id_limit

    path = tmp_path / "tokenizer.json"
    path.write_text(_byte_level_tokenizer_json({"lower_": id_limit(257) - 1}))
    assert bytepair.load(path).n_vocab == id_limit(257)


def test_huge_rank_in_tiktoken_file_is_refused_before_allocating(tmp_path: Path):
    path = tmp_path / "huge.tiktoken"
    path.write_text("YQ== 0\naGk= 4000000000\n")
    with pytest.raises(
        bytepair.FormatError,
        match=r"huge.tiktoken \(line 2\): rank 4000000000 is far beyond the file's 2 tokens",
    ):
        bytepair.load_tiktoken(path, pattern="gpt2")
    path.write_text("YQ== 0\n")
    with pytest.raises(
        bytepair.FormatError,
        match=r"huge.tiktoken: special token '<s>' has id 4000000000, far beyond",
    ):
        bytepair.load_tiktoken(path, pattern="gpt2", special_tokens={"<s>": 4_000_000_000})


def test_huge_rank_given_as_a_dict_is_refused():
    from bytepair.formats.tiktoken import model_from_ranks

    with pytest.raises(ValueError, match=r"the rank 4000000000 of b'hi' is far beyond the 2"):
        model_from_ranks({b"a": 0, b"hi": 4_000_000_000}, "gpt2")


def _unigram_tokenizer_json(score: str) -> str:
    document = {
        "version": "1.0",
        "added_tokens": [],
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"},
        "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", "SCORE"]]},
    }
    return json.dumps(document).replace('"SCORE"', score)


@pytest.mark.parametrize("score", ["1e400", "-1e400", "1" + "0" * 400])
def test_unigram_score_beyond_a_double_names_the_entry(tmp_path: Path, score):
    path = tmp_path / "unigram.tokenizer.json"
    path.write_text(_unigram_tokenizer_json(score))
    with pytest.raises(
        bytepair.FormatError,
        match=r"unigram.tokenizer.json \(model.vocab\[1\]\): the score .* of 'a' is out of the "
        r"range of a double",
    ):
        bytepair.load(path)


def test_unigram_json_too_deep_or_too_long_names_the_file(tmp_path: Path):
    from bytepair.formats import hf_unigram

    path = tmp_path / "deep.tokenizer.json"
    path.write_text("[" * 200_000)
    with pytest.raises(bytepair.FormatError, match=r"deep.tokenizer.json: invalid JSON: .*deeply"):
        hf_unigram.load(path)
    path.write_text(_unigram_tokenizer_json("1" * 5000))
    with pytest.raises(bytepair.FormatError, match=r"deep.tokenizer.json: invalid JSON: .*digits"):
        hf_unigram.load(path)


def test_deeply_nested_json_names_the_file(tmp_path: Path):
    path = tmp_path / "deep.tokenizer.json"
    path.write_text("[" * 200_000)
    with pytest.raises(bytepair.FormatError, match=r"deep.tokenizer.json: invalid JSON"):
        bytepair.load(path)


@pytest.mark.parametrize("regex", [False, True])
def test_normalizer_chain_that_multiplies_the_text_is_an_error(shared_data, tmp_path, regex):
    """Twelve Replace steps, each making "l" ten times longer, would grow a
    word to a terabyte: the step that passes 64 times the input is named,
    instead of the allocation failing and aborting the process."""
    source = shared_data / "models" / "hf" / "t5-small.tokenizer.json"
    if not source.is_file():
        pytest.skip(f"{source} is missing from the shared data")
    document = json.loads(source.read_text(encoding="utf-8"))
    pattern = {"Regex": "l"} if regex else {"String": "l"}
    step = {"type": "Replace", "pattern": pattern, "content": "l" * 10}
    document["normalizer"] = {
        "type": "Sequence",
        "normalizers": [document["normalizer"]] + [step] * 12,
    }
    path = tmp_path / "bomb.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    tok = bytepair.load(path)
    assert tok.encode_ordinary("Hi") == tok.encode_ordinary("Hi")  # no l: nothing grows
    with pytest.raises(ValueError, match=r"normalizer step \d+ \(Replace\) would make the text"):
        tok.encode_ordinary("Hello")


def test_a_model_built_by_hand_is_checked_field_by_field():
    """The core's argument conversion would fail first, naming nothing."""
    from bytepair.pretokenizers import resolve

    tokens = tuple(bytes([b]) for b in range(256))
    pre = resolve("gpt2")
    cases = [
        (
            bytepair.BPEModel(tokens + (b"<\xff>",), (), {"<\ud800>": 256}, pre),
            ValueError,
            r"special token '<\\ud800>' contains the lone surrogate",
        ),
        (
            bytepair.BPEModel(tokens, ((97, 2**32),), {}, pre),
            ValueError,
            r"merge rank 0 is \(97, 4294967296\), not a pair of token ids",
        ),
        (bytepair.BPEModel(tokens, ((97,),), {}, pre), ValueError, "merge rank 0 is"),
        (
            bytepair.BPEModel(tokens, ([97, 98], (True, 97)), {}, pre),
            ValueError,
            r"merge rank 1 is \(True, 97\), not a pair of token ids",
        ),
        (bytepair.BPEModel(tokens, ((97, 98.0),), {}, pre), ValueError, "merge rank 0 is"),
        (
            bytepair.BPEModel(tokens + ("x",), None, {}, pre),
            TypeError,
            r"tokens\[256\] is str, not bytes",
        ),
        (
            bytepair.BPEModel(tokens + (b"<s>",), (), {"<s>": -1}, pre),
            ValueError,
            "special token '<s>' has the id -1, not a token id",
        ),
        (
            bytepair.BPEModel(tokens + (b"<s>",), (), {"<s>": "256"}, pre),
            TypeError,
            "special token '<s>' has the id '256', not an int",
        ),
    ]
    for model, error, message in cases:
        with pytest.raises(error, match=message):
            bytepair.Tokenizer(model)


def test_a_bad_field_of_a_model_built_by_hand_is_named():
    """Each field's shape is checked when the model is made; before, most of
    these failed inside dict() or the core, naming no field."""
    from bytepair import BPEModel, Pretokenizer
    from bytepair.pretokenizers import resolve

    tokens = tuple(bytes([b]) for b in range(256)) + (b"<s>",)
    pre, specials = resolve("gpt2"), {"<s>": 256}
    cases = [
        ({"tokens": None}, TypeError, r"BPEModel\.tokens must be a sequence .*not NoneType"),
        ({"tokens": "abc"}, TypeError, r"BPEModel\.tokens must be a sequence .*not str"),
        ({"merges": 5}, TypeError, r"BPEModel\.merges must be a sequence .*not int"),
        ({"special_tokens": None}, TypeError, r"BPEModel\.special_tokens must be a mapping"),
        ({"pretokenizer": "gpt2"}, TypeError, r"BPEModel\.pretokenizer must be a Pretokenizer"),
        (
            {"pretokenizer": Pretokenizer("regex", None)},
            ValueError,
            r"BPEModel\.pretokenizer: a regex pre-tokenizer needs a pattern",
        ),
        (
            {"pretokenizer": Pretokenizer("gpt2", r"\w+")},
            ValueError,
            r"BPEModel\.pretokenizer: '\\\\w\+' is not the pattern of the gpt2",
        ),
        (
            {"pretokenizer": Pretokenizer("gpt3", None)},
            ValueError,
            r"BPEModel\.pretokenizer: unknown kind 'gpt3'",
        ),
        (
            {"special_token_strip": [("<s>", (True, False))]},
            TypeError,
            r"BPEModel\.special_token_strip must be a mapping",
        ),
        (
            {"special_token_strip": {"<s>": True}},
            TypeError,
            r"BPEModel\.special_token_strip\['<s>'\] is True, not a pair \(lstrip, rstrip\)",
        ),
        (
            {"special_token_strip": {"<s>": (1, 0)}},
            TypeError,
            r"BPEModel\.special_token_strip\['<s>'\] is \(1, 0\)",
        ),
        (
            {"special_token_strip": {"<t>": (True, False)}},
            ValueError,
            r"BPEModel\.special_token_strip names '<t>', which is not a key of special_tokens",
        ),
        ({"normalize": "nfc"}, TypeError, r"BPEModel\.normalize must be a tuple, not str"),
        ({"normalize": ("nfd",)}, ValueError, r"BPEModel\.normalize: unknown normalization 'nfd'"),
        ({"normalize": (1,)}, TypeError, r"BPEModel\.normalize: .*not int"),
        (
            {"normalize": ("lowercase", "nfc")},
            ValueError,
            r"BPEModel\.normalize must be \('nfc', 'lowercase'\) \(the form first\)",
        ),
        ({"added_tokens": None}, TypeError, r"BPEModel\.added_tokens must be a collection"),
    ]
    fields = {"tokens": tokens, "merges": (), "special_tokens": specials, "pretokenizer": pre}
    for bad, error, message in cases:
        with pytest.raises(error, match=message):
            BPEModel(**{**fields, **bad})
    # What the core reads entry by entry names the field too.
    with pytest.raises(ValueError, match=r"BPEModel\.special_tokens: special token '<s>' has"):
        bytepair.Tokenizer(BPEModel(tokens, (), {"<s>": -1}, pre))
    model = BPEModel(
        tokens, (), specials, pre, special_token_strip={"<s>": (True, False)}, normalize=("nfc",)
    )
    assert bytepair.Tokenizer(model).encode(" <s>", allowed_special="all") == [256]


def test_models_built_by_hand_take_numpy_integers_as_the_core_does(shared_data):
    import dataclasses

    import numpy as np

    from bytepair.pretokenizers import resolve

    tokens = tuple(bytes([b]) for b in range(256)) + (b"ab", b"<s>")
    ids = {"<s>": np.int64(257)}
    model = bytepair.BPEModel(tokens, ((np.int64(97), np.int64(98)),), ids, resolve("gpt2"))
    assert bytepair.Tokenizer(model).encode("ab<s>", allowed_special="all") == [256, 257]
    path = shared_data / "models" / "sentencepiece" / "sp_test_model.model"
    if path.is_file():
        tok = bytepair.load(path)
        model = dataclasses.replace(tok.model, unk_id=np.int64(tok.model.unk_id))
        loaded = bytepair.SentencePieceTokenizer(model, flavor="sentencepiece")
        assert loaded.encode("hello world") == tok.encode("hello world")
        with pytest.raises(ValueError, match="tokenizers flavor follows a tokenizer.json"):
            bytepair.SentencePieceTokenizer(tok.model, flavor="tokenizers")
