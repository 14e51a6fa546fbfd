"""Special tokens follow tiktoken's allowed/disallowed contract."""

from __future__ import annotations

import pytest

import bytepair
from bytepair import DisallowedSpecialError

SPECIALS = ["<|endoftext|>", "<|pad|>"]


@pytest.fixture(scope="module")
def tokenizer():
    corpus = ["hello world<|endoftext|>goodbye world<|pad|>"] * 20
    return bytepair.train(corpus, 300, special_tokens=SPECIALS, progress=False)


def test_special_ids_come_first(tokenizer):
    assert tokenizer.special_tokens == {"<|endoftext|>": 0, "<|pad|>": 1}
    assert tokenizer.special_tokens_set == set(SPECIALS)
    assert tokenizer.decode_single_token_bytes(0) == b"<|endoftext|>"
    assert tokenizer.decode_single_token_bytes(2) == b"\x00"


def test_special_text_never_enters_training(tokenizer):
    for left, right in tokenizer.merges:
        assert b"<|" not in left + right


def test_disallowed_special_raises_with_a_fix(tokenizer):
    with pytest.raises(DisallowedSpecialError, match="allowed_special") as info:
        tokenizer.encode("hi <|endoftext|>")
    assert "<|endoftext|>" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_allowed_special_becomes_its_id(tokenizer):
    ids = tokenizer.encode("hi<|endoftext|>there", allowed_special={"<|endoftext|>"})
    assert 0 in ids
    assert tokenizer.decode(ids) == "hi<|endoftext|>there"
    assert tokenizer.encode("<|pad|>", allowed_special="all") == [1]


def test_only_allowed_specials_are_split_out(tokenizer):
    text = "<|endoftext|><|pad|>"
    ids = tokenizer.encode(text, allowed_special={"<|pad|>"}, disallowed_special=())
    assert ids[-1] == 1 and 0 not in ids
    assert tokenizer.decode(ids) == text


def test_disallowed_check_can_be_turned_off(tokenizer):
    text = "x<|endoftext|>"
    assert tokenizer.encode(text, disallowed_special=()) == tokenizer.encode_ordinary(text)
    assert 0 not in tokenizer.encode_ordinary(text)


def test_unknown_special_names_are_rejected(tokenizer):
    with pytest.raises(ValueError, match="not special tokens"):
        tokenizer.encode("x", allowed_special={"<|nope|>"})


def test_batch_follows_the_same_contract(tokenizer):
    with pytest.raises(DisallowedSpecialError, match="text 1 of the batch"):
        tokenizer.encode_batch(["fine", "bad <|pad|>"])
    out = tokenizer.encode_batch(["a<|pad|>", "b"], allowed_special="all")
    assert out[0][-1] == 1


def test_overlapping_specials_take_the_longest():
    tok = bytepair.train(["x"], 300, special_tokens=["<a>", "<a><b>"], progress=False)
    assert tok.encode("<a><b><a>", allowed_special="all") == [1, 0]
