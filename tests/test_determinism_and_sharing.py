"""Same merges whatever the thread count and corpus order; a Tokenizer can be
shared by threads, pickled, deep-copied, and used in forked children."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import multiprocessing
import os
import pickle
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair.corpus.dataset import tokenizer_fingerprint
from bytepair.model import BPEModel
from strategies import corpora

TEXT = "It was the best of times, it was the worst of times; 日本 ünïcödé. " * 50


@given(corpora, st.randoms(use_true_random=False))
def test_same_merges_whatever_the_corpus_order(texts, rng):
    shuffled = list(texts)
    rng.shuffle(shuffled)
    a = bytepair.train(texts, 300, progress=False)
    b = bytepair.train(shuffled, 300, progress=False)
    assert a.merges == b.merges
    assert a.training.merge_counts == b.training.merge_counts


TRAIN_SCRIPT = """
import json, sys, bytepair
docs = [sys.argv[1][i:i + 997] for i in range(0, len(sys.argv[1]), 997)]
tok = bytepair.train(docs * 3, 400, progress=False)
print(json.dumps([[l.hex(), r.hex()] for l, r in tok.merges]))
"""


def test_same_merges_whatever_the_thread_count():
    results = []
    for threads in ("1", "2", "4"):
        env = dict(os.environ, RAYON_NUM_THREADS=threads)
        out = subprocess.run(
            [sys.executable, "-c", TRAIN_SCRIPT, TEXT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        results.append(json.loads(out.stdout))
    assert results[0] == results[1] == results[2]


def test_tokenizer_is_shared_by_threads():
    tok = bytepair.train([TEXT], 400, progress=False)
    texts = [TEXT[i:] for i in range(0, 2000, 37)]
    expected = [tok.encode_ordinary(t) for t in texts]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(tok.encode_ordinary, texts))
        batches = list(pool.map(lambda _: tok.encode_ordinary_batch(texts), range(8)))
    assert got == expected
    assert all(b == expected for b in batches)


def test_many_tokenizers_on_one_thread():
    """Each thread keeps the ints and the piece cache of a few vocabularies;
    more take turns, and clearing a cache changes no id."""
    toks = [bytepair.train([TEXT], 260 + 6 * k, progress=False) for k in range(6)]
    texts = [TEXT[:500], TEXT[500:1500]]
    expected = [[tok.encode_ordinary(t) for t in texts] for tok in toks]
    for round_ in range(3):
        for tok, want in zip(toks, expected):
            assert [tok.encode_ordinary(t) for t in texts] == want
            assert tok.encode_ordinary_batch(texts) == want
            if round_ == 1:
                tok.clear_cache()
    assert len({tuple(e[1]) for e in expected}) == 6  # six different vocabularies


def test_pickle_and_deepcopy_keep_the_tokenizer():
    tok = bytepair.train([TEXT], 400, special_tokens=["<s>"], progress=False)
    for clone in (pickle.loads(pickle.dumps(tok)), copy.deepcopy(tok), copy.copy(tok)):
        assert clone.merges == tok.merges
        assert clone.special_tokens == tok.special_tokens
        assert clone.encode(TEXT + "<s>", allowed_special="all") == tok.encode(
            TEXT + "<s>", allowed_special="all"
        )


def test_copies_and_pickles_keep_the_training_report():
    tok = bytepair.train([TEXT], 300, progress=False)
    assert tok.training is not None
    for clone in (pickle.loads(pickle.dumps(tok)), copy.deepcopy(tok), copy.copy(tok)):
        assert clone.training == tok.training
    loaded = bytepair.Tokenizer(tok.model)
    assert pickle.loads(pickle.dumps(loaded)).training is None


def test_model_mappings_are_read_only():
    """A Tokenizer is immutable: its model's special tokens cannot be changed
    behind the core's back (nor those of a shared, cached tokenizer)."""
    specials = {"<s>": 0, "</s>": 1}
    tok = bytepair.train([TEXT], 300, special_tokens=list(specials), progress=False)
    model = tok.model
    with pytest.raises(AttributeError):  # a read-only mapping has no pop
        model.special_tokens.pop("<s>")  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        model.special_tokens["<x>"] = 5  # type: ignore[index]
    with pytest.raises(TypeError):
        model.special_token_strip["<s>"] = (True, True)  # type: ignore[index]
    assert tok.special_tokens == specials
    tok.special_tokens.pop("<s>")  # the property returns a copy
    assert tok.special_tokens == specials and tok.special_tokens_set == set(specials)
    # A caller's dict is copied: changing it later changes no model.
    given = dict(model.special_tokens)
    other = BPEModel(model.tokens, model.merges, given, model.pretokenizer)
    given.pop("<s>")
    assert other.special_tokens == specials and list(other.special_tokens) == list(specials)


