"""BPE-dropout: p=0 is the ordinary encoding, p=1 is bytes, anything between
decodes back to the text, is reproducible for a seed, and really varies."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair

CORPUS = ["the lower lowest newer newest wider widest, hello world; 12345 tokens"] * 30


@pytest.fixture(scope="module")
def tokenizer():
    return bytepair.train(CORPUS, 330, special_tokens=["<|end|>"], progress=False)


@pytest.fixture(scope="module")
def tiktoken_rule(shared_data):
    return bytepair.load_tiktoken(shared_data / "models" / "tiktoken" / "r50k_base.tiktoken")


@pytest.mark.slow
@given(text=st.text(max_size=80), seed=st.integers(0, 2**64 - 1))
def test_zero_is_the_ordinary_encoding(tokenizer, text, seed):
    assert tokenizer.encode(text, dropout=0.0, seed=seed, disallowed_special=()) == (
        tokenizer.encode_ordinary(text)
    )


@given(
    text=st.text(max_size=80),
    p=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**64 - 1),
)
def test_any_dropout_decodes_back_and_repeats_for_a_seed(tokenizer, text, p, seed):
    ids = tokenizer.encode_ordinary(text, dropout=p, seed=seed)
    assert tokenizer.decode_bytes(ids) == text.encode("utf-8", "surrogatepass")
    assert ids == tokenizer.encode_ordinary(text, dropout=p, seed=seed)


def test_one_gives_single_bytes_even_for_whole_word_tokens(tokenizer, tiktoken_rule):
    for tok in (tokenizer, tiktoken_rule):
        text = "hello world lowest"
        ids = tok.encode_ordinary(text, dropout=1.0)
        assert [tok.decode_single_token_bytes(i) for i in ids] == [
            bytes([b]) for b in text.encode()
        ]


def test_between_zero_and_one_the_segmentation_varies(tokenizer, tiktoken_rule):
    for tok in (tokenizer, tiktoken_rule):
        text = " lowest newest widest hello"
        plain = tok.encode_ordinary(text)
        seen = {tuple(tok.encode_ordinary(text, dropout=0.2, seed=s)) for s in range(100)}
        assert len(seen) > 5 and tuple(plain) in seen
        # Smaller pieces on average: more tokens than without dropout.
        mean = sum(map(len, seen)) / len(seen)
        assert mean > len(plain)


def test_specials_and_batches(tokenizer):
    text = "hello<|end|> world"
    ids = tokenizer.encode(text, allowed_special="all", dropout=0.5, seed=1)
    assert tokenizer.special_tokens["<|end|>"] in ids
    with pytest.raises(ValueError, match="<|end|>"):
        tokenizer.encode(text, dropout=0.5, seed=1)
    batch = tokenizer.encode_batch([text] * 50, allowed_special="all", dropout=0.5, seed=7)
    assert batch == tokenizer.encode_batch([text] * 50, allowed_special="all", dropout=0.5, seed=7)
    assert len({tuple(ids) for ids in batch}) > 1  # each text draws from its own stream
    assert tokenizer.encode_ordinary_batch(["a b"], dropout=0.0) == [
        tokenizer.encode_ordinary("a b")
    ]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"dropout": 1.5}, ValueError, "between 0 and 1"),
        ({"dropout": -0.1}, ValueError, "between 0 and 1"),
        ({"dropout": "0.1"}, TypeError, "dropout must be a number"),
        ({"dropout": 0.1, "seed": 1.5}, TypeError, "seed must be an int"),
    ],
)
def test_bad_arguments_are_named(tokenizer, kwargs, error, message):
    with pytest.raises(error, match=message):
        tokenizer.encode("hello", **kwargs)


def test_numpy_forms_give_the_ids_of_the_list_forms(tokenizer):
    texts = ["the lowest newer <|end|> tokens", "", "wider widest hello"] * 200
    for seed in (1, 2, 3):
        one = tokenizer.encode_to_numpy(texts[0], allowed_special="all", dropout=0.3, seed=seed)
        listed = tokenizer.encode(texts[0], allowed_special="all", dropout=0.3, seed=seed)
        assert one.tolist() == listed
        ids, offsets = tokenizer.encode_batch_to_numpy(
            texts, disallowed_special=(), dropout=0.3, seed=seed
        )
        lists = tokenizer.encode_batch(texts, disallowed_special=(), dropout=0.3, seed=seed)
        assert ids.tolist() == [i for one in lists for i in one]
        assert offsets.tolist() == [0, *itertools.accumulate(map(len, lists))]
    # It really drops merges: some text comes out in more pieces than without dropout.
    plain = tokenizer.encode_batch_to_numpy(texts, disallowed_special=())[0]
    assert len(
        tokenizer.encode_batch_to_numpy(texts, dropout=0.3, seed=1, disallowed_special=())[0]
    ) > len(plain)
    with pytest.raises(ValueError, match="between 0 and 1"):
        tokenizer.encode_batch_to_numpy(texts, dropout=2.0)
