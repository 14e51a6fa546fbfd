"""Tokenizer.decode takes any iterable of ints, like the core takes a list or
a numpy array, and bad ids still get an error naming the id and its position."""

from __future__ import annotations

import array
import warnings
from dataclasses import replace

import numpy as np
import pytest

import bytepair


@pytest.fixture(scope="module")
def tok():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stops early: the corpus is tiny
        return bytepair.train(
            ["hello world, naïve 👍🏽"] * 10, vocab_size=300, special_tokens=["<|e|>"]
        )


TEXT = "hello world, naïve 👍🏽<|e|>"


def test_every_iterable_of_ints_decodes_like_a_list(tok):
    ids = tok.encode(TEXT, allowed_special="all")
    assert tok.decode(ids) == TEXT
    forms = [  # factories: a generator is read once
        lambda: tuple(ids),
        lambda: iter(ids),
        lambda: (i for i in ids),
        lambda: np.array(ids),
        lambda: np.array(ids, dtype=np.uint32),
        lambda: np.array([i for i in ids for _ in (0, 1)], dtype=np.uint32)[::2],  # strided
        lambda: np.array(ids, dtype=">u4"),  # not this machine's byte order
        lambda: np.array(ids, dtype="<u4"),
        lambda: array.array("I", ids),
        lambda: [np.int64(i) for i in ids],
    ]
    for form in forms:
        assert tok.decode(form()) == TEXT, form()
        assert tok.decode_bytes(form()) == TEXT.encode(), form()
    assert tok.decode(range(5, 8)) == tok.decode([5, 6, 7])
    unique = list(dict.fromkeys(ids))
    assert tok.decode(dict.fromkeys(ids).keys()) == tok.decode(unique)
    assert tok.decode(i for i in []) == ""
    assert tok.decode_single_token_bytes(np.int64(ids[0])) == tok.decode_single_token_bytes(ids[0])


def test_bad_ids_are_named_with_their_position_whatever_holds_them(tok):
    n = tok.n_vocab
    not_in = rf"is not in the vocabulary \(it has {n} ids, 0 to {n - 1}\)$"
    cases = [  # factories: a generator is read once
        (lambda: (i for i in [5, n]), rf"^token id {n} at position 1 {not_in}"),
        (lambda: {5: 0, -1: 0}.keys(), rf"^token id -1 at position 1 {not_in}"),
        (lambda: [np.int64(5), -1], rf"^token id -1 at position 1 {not_in}"),  # was: "not an int"
        (lambda: np.array([5, 6, n]), rf"^token id {n} at position 2 {not_in}"),
        (lambda: np.array([5, 6, n], dtype=np.uint32), rf"^token id {n} at position 2 {not_in}"),
        (
            lambda: np.array([[5, 6]], dtype=np.uint32),
            r"^id at position 0 is array\(\[5, 6\], dtype=uint32\), not an int$",
        ),
        (lambda: [5, 10**30], rf"^token id {10**30} at position 1 {not_in}"),
        (lambda: (x for x in [5, "x"]), r"^id at position 1 is 'x', not an int$"),
        (lambda: [5, 2.0], r"^id at position 1 is 2.0, not an int$"),
        (lambda: np.array([5.0]), r"^id at position 0 is np.float64\(5.0\), not an int$"),
    ]
    for ids, message in cases:
        for call in (tok.decode, tok.decode_bytes):
            with pytest.raises(ValueError, match=message):
                call(ids())
    with pytest.raises(ValueError, match=rf"^token id {n} {not_in}"):  # one id: no position
        tok.decode_single_token_bytes(n)
    for not_iterable in (5, None):
        with pytest.raises(TypeError, match="ids must be an iterable of ints, not"):
            tok.decode(not_iterable)
    # Text given by mistake, or an order that means nothing (tiktoken refuses them too).
    for wrong in (b"abc", bytearray(b"abc"), "abc", {5, 6}, frozenset([5]), {5: 0}):
        for call in (tok.decode, tok.decode_bytes):
            with pytest.raises(
                TypeError, match=f"ids must be an iterable of ints, not {type(wrong).__name__}"
            ):
                call(wrong)


def test_batches_of_ids_decode_each_list_and_name_the_bad_one(tok):
    ids = tok.encode(TEXT, allowed_special="all")
    lists = [ids, [], ids[:3]]
    expected = [tok.decode(i) for i in lists]
    assert tok.decode_batch(lists) == expected
    assert tok.decode_batch(iter(lists), num_threads=1) == expected
    assert tok.decode_batch([np.array(i, dtype=np.uint32) for i in lists]) == expected
    assert tok.decode_bytes_batch(lists) == [tok.decode_bytes(i) for i in lists]
    assert tok.decode_batch([[240]], errors="ignore") == [tok.decode([240], "ignore")]
    invalid = [i for i in range(tok.n_vocab) if tok.decode_single_token_bytes(i) == b"\xff"]
    with pytest.raises(UnicodeDecodeError):
        tok.decode_batch([ids, invalid], errors="strict")
    n = tok.n_vocab
    with pytest.raises(ValueError, match=rf"^batch\[1\]: token id {n} at position 2 "):
        tok.decode_batch([ids, [5, 6, n]])
    with pytest.raises(TypeError, match=r"^batch\[0\]: ids must be an iterable of ints, not str"):
        tok.decode_batch(["abc"])
    with pytest.raises(TypeError, match="batch must be an iterable of lists of ids, not str"):
        tok.decode_batch("abc")
    with pytest.raises(ValueError, match="num_threads must be at least 1, not 0"):
        tok.decode_batch(lists, num_threads=0)
    uni = bytepair.train(["hello world, naïve"] * 20, vocab_size=40, model="unigram")
    uni_ids = [uni.encode("hello"), uni.encode("naïve world")]
    assert uni.decode_batch(uni_ids) == ["hello", "naïve world"]
    assert uni.decode_bytes_batch(uni_ids) == [b"hello", "naïve world".encode()]


def test_tiktoken_members_name_bad_input(tok):
    n = tok.n_vocab
    with pytest.raises(ValueError, match=rf"^token id {n} at position 1 "):
        tok.decode_tokens_bytes([5, n])
    with pytest.raises(ValueError, match=r"^id at position 0 is 'x', not an int$"):
        tok.decode_tokens_bytes(["x"])
    with pytest.raises(KeyError, match=r"<\|endoftext\|> is not a special token .*'<\|e\|>'"):
        _ = tok.eot_token
    special = tok.special_tokens["<|e|>"]
    assert tok.is_special_token(special) and tok.is_special_token(np.int64(special))
    assert not tok.is_special_token(5)
    for wrong in (True, "5", 5.0):
        with pytest.raises(TypeError):
            tok.is_special_token(wrong)
    assert tok.encode_single_token("<|e|>") == special
    assert tok.encode_single_token(tok.model.tokens[n - 1]) == n - 1
    with pytest.raises(TypeError, match="expected str or bytes, not int"):
        tok.encode_single_token(5)
    with pytest.raises(KeyError):
        tok.encode_single_token("\ud800")  # a lone surrogate is no token's text
    model = tok.model
    with_empty = bytepair.Tokenizer(replace(model, tokens=(*model.tokens, b"")))
    with pytest.raises(ValueError, match=rf"^token id {n} at position 1 is unused"):
        with_empty.decode_tokens_bytes([5, n])
    assert with_empty.max_token_value == n - 1
    assert with_empty.token_byte_values() == tok.token_byte_values()
    assert tok.max_token_value == n - 1
    assert len(tok.token_byte_values()) == n - len(tok.model.special_tokens)