def test_model_with_read_only_mappings_pickles_copies_and_compares():
    base = bytepair.train([TEXT], 300, special_tokens=["<s>", "</s>"], progress=False).model
    model = dataclasses.replace(base, special_token_strip={"<s>": (False, True)})
    assert model.special_token_strip == {"<s>": (False, True)}
    assert model.special_tokens == base.special_tokens == {"<s>": 0, "</s>": 1}
    for clone in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model), copy.copy(model)):
        assert clone == model and clone is not model
        assert list(clone.special_tokens) == list(model.special_tokens)
        assert type(clone.special_tokens) is type(model.special_tokens)
    assert model != base
    # The dataset fingerprint (which reads the model) is that of plain dicts.
    with_dicts = dataclasses.replace(model)
    assert tokenizer_fingerprint(bytepair.Tokenizer(model)) == tokenizer_fingerprint(
        bytepair.Tokenizer(with_dicts)
    )


def test_cached_encoding_cannot_be_changed(shared_data, monkeypatch):
    directory = shared_data / "models" / "tiktoken"
    if not (directory / "cl100k_base.tiktoken").is_file():
        pytest.skip("cl100k_base.tiktoken not found")
    monkeypatch.setenv("BYTEPAIR_TIKTOKEN_DIR", str(directory))
    first = bytepair.get_encoding("cl100k_base")
    with pytest.raises(AttributeError):
        first.model.special_tokens.pop("<|endofprompt|>")  # type: ignore[attr-defined]
    again = bytepair.get_encoding("cl100k_base")
    assert "<|endofprompt|>" in again.special_tokens_set
    text = "a<|endofprompt|>"
    assert pickle.loads(pickle.dumps(again)).encode(text, allowed_special="all") == again.encode(
        text, allowed_special="all"
    )


def _encode_in_child(tok, texts, queue):
    queue.put(tok.encode_ordinary_batch(texts))


def test_forked_child_can_encode_batches():
    tok = bytepair.train([TEXT], 400, progress=False)
    texts = [TEXT] * 16
    expected = tok.encode_ordinary_batch(texts)  # starts the parent's thread pool
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_encode_in_child, args=(tok, texts, queue), daemon=True)
    child.start()
    try:
        result = queue.get(timeout=60)  # a child stuck on the parent's thread pool never answers
    finally:
        child.join(timeout=10)
        if child.is_alive():
            child.kill()
    assert result == expected
    assert child.exitcode == 0


def test_large_batches_equal_text_by_text_encoding():
    """Batches of 1 MiB and more are encoded in groups, taken from the back by
    the pool and from the front by the calling thread, which hands over the
    groups done (lists, or runs of the flat array), in any order, between its
    own: same ids, same order."""
    tok = bytepair.train([TEXT], 400, special_tokens=["<|end|>"], progress=False)
    texts = [TEXT[i:] * 2 + "<|end|>" + TEXT[: i % 97] for i in range(0, 3000, 7)] + ["", "x"]
    assert sum(len(t.encode()) for t in texts) > 1 << 20  # the pipelined path
    with_specials = [tok.encode(t, allowed_special="all") for t in texts]
    assert tok.encode_batch(texts, allowed_special="all") == with_specials
    assert tok.encode_ordinary_batch(texts) == [tok.encode_ordinary(t) for t in texts]
    ids, offsets = tok.encode_batch_to_numpy(texts, allowed_special="all")
    assert offsets.tolist() == [0, *itertools.accumulate(map(len, with_specials))]
    assert ids.tolist() == [i for one in with_specials for i in one]


def test_calls_in_turn_on_one_thread_give_the_ids_of_a_batch():
    # The list and numpy calls of one thread reuse one buffer for the ids: a
    # long text after short ones, a short one after it, specials or none,
    # and BPE-dropout (which hands back a buffer of its own) in between.
    tok = bytepair.train([TEXT], 400, special_tokens=["<|end|>"], progress=False)
    texts = [TEXT * 40, "a", TEXT[:7] + "<|end|>" + TEXT[:30], "", TEXT, "x" * 5000]
    want = tok.encode_batch(texts, allowed_special="all")
    for _ in range(2):
        for text, ids in reversed(list(zip(texts, want))):
            assert tok.encode(text, allowed_special="all") == ids
            assert tok.encode_to_numpy(text, allowed_special="all").tolist() == ids
            if "<|end|>" not in text:
                assert tok.encode_ordinary(text) == ids
            tok.encode(text, allowed_special="all", dropout=0.5, seed=1)
