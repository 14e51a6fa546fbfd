"""Bad input gets a clear Python exception naming what was wrong, never a crash."""

from __future__ import annotations

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
    with pytest.raises(ValueError):
        tokenizer.decode_single_token_bytes(ids[-1] if isinstance(ids[-1], int) else 10**6)


def test_non_str_text_is_a_type_error(tokenizer):
    with pytest.raises(TypeError, match="text must be str, not bytes"):
        tokenizer.encode(b"abc")


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


def test_corrupt_file_names_file(tmp_path: Path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": ')
    with pytest.raises(bytepair.FormatError, match="tokenizer.json"):
        bytepair.load(path)
