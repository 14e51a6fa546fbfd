"""The Rust core returns exactly what the reference returns: the same merges
(pair and count, in order), the same ids, on every corpus and text."""

from __future__ import annotations

import random
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair.reference import bpe as reference
from strategies import PRETOKENIZERS, assigned_text, corpora, corpus_text


def train_both(texts, vocab_size, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        core = bytepair.train(texts, vocab_size, progress=False, **kwargs)
    ref = reference.train(texts, vocab_size, **kwargs)
    return core, ref


def assert_same_training(core, ref):
    assert core.merges == ref.merges
    assert list(core.training.merge_counts) == ref.counts
    assert list(core.model.merges) == ref.merge_ids
    assert list(core.model.tokens) == ref.tokens
    assert core.training.stop_reason == ref.stop_reason


@given(corpora, st.integers(256, 330), st.sampled_from(PRETOKENIZERS))
def test_core_merges_equal_reference(texts, vocab_size, pretokenizer):
    core, ref = train_both(texts, vocab_size, pretokenizer=pretokenizer)
    assert_same_training(core, ref)


@given(corpora, st.integers(256, 300), st.integers(1, 4))
def test_core_merges_equal_reference_with_min_frequency(texts, vocab_size, min_frequency):
    core, ref = train_both(texts, vocab_size, pretokenizer="none", min_frequency=min_frequency)
    assert_same_training(core, ref)


@given(corpora, st.sampled_from(PRETOKENIZERS), st.lists(corpus_text, max_size=5))
def test_core_ids_equal_reference(texts, pretokenizer, probes):
    core, ref = train_both(texts, 320, pretokenizer=pretokenizer)
    for text in probes + texts:
        expected = reference.encode(text, ref.tokens, ref.merge_ids, pretokenizer=pretokenizer)
        assert core.encode_ordinary(text) == expected


@given(
    corpora,
    st.lists(st.sampled_from(["<s>", "<|end|>", "ab"]), min_size=1, max_size=3, unique=True),
)
def test_special_tokens_are_cut_out_like_the_reference(texts, specials):
    joined = [t + specials[0] + t for t in texts]
    core, ref = train_both(joined, 300, special_tokens=specials, pretokenizer="gpt2")
    assert_same_training(core, ref)
    special_ids = {s: i for i, s in enumerate(specials)}
    for text in joined:
        expected = reference.encode(
            text,
            ref.tokens,
            ref.merge_ids,
            special_tokens=special_ids,
            pretokenizer="gpt2",
            allowed_special=specials,
        )
        assert core.encode(text, allowed_special="all") == expected


ADDED_CANDIDATES = ["<s>", "<|end|>", "ab", "  ", "b<", "<s"]


@pytest.mark.slow
@given(
    corpora,
    st.lists(st.sampled_from(ADDED_CANDIDATES), min_size=1, max_size=5, unique=True),
    st.data(),
)
def test_added_tokens_are_always_cut_out_like_the_reference(texts, specials, data):
    """Non-special added tokens (marked among the specials): the core cuts them
    out in every encode, as the reference does, whatever is allowed."""
    import dataclasses

    added = data.draw(st.lists(st.sampled_from(specials), unique=True), label="added")
    allowed = data.draw(st.lists(st.sampled_from(specials), unique=True), label="allowed")
    probes = data.draw(
        st.lists(
            st.lists(st.sampled_from(list("abs<>|end x") + specials), max_size=12).map("".join),
            max_size=4,
        ),
        label="probes",
    )
    joined = [t + specials[0] + t for t in texts]
    trained, ref = train_both(joined, 300, special_tokens=specials, pretokenizer="gpt2")
    core = bytepair.Tokenizer(dataclasses.replace(trained.model, added_tokens=tuple(added)))
    special_ids = {s: i for i, s in enumerate(specials)}

    def expected(text, allowed_special):
        return reference.encode(
            text,
            ref.tokens,
            ref.merge_ids,
            special_tokens=special_ids,
            pretokenizer="gpt2",
            allowed_special=allowed_special,
            added_tokens=added,
        )

    for text in probes + joined:
        assert core.encode(text, allowed_special="all") == expected(text, "all")
        assert core.encode_ordinary(text) == expected(text, ())
        assert core.encode(text, allowed_special=allowed, disallowed_special=()) == expected(
            text, allowed
        )
        assert core.decode(core.encode_ordinary(text)) == text


def test_reference_checks_its_added_tokens():
    with pytest.raises(ValueError, match="not a key of special_tokens"):
        reference.encode("x", [bytes([b]) for b in range(256)], [], added_tokens=["<s>"])


@given(st.text(alphabet="abcx", max_size=40), st.permutations(range(4)))
def test_two_merges_making_the_same_bytes_encode_like_the_reference(text, order):
    # Training never makes the same bytes twice (a token's bytes fix the merge
    # that made it), but loaded vocabularies can: "abc" = a+bc = ab+c.
    tokens = [bytes([b]) for b in range(256)] + [b"bc", b"ab", b"abc"]
    ids = {t: i for i, t in enumerate(tokens)}
    rules = [(b"b", b"c"), (b"a", b"bc"), (b"a", b"b"), (b"ab", b"c")]
    merges = tuple((ids[rules[i][0]], ids[rules[i][1]]) for i in order)
    model = bytepair.BPEModel(tuple(tokens), merges, {}, bytepair.pretokenizers.resolve("none"))
    core = bytepair.Tokenizer(model)
    expected = reference.encode(text, tokens, list(merges), pretokenizer="none")
    assert core.encode_ordinary(text) == expected
    assert core.decode(expected) == text


def test_long_pieces_encode_like_the_reference():
    rng = random.Random(7)
    texts = ["".join(rng.choice("ab") for _ in range(300)) for _ in range(5)]
    core, ref = train_both(texts, 300, pretokenizer="none")
    assert_same_training(core, ref)
    for _ in range(5):
        text = "".join(rng.choice("aab") for _ in range(500))  # beyond the scan limit
        assert core.encode_ordinary(text) == reference.encode(
            text, ref.tokens, ref.merge_ids, pretokenizer="none"
        )


@given(assigned_text)
def test_pretokenizers_cut_like_the_reference(text):
    tok = bytepair.train(["x"], 256, progress=False)
    for name in PRETOKENIZERS:
        core = bytepair.Tokenizer(
            bytepair.BPEModel(tok.model.tokens, (), {}, bytepair.pretokenizers.resolve(name))
        )
        assert core.pretokenize(text) == reference.pretokenize(text, name)


def test_golden_example_from_the_spec():
    texts = ["low_"] * 5 + ["lower_"] * 2 + ["lowest_"] * 3
    tok = bytepair.train(texts, 256 + 6, pretokenizer="none", progress=False)
    assert tok.merges == [
        (b"l", b"o"),
        (b"lo", b"w"),
        (b"low", b"_"),
        (b"low", b"e"),
        (b"lowe", b"s"),
        (b"lowes", b"t"),
    ]
    assert tok.training.merge_counts == (10, 10, 5, 5, 3, 3)


@pytest.mark.slow
def test_core_merges_equal_reference_on_real_text(shared_data):
    text = (shared_data / "corpus" / "small" / "taylorswift.txt").read_text(encoding="utf-8")
    docs = text[:30000].split("\n\n")
    core, ref = train_both(docs, 256 + 120, pretokenizer="gpt2")
    assert_same_training(core, ref)


TIKTOKEN_PRETOKENIZERS = ["r50k", "p50k", "cl100k", "o200k"]


@given(st.one_of(assigned_text, corpus_text), st.sampled_from(TIKTOKEN_PRETOKENIZERS))
def test_tiktoken_pretokenizers_cut_like_the_reference(text, name):
    # The core runs hand-written scanners; the reference runs the published
    # regex in Python's `regex` module.
    tok = bytepair.Tokenizer(
        bytepair.BPEModel(
            tuple(bytes([b]) for b in range(256)), (), {}, bytepair.pretokenizers.resolve(name)
        )
    )
    assert tok.pretokenize(text) == reference.pretokenize(text, name)


@pytest.mark.parametrize("name", TIKTOKEN_PRETOKENIZERS + ["gpt2"])
def test_scanners_cut_real_text_like_the_reference(shared_data, name):
    tok = bytepair.Tokenizer(
        bytepair.BPEModel(
            tuple(bytes([b]) for b in range(256)), (), {}, bytepair.pretokenizers.resolve(name)
        )
    )
    for path in sorted((shared_data / "corpus" / "small").glob("*.txt")):
        text = path.read_text(encoding="utf-8")[:200_000]
        assert tok.pretokenize(text) == reference.pretokenize(text, name), path.name
